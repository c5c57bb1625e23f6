package dataplane

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Given a machine where the pod network cannot be made local (this test
// binary run again in a network namespace of its own, without
// CAP_NET_ADMIN, as a non-root user's run would be)
// When the data-plane package starts
// Then it fails, and its message says how to fix it: a package that
// cannot run its scenarios never reports them as passed.
func TestPrerequisite_podNetworkNotLocal_failsThePackageWithTheFix(t *testing.T) {
	var missing []string
	for _, tool := range []string{"unshare", "setpriv", "ip", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("this test needs %s to run the package without CAP_NET_ADMIN: apt-get install util-linux iproute2", strings.Join(missing, ", "))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctxFor(t), time.Minute)
	defer cancel()
	// A new network namespace with its loopback device up is a machine
	// without the route that makes podNetwork local (with loopback down,
	// any address binds); without CAP_NET_ADMIN the package cannot add it.
	cmd := exec.CommandContext(ctx, "unshare", "--net", "sh", "-c",
		`ip link set lo up && exec setpriv --bounding-set=-net_admin --inh-caps=-net_admin "$0" -test.run='^$' -test.count=1`, self)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("running the package without CAP_NET_ADMIN: %v, want it to exit non-zero\n%s", err, out)
	}
	for _, want := range []string{"ip route add local " + podNetwork + " dev lo", "root"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the package's output does not give the fix (%q):\n%s", want, out)
		}
	}
}
