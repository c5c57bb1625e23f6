package restart

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/test/managerproc"
	"github.com/sluice-dev/sluice/test/poll"
)

// sluice is one sluice manager process.
type sluice struct {
	*managerproc.Process
	// points is the file the kill points reached are recorded in.
	points string
}

// startSluice runs the sluice binary in local mode as process name, with
// extra flags, and waits until its webhooks are registered and it is ready.
func startSluice(t *testing.T, name string, extra ...string) *sluice {
	t.Helper()
	return startSluiceAt(t, name, "", nil, extra...)
}

// startSluiceAt is startSluice with the process blocking at the kill points
// given (for objects in namespace ns), until it is killed there.
func startSluiceAt(t *testing.T, name, ns string, points []killpoint.Point, extra ...string) *sluice {
	t.Helper()
	s := &sluice{points: filepath.Join(t.TempDir(), name+".points")}
	var env []string
	if len(points) > 0 {
		names := make([]string, len(points))
		for i, p := range points {
			names[i] = string(p)
		}
		env = []string{killpoint.EnvPoint + "=" + strings.Join(names, ","), killpoint.EnvNamespace + "=" + ns, killpoint.EnvFile + "=" + s.points}
	}
	s.Process = managerproc.Start(t, managerproc.Options{
		Name: name, Binary: suite.binary, Kubeconfig: suite.kubeconfig, Client: suite.c, Flags: extra, Env: env,
	})
	return s
}

// reached waits until the process blocks at one or more kill points and
// returns them, failing the test if none is reached in time.
func (s *sluice) reached(t *testing.T, waiting []killpoint.Point) []killpoint.Point {
	t.Helper()
	var got []killpoint.Point
	poll.Until(t, fmt.Sprintf("sluice %s to reach one of the kill points %v", s.Name, waiting), func() (bool, string) {
		select {
		case <-s.Exited():
			t.Fatalf("sluice %s exited before reaching a kill point:\n%s", s.Name, s.Tail())
		default:
		}
		b, err := os.ReadFile(s.points)
		if err != nil {
			return false, err.Error()
		}
		got = got[:0]
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if p, _, ok := strings.Cut(line, " "); ok && !slices.Contains(got, killpoint.Point(p)) {
				got = append(got, killpoint.Point(p))
			}
		}
		return len(got) > 0, string(b)
	})
	return got
}
