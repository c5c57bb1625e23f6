package helm

import (
	"os/exec"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// TestChart_deploymentArgs_acceptedByTheManager parses the arguments the
// chart gives the manager, for each value set, with the real sluice
// binary's flags: -h last makes it exit 0 once every flag before it parsed,
// and 2 on an unknown or malformed one.
func TestChart_deploymentArgs_acceptedByTheManager(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "sluice")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/sluice-dev/sluice/cmd/sluice")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building sluice: %v\n%s", err, out)
	}
	for name, set := range valueSets {
		t.Run(name, func(t *testing.T) {
			var d appsv1.Deployment
			render(t, "sluice-system", set...).get(t, "Deployment", "sluice", &d)
			args := d.Spec.Template.Spec.Containers[0].Args
			out, err := exec.CommandContext(t.Context(), bin, append(args, "-h")...).CombinedOutput()
			if err != nil {
				t.Errorf("sluice %v: %v\n%s", args, err, out)
			}
		})
	}
}
