package gitops

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/managerproc"
)

// Webhooks on every replica: two sluice processes under leader election,
// the GitGate polling once an hour. A label delivery to the standby moves
// the release within seconds (the standby writes the hint on the GitGate,
// the leader acts on it); then the leader is killed mid-release, and a
// delivery to the replica left, once it leads, moves the release on again.
func TestGitGate_webhookToAnyReplica_reachesTheLeader(t *testing.T) {
	const lease = 4 * time.Second
	secret := []byte("ha-hook-secret")
	// The package's in-process sluice steps aside for the two replicas.
	suite.stopManager()
	t.Cleanup(func() {
		if err := startManager(context.Background()); err != nil {
			t.Errorf("restarting the suite's sluice: %v", err)
		}
	})
	flags := []string{"--leader-elect", "--leader-election-namespace=default", "--leader-election-lease-duration=" + lease.String(), "--git-allow-insecure-http"}
	a := startReplica(t, "sluice-ha-a", flags...)
	b := startReplica(t, "sluice-ha-b", flags...)
	leader, standby := electedPair(t, a, b)

	w := newHookedWorld(t, secret)
	pr, merge := w.mergePullRequest("Bump checkout to v2", "dev", "reviewer", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitStatus(merge, "pending", "step 1/3 paused: add label sluice/approve to continue")
	ctx := context.Background()

	// When the label is added and GitHub delivers it to the standby.
	w.afterPause()
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "reviewer")
	delivered := time.Now()
	d, err := w.gh.DeliverLabel(ctx, hookURL(standby), secret, ghRepo, pr, "sluice/approve", "reviewer", true)
	if err != nil || d.Status != http.StatusOK {
		t.Fatalf("delivery to the standby answered %d (delivery %s), %v; want 200", d.Status, d.ID, err)
	}
	// Then the standby recorded the hint on the gate, and the leader acted
	// on it within seconds: step 2, approved by the reviewer.
	if v := w.getGate().Annotations[meta.ReconcileRequestAnnotation]; v == "" {
		t.Fatalf("the standby left no %s on the gate", meta.ReconcileRequestAnnotation)
	}
	w.waitStep(2, rolloutsv1beta1.CanaryStepStatePaused)
	if took := time.Since(delivered); took > 10*time.Second {
		t.Errorf("step 2 started %s after the delivery to the standby, want within seconds", took)
	}
	w.waitStatus(merge, "pending", "step 2/3 paused: add label sluice/approve to continue")
	if got := w.approvals(); len(got) != 1 || got[0].By != "reviewer" || got[0].Via != "github-label" {
		t.Fatalf("approvals = %+v, want one by reviewer via github-label", got)
	}
	if !leader.Leader() || standby.Leader() {
		t.Fatalf("leadership moved during the story: %s leads %v, %s leads %v", leader.Name, leader.Leader(), standby.Name, standby.Leader())
	}

	// When the leader is killed mid-release, and the replica left takes
	// over.
	leader.Kill(t)
	killed := time.Now()
	// In a cluster the webhook Service stops sending to a dead pod; here
	// each replica registered its own webhooks, so the dead one's go.
	leader.DeleteWebhooks(ctx)
	w.eventually("the standby leads", func() (bool, string) { return standby.Leader(), "" })
	if took := time.Since(killed); took > 3*lease {
		t.Errorf("the standby took over %s after the kill, more than three leases (%s)", took, lease)
	}
	// Its first reconcile of the gate (it reads every gate as it starts)
	// changes nothing: the label on the pull request predates step 2. Let it
	// pass, so that what follows is the delivery's doing (the next poll is
	// an hour away).
	for range 3 {
		w.afterSecond()
	}
	if ro := w.rollout(); ro.Status.CurrentStepIndex != 2 {
		t.Fatalf("step %d after the takeover, want still 2", ro.Status.CurrentStepIndex)
	}

	// When the label is added again and GitHub delivers it to the new
	// leader.
	w.afterPause()
	w.gh.RemoveLabel(ghRepo, pr, "sluice/approve", "reviewer")
	w.gh.AddLabel(ghRepo, pr, "sluice/approve", "reviewer")
	delivered = time.Now()
	d, err = w.gh.DeliverLabel(ctx, hookURL(standby), secret, ghRepo, pr, "sluice/approve", "reviewer", true)
	if err != nil || d.Status != http.StatusOK {
		t.Fatalf("delivery to the new leader answered %d (delivery %s), %v; want 200", d.Status, d.ID, err)
	}
	// Then the release completes: every pod on v2, success on the merge.
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	if took := time.Since(delivered); took > 20*time.Second {
		t.Errorf("the release completed %s after the delivery to the new leader, want within seconds", took)
	}
	w.waitDeployment("v2", 4)
	w.waitStatus(merge, "success", "released: 3/3 steps done")
	if got := w.approvals(); len(got) != 2 || got[1].Step != 2 || got[1].By != "reviewer" {
		t.Fatalf("approvals = %+v, want step 2 approved by reviewer too", got)
	}
}

// replica is one sluice manager process of the HA story.
type replica = managerproc.Process

// sluiceBinary builds the sluice command once for the package.
var sluiceBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "sluice-gitops-bin-")
	if err != nil {
		return "", err
	}
	return managerproc.Build(dir)
})

// startReplica runs sluice in local mode as process name, serving GitHub
// webhooks, and waits until it is ready (a standby is ready too: its
// webhooks and the GitHub receiver run on every replica).
func startReplica(t *testing.T, name string, extra ...string) *replica {
	t.Helper()
	bin, err := sluiceBinary()
	if err != nil {
		t.Fatal(err)
	}
	s := managerproc.Start(t, managerproc.Options{
		Name: name, Binary: bin, Kubeconfig: suite.kubeconfig, Client: suite.c, Flags: extra,
		GitHubHook: true, Ready: managerproc.Serving, Timeout: 2 * time.Minute, TailBytes: 6000,
	})
	t.Cleanup(func() {
		s.Kill(t)
		s.DeleteWebhooks(context.Background())
		if t.Failed() {
			t.Logf("the log of %s ends:\n%s", name, s.Tail())
		}
	})
	return s
}

// electedPair waits until exactly one of a and b leads, and returns the
// leader and the standby.
func electedPair(t *testing.T, a, b *replica) (leader, standby *replica) {
	t.Helper()
	(&world{t: t}).eventually("one leader", func() (bool, string) {
		la, lb := a.Leader(), b.Leader()
		switch {
		case la && !lb:
			leader, standby = a, b
		case lb && !la:
			leader, standby = b, a
		}
		return leader != nil, fmt.Sprintf("%s leads %v, %s leads %v", a.Name, la, b.Name, lb)
	})
	return leader, standby
}

// hookURL is the replica's GitHub webhook endpoint.
func hookURL(s *replica) string {
	return "http://127.0.0.1:" + strconv.Itoa(s.GitHubHook) + app.GitHubWebhookPath
}
