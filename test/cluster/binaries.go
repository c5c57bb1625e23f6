package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// EnvControlPlaneDir names the environment variable that points at a
// directory of prebuilt control-plane binaries; when set, Binaries returns
// it instead of running the build script.
const EnvControlPlaneDir = "SLUICE_CONTROLPLANE_DIR"

// modulePath is the module whose checkout holds the build script.
const modulePath = "github.com/sluice-dev/sluice"

// buildScript is the build script's path relative to the module root.
const buildScript = "hack/controlplane/build.sh"

// Names of the binaries a cluster runs.
const (
	etcdBinary              = "etcd"
	apiserverBinary         = "kube-apiserver"
	controllerManagerBinary = "kube-controller-manager"
	schedulerBinary         = "kube-scheduler"
	kwokBinary              = "kwok"
)

// Binaries returns the directory holding the control-plane binaries:
// $SLUICE_CONTROLPLANE_DIR if set, otherwise the directory
// hack/controlplane/build.sh prints, found by walking up from the working
// directory to the sluice module root. The script builds the binaries into
// a cache on first use (minutes) and returns at once afterwards; its
// progress goes to progress, which may be nil.
func Binaries(ctx context.Context, progress io.Writer) (string, error) {
	if dir := os.Getenv(EnvControlPlaneDir); dir != "" {
		return dir, checkBinaries(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the build script: %w", err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("finding the build script (or set %s): %w", EnvControlPlaneDir, err)
	}
	if progress == nil {
		progress = io.Discard
	}
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(root, buildScript))
	cmd.Dir = root
	cmd.Stdout = &stdout
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("running %s: %w", buildScript, err)
	}
	dir := lastLine(stdout.String())
	if dir == "" {
		return "", fmt.Errorf("running %s: it printed no directory", buildScript)
	}
	return dir, checkBinaries(dir)
}

// checkBinaries verifies that dir holds every binary and kwok's stages.
func checkBinaries(dir string) error {
	var missing []string
	for _, name := range []string{etcdBinary, apiserverBinary, controllerManagerBinary, schedulerBinary, kwokBinary, kwokStagesFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("control-plane directory %s lacks %s", dir, strings.Join(missing, ", "))
	}
	return nil
}

// lastLine returns the last non-empty line of s, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// moduleRoot walks up from dir to the directory whose go.mod declares the
// sluice module.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && goModModule(data) == modulePath {
			return d, nil
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("reading %s: %w", filepath.Join(d, "go.mod"), err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod for module %s above %s", modulePath, dir)
		}
		d = parent
	}
}

// goModModule returns the module path a go.mod file declares, or "".
func goModModule(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`)
		}
	}
	return ""
}
