package flux

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

// EnvFluxDir names the environment variable that points at a directory of
// prebuilt Flux binaries and CRDs (the layout hack/flux/build.sh writes);
// when set, Binaries returns it instead of asking the build script.
const EnvFluxDir = "SLUICE_FLUX_DIR"

// modulePath is the module whose checkout holds the build script.
const modulePath = "github.com/sluice-dev/sluice"

// buildScript is the build script's path relative to the module root.
const buildScript = "hack/flux/build.sh"

// buildHint is the fix quoted when the binaries are missing.
const buildHint = "run `make flux` (or hack/flux/build.sh) to build Flux's controllers into the cache; the first build takes about ten minutes"

// notBuilt is the exit status of build.sh --check when the cache lacks
// something.
const notBuilt = 3

// The binaries Start runs, and the CRD folder, inside the binaries
// directory.
const (
	sourceControllerBinary    = "source-controller"
	kustomizeControllerBinary = "kustomize-controller"
	crdDir                    = "crds"
)

// Binaries returns the directory holding Flux's binaries and CRDs:
// $SLUICE_FLUX_DIR if set, otherwise the cache directory of the versions
// hack/flux/build.sh pins, found by walking up from the working directory to
// the sluice module root. It never builds: when the binaries are missing the
// error says how to build them. A build in progress (`make flux` in another
// terminal) is waited for.
func Binaries(ctx context.Context) (string, error) {
	if dir := os.Getenv(EnvFluxDir); dir != "" {
		return dir, checkBinaries(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the build script: %w", err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("finding the build script (or set %s): %w", EnvFluxDir, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(root, buildScript), "--check")
	cmd.Dir = root
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err = cmd.Run()
	dir := lastLine(stdout.String())
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == notBuilt:
		return "", fmt.Errorf("flux binaries are not built in %s: %s", dir, buildHint)
	case err != nil:
		return "", fmt.Errorf("running %s --check: %w\n%s", buildScript, err, stderr.String())
	case dir == "":
		return "", fmt.Errorf("running %s --check: it printed no directory", buildScript)
	}
	return dir, checkBinaries(dir)
}

// Build builds Flux's binaries and CRDs into the cache with
// hack/flux/build.sh when they are not there yet (the first time takes
// many minutes) and returns their directory, as Binaries would afterwards;
// the script's progress goes to progress, which may be nil. With
// $SLUICE_FLUX_DIR set it builds nothing and checks that directory. Tests
// use Binaries, which never builds; the demo builds.
func Build(ctx context.Context, progress io.Writer) (string, error) {
	if dir := os.Getenv(EnvFluxDir); dir != "" {
		return dir, checkBinaries(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the build script: %w", err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		return "", fmt.Errorf("finding the build script (or set %s): %w", EnvFluxDir, err)
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

// checkBinaries verifies that dir holds both binaries and the CRDs.
func checkBinaries(dir string) error {
	var missing []string
	for _, name := range []string{sourceControllerBinary, kustomizeControllerBinary, crdDir} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("flux directory %s lacks %s: %s", dir, strings.Join(missing, ", "), buildHint)
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
