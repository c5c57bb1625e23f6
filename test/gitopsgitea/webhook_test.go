package gitopsgitea

import (
	"context"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
	"github.com/sluice-dev/sluice/test/gitopsstory"
	"github.com/sluice-dev/sluice/test/poll"
)

// Story: Gitea's webhook wakes the gate. The gate reads its branch only
// every 10 minutes; the repository's webhook (type gitea, signed with the
// gate's webhookSecretRef) points at sluice's /hook/gitea. Alice's approval
// label on the merged pull request moves the release on within the test's
// deadline (far less than the interval): the delivery, checked against the
// secret, woke the gate.
func TestGitGate_onGitea_webhookDeliveryWakesTheGate(t *testing.T) {
	ctx := poll.Context(t)
	const secret = "gitea-webhook-secret"
	s := openShop(t, shopOptions{
		prefix: "gitea-hook",
		prepare: func(ctx context.Context, ns string, repo *giteatest.Repo) error {
			if err := suite.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hook"}, StringData: map[string]string{"token": secret}}); err != nil {
				return err
			}
			_, err := repo.CreateWebhook(ctx, suite.alice, giteatest.Webhook{URL: suite.hookURL, Secret: secret,
				Events: []string{"push", "pull_request", "pull_request_label", "pull_request_sync"}})
			return err
		},
		gate: func(g *gitopsv1alpha1.GitGate) {
			g.Spec.Interval = metav1.Duration{Duration: 10 * time.Minute}
			g.Spec.WebhookSecretRef = &meta.LocalObjectReference{Name: "hook"}
		},
	})
	ns, repo, pr, paused := s.ns, s.repo, s.pr, s.paused

	gitopsstory.AfterPause(t, paused)
	if err := repo.AddLabels(ctx, suite.alice, pr.Index, "sluice/approve"); err != nil {
		t.Fatal(err)
	}
	stage.WaitStep(t, ns, 2)
	if got := stage.Approvals(t, ns); len(got) != 1 || got[0].By != "alice" || got[0].Via != "gitea-label" {
		t.Fatalf("approvals = %+v, want step 1 by alice via gitea-label", got)
	}
}
