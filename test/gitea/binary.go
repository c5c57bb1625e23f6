package gitea

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// EnvDir names the environment variable that points at a directory holding a
// prebuilt gitea binary and its static/ files; when set, Start uses it
// instead of asking hack/gitea/build.sh.
const EnvDir = "SLUICE_GITEA_DIR"

// buildScript is the build script's path relative to the module root.
const buildScript = "hack/gitea/build.sh"

// exitNotBuilt is the build script's exit status under --check when nothing
// is built yet.
const exitNotBuilt = 3

// NotBuiltError is Start's error when Gitea has not been built. Its message
// names the fix.
type NotBuiltError struct {
	// Dir is where the build is expected.
	Dir string
}

// Error implements error.
func (e *NotBuiltError) Error() string {
	return fmt.Sprintf("gitea is not built (expected in %s): run `make gitea` first "+
		"(it builds Gitea from the Go module proxy into the cache; the first build takes many minutes), "+
		"or set %s to a directory with a gitea binary and its static/ files", e.Dir, EnvDir)
}

// buildDir returns the directory of the gitea binary and its static files:
// $SLUICE_GITEA_DIR, or what "hack/gitea/build.sh --check" prints, the script
// run from the root of the module around the working directory.
func buildDir(ctx context.Context) (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		return dir, checkBuild(dir)
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", fmt.Errorf("finding the build script (or set %s): %w", EnvDir, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(root, buildScript), "--check")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, &stdout, &stderr
	err = cmd.Run()
	dir := lastLine(stdout.String())
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == exitNotBuilt {
		return "", &NotBuiltError{Dir: dir}
	}
	if err != nil {
		return "", fmt.Errorf("running %s --check: %w: %s", buildScript, err, strings.TrimSpace(stderr.String()))
	}
	if dir == "" {
		return "", fmt.Errorf("running %s --check: it printed no directory", buildScript)
	}
	return dir, checkBuild(dir)
}

// checkBuild verifies that dir holds the binary and the locale files Gitea
// refuses to start without.
func checkBuild(dir string) error {
	for _, p := range []string{"gitea", filepath.Join("static", "options", "locale")} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return &NotBuiltError{Dir: dir}
		}
	}
	return nil
}

// lastLine returns the last non-empty line of s, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// moduleRoot returns the root of the main module around the working
// directory (go test runs a test binary in its package's directory), as the
// go command finds it.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("the working directory is not inside the sluice module")
	}
	return filepath.Dir(gomod), nil
}
