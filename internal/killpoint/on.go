//go:build sluicetest

package killpoint

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Enabled is true: this build blocks at the point the environment names.
const Enabled = true

// Reached blocks forever when p is one of the points SLUICE_KILLPOINT
// names (comma-separated) and object (namespace/name) is in
// SLUICE_KILLPOINT_NAMESPACE (when set), after appending "<point> <object>"
// to SLUICE_KILLPOINT_FILE. The test that set them kills the process there.
// Every goroutine reaching a named point blocks, so with several points
// named none is passed while the process waits to be killed.
func Reached(ctx context.Context, p Point, object string) {
	if !slices.Contains(strings.Split(os.Getenv(EnvPoint), ","), string(p)) {
		return
	}
	if ns := os.Getenv(EnvNamespace); ns != "" && !strings.HasPrefix(object, ns+"/") {
		return
	}
	ctrl.LoggerFrom(ctx).Info("Kill point reached; blocking until killed", "point", p, "object", object)
	if path := os.Getenv(EnvFile); path != "" {
		if err := appendLine(path, fmt.Sprintf("%s %s\n", p, object)); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Recording the kill point", "file", path)
		}
	}
	select {} // until SIGKILL
}

// ReachedIf is Reached when cond holds.
func ReachedIf(ctx context.Context, cond bool, p Point, object string) {
	if cond {
		Reached(ctx, p, object)
	}
}

// After is Reached when err is nil; it returns err.
func After(ctx context.Context, p Point, object string, err error) error {
	if err == nil {
		Reached(ctx, p, object)
	}
	return err
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
