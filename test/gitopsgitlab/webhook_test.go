package gitopsgitlab

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/test/gitlabfake"
	"github.com/sluice-dev/sluice/test/gitopsstory"
)

// Story: GitLab's webhooks wake the gate. The gate reads its branch and
// merge requests only every 10 minutes; the project has a webhook pointing
// at sluice's /hook/gitlab with the gate's webhookSecretRef token as its
// secret token (X-Gitlab-Token), and two more with tokens that are not the
// secret: one differing in its last character, one a prefix of it (the
// receiver compares SHA-256 digests of the tokens in constant time, so
// neither the secret's content nor its length leaks). Alice's label on the
// merged merge request moves the release on, and Dave's "/sluice approve"
// note completes it, each within the test's deadline (far less than the
// interval): the deliveries woke the gate. Every delivery with the secret
// is accepted; every other one is refused with 401.
func TestGitGate_onGitLab_webhookDeliveriesWakeTheGate_otherTokensRefused(t *testing.T) {
	const secret = "gitlab-webhook-secret"
	wrong := []string{secret[:len(secret)-1] + "T", secret[:len(secret)-1]}
	s := openShop(t, shopOptions{
		prefix: "gitlab-hook",
		prepare: func(ctx context.Context, ns string, gl *gitlabfake.Server) error {
			if err := suite.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hook"}, StringData: map[string]string{"token": secret}}); err != nil {
				return err
			}
			gl.AddHook(project, suite.hookURL, secret)
			for _, token := range wrong {
				gl.AddHook(project, suite.hookURL, token)
			}
			return nil
		},
		gate: func(g *gitopsv1alpha1.GitGate) {
			g.Spec.Interval = metav1.Duration{Duration: 10 * time.Minute}
			g.Spec.WebhookSecretRef = &meta.LocalObjectReference{Name: "hook"}
		},
	})
	ns, iid := s.ns, s.mr.IID

	// A Merge Request Hook (labels changed) moves the release on.
	gitopsstory.AfterPause(t, s.paused)
	s.gl.AddLabels(project, iid, "alice", "sluice/approve")
	second := stage.WaitStep(t, ns, 2)
	if got := stage.Approvals(t, ns); len(got) != 1 || got[0].By != "alice" || got[0].Via != "gitlab-label" {
		t.Fatalf("approvals = %+v, want step 1 by alice via gitlab-label", got)
	}

	// A Note Hook completes it.
	gitopsstory.AfterPause(t, second)
	s.gl.CommentOnMergeRequest(project, iid, "dave", "/sluice approve")
	stage.WaitReleased(t, ns)
	waitStatus(t, s, s.released, "success", "released: 3/3 steps done")

	byEvent := map[string]int{}
	for _, d := range s.gl.Deliveries() {
		switch {
		case d.Token == secret && d.Status != http.StatusOK:
			t.Errorf("%s delivery %s with the secret answered %d, want 200", d.Event, d.UUID, d.Status)
		case d.Token != secret && d.Status != http.StatusUnauthorized:
			t.Errorf("%s delivery %s with token %q answered %d, want 401", d.Event, d.UUID, d.Token, d.Status)
		case d.Token == secret:
			byEvent[d.Event]++
		}
	}
	for _, event := range []string{gitlabfake.EventPush, gitlabfake.EventMergeRequest, gitlabfake.EventNote} {
		if byEvent[event] == 0 {
			t.Errorf("no %s accepted: %v", event, byEvent)
		}
	}
}
