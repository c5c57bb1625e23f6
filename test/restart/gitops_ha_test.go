package restart

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/gitserver"
	"github.com/sluice-dev/sluice/test/managerproc"
)

// Given two sluice replicas with leader election, each serving GitHub
// webhooks, and a GitGate polling once an hour bound to a release paused
// at step 1 (the commit named by the Deployment's sluice.dev/revision)
// When GitHub delivers the sluice/approve label to the standby
// Then the leader approves step 1 within seconds (the standby wrote the
// hint on the GitGate)
// When the leader is killed mid-release and the label delivered to the
// replica left, once it leads
// Then step 2 is approved too and the release completes.
//
// test/gitops tells the same story with real Flux applying the merges
// (TestGitGate_webhookToAnyReplica_reachesTheLeader); this one needs only
// the control plane.
func TestLeaderElection_gitHubWebhookToTheStandby_reachesTheLeader(t *testing.T) {
	const lease = 4 * time.Second
	secret := []byte("ha-secret")
	t.Cleanup(func() { deleteWebhooks(t, "sluice-gh-a", "sluice-gh-b") })
	flags := []string{"--leader-elect", "--leader-election-namespace=default", "--leader-election-lease-duration=" + lease.String(), "--git-allow-insecure-http"}
	hookA, hookB := managerproc.FreePort(t), managerproc.FreePort(t)
	a := startSluice(t, "sluice-gh-a", append(flags, "--github-webhook-bind-address=127.0.0.1:"+strconv.Itoa(hookA))...)
	b := startSluice(t, "sluice-gh-b", append(flags, "--github-webhook-bind-address=127.0.0.1:"+strconv.Itoa(hookB))...)
	hooks := map[*sluice]string{a: hookURL(hookA), b: hookURL(hookB)}
	var leader, standby *sluice
	eventually(t, "one leader", func() (bool, string) {
		la, lb := a.Leader(), b.Leader()
		switch {
		case la && !lb:
			leader, standby = a, b
		case lb && !la:
			leader, standby = b, a
		}
		return leader != nil, fmt.Sprintf("a leader %v, b leader %v", la, lb)
	})
	for _, port := range []int{hookA, hookB} {
		eventually(t, "GitHub receivers listening", func() (bool, string) {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
			if err != nil {
				return false, err.Error()
			}
			_ = c.Close()
			return true, ""
		})
	}

	// Given the Git repository, its pull requests on GitHub, and a release
	// of 4 pods in steps 1, 2 and all, bound to a GitGate.
	r := newRelease(t, 4, "1", "2", "100%")
	gitSrv, err := gitserver.Start(gitserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gitSrv.Close() })
	gh, err := githubfake.New(t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gh.Close)
	const repoName = "acme/web"
	gh.CreateRepo(repoName, "main", map[string]string{"README.md": "web\n"})
	gh.AddToken("bot-token", "sluice-bot")
	gh.SetRole(repoName, "sluice-bot", githubfake.RoleWrite)
	gh.SetRole(repoName, "reviewer", githubfake.RoleWrite)
	gitRepo, err := gitSrv.CreateRepo(r.ns+".git", "main")
	if err != nil {
		t.Fatal(err)
	}
	repo := gitopsworld.Repo{Git: gitRepo, GitHub: gh, Name: repoName}
	first, err := gitRepo.Commit("main", gitserver.Change{Message: "Add web", Files: map[string]string{"web.yaml": "image: web:v0\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Mirror("main", first); err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t)
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "github"}, StringData: map[string]string{"token": "bot-token"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "hook"}, Data: map[string][]byte{"token": secret}},
	} {
		if err := suite.c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	patch(t, r.rollout(), `{"metadata":{"labels":{"app":"web"}}}`)
	gate := &gitopsv1alpha1.GitGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "web"},
		Spec: gitopsv1alpha1.GitGateSpec{
			Git:              gitopsv1alpha1.GitSource{URL: gitRepo.URL(), Branch: "main"},
			GitHub:           &gitopsv1alpha1.GitHubRepository{Repository: repoName, APIURL: gh.URL, SecretRef: meta.LocalObjectReference{Name: "github"}},
			WebhookSecretRef: &meta.LocalObjectReference{Name: "hook"},
			RolloutSelector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Revision:         gitopsv1alpha1.RevisionSource{From: "Annotation"},
			Interval:         metav1.Duration{Duration: time.Hour},
		},
	}
	if err := suite.c.Create(ctx, gate); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		g := &gitopsv1alpha1.GitGate{}
		if err := suite.c.Get(context.Background(), types.NamespacedName{Namespace: r.ns, Name: "web"}, g); err == nil {
			t.Logf("gate annotations %v, status %+v", g.Annotations, g.Status)
		}
		events := &eventsv1.EventList{}
		if err := suite.c.List(context.Background(), events, client.InNamespace(r.ns)); err == nil {
			for _, e := range events.Items {
				t.Logf("event %s/%s %s: %s", e.Regarding.Kind, e.Regarding.Name, e.Reason, e.Note)
			}
		}
		for _, s := range []*sluice{a, b} {
			t.Logf("%s log ends:\n%s", s.Name, s.Tail())
		}
	})

	// When a pull request bumping web to v1 is merged and applied.
	pr, merge, err := repo.MergePullRequest("Bump web to v1", "dev", "reviewer", map[string]string{"web.yaml": "image: web:v1\n"})
	if err != nil {
		t.Fatal(err)
	}
	patch(t, r.deployment(), fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}},"spec":{"template":{"spec":{"containers":[{"name":"app","image":"web:v1"}]}}}}`,
		gitopsv1alpha1.DefaultRevisionAnnotation, merge))
	r.waitPaused(1)
	status := func() string {
		for _, s := range gh.Statuses(repoName, merge) {
			return s.State + " " + s.Description
		}
		return ""
	}
	eventually(t, "the pending status", func() (bool, string) {
		s := status()
		return s == "pending step 1/3 paused: add label sluice/approve to continue", s
	})

	// When the label is added and delivered to the standby.
	deliver := func(to *sluice) time.Time {
		t.Helper()
		paused := r.rollout().Status.CanaryStatus.LastUpdateTime.Time
		eventually(t, "the second after the pause", func() (bool, string) {
			return time.Now().Truncate(time.Second).After(paused), paused.String()
		})
		gh.RemoveLabel(repoName, pr, "sluice/approve", "reviewer")
		gh.AddLabel(repoName, pr, "sluice/approve", "reviewer")
		at := time.Now()
		d, err := gh.DeliverLabel(context.Background(), hooks[to], secret, repoName, pr, "sluice/approve", "reviewer", true)
		if err != nil || d.Status != http.StatusOK {
			t.Fatalf("delivery to %s answered %d, %v; want 200\n%s", to.Name, d.Status, err, to.Tail())
		}
		return at
	}
	delivered := deliver(standby)
	// Then the leader approves step 1 within seconds.
	r.waitPaused(2)
	if took := time.Since(delivered); took > 10*time.Second {
		t.Errorf("step 2 paused %s after the delivery to the standby, want within seconds", took)
	}
	g := &gitopsv1alpha1.GitGate{}
	if err := suite.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: "web"}, g); err != nil {
		t.Fatal(err)
	}
	if g.Annotations[meta.ReconcileRequestAnnotation] == "" || g.Status.LastHandledReconcileAt != g.Annotations[meta.ReconcileRequestAnnotation] {
		t.Errorf("gate annotation %q, last handled %q: want the standby's hint, handled by the leader",
			g.Annotations[meta.ReconcileRequestAnnotation], g.Status.LastHandledReconcileAt)
	}
	if !leader.Leader() {
		t.Fatalf("%s no longer leads", leader.Name)
	}

	// When the leader is killed and the replica left takes over.
	leader.Kill(t)
	// In a cluster the webhook Service stops sending to a dead pod; here
	// each replica registered its own webhooks, so the dead one's go.
	deleteWebhooks(t, leader.Name)
	eventually(t, "the standby leads", func() (bool, string) { return standby.Leader(), "" })
	time.Sleep(3 * time.Second) // its first reconcile of every gate passes; the next poll is an hour away
	if got := r.rollout().Status.CurrentStepIndex; got != 2 {
		t.Fatalf("step %d after the takeover, want still 2", got)
	}
	// And the label is delivered to it: the release completes.
	delivered = deliver(standby)
	r.waitCompleted("web:v1")
	if took := time.Since(delivered); took > 30*time.Second {
		t.Errorf("the release completed %s after the delivery to the new leader, want within seconds", took)
	}
	eventually(t, "the success status", func() (bool, string) {
		s := status()
		return strings.HasPrefix(s, "success "), s
	})
}

func hookURL(port int) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + app.GitHubWebhookPath
}

// patch merge-patches obj.
func patch(t *testing.T, obj client.Object, body string) {
	t.Helper()
	if err := suite.c.Patch(ctxFor(t), obj, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		t.Fatalf("patching %s: %v", obj.GetName(), err)
	}
}
