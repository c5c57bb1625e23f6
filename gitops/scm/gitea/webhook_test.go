package gitea

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/receiver"
	"github.com/sluice-dev/sluice/gitops/scm/gitea/webhook"
	giteatest "github.com/sluice-dev/sluice/test/gitea"
)

// hints is the receiver's Trigger, Secrets and Metrics for the webhook tests.
type hints struct {
	secret  string
	mu      sync.Mutex
	events  []receiver.Event
	reasons map[string]int
}

func (h *hints) Trigger(_ context.Context, e receiver.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *hints) SecretsFor(context.Context, string) ([][]byte, error) {
	return [][]byte{[]byte(h.secret)}, nil
}

func (h *hints) Delivery(accepted bool, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !accepted {
		h.reasons[reason]++
	}
}

// waitFor polls until an event matching ok arrived.
func (h *hints) waitFor(t *testing.T, what string, ok func(receiver.Event) bool) receiver.Event {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		h.mu.Lock()
		for _, e := range h.events {
			if ok(e) {
				h.mu.Unlock()
				return e
			}
		}
		got := append([]receiver.Event(nil), h.events...)
		reasons := h.reasons
		h.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no %s arrived; events %+v, refusals %v", what, got, reasons)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// count counts the events matching ok.
func (h *hints) count(ok func(receiver.Event) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, e := range h.events {
		if ok(e) {
			n++
		}
	}
	return n
}

func (h *hints) refusals(reason string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reasons[reason]
}

func TestWebhook_realGiteaDeliveries_becomeSignedHints(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)

	// Given sluice's Gitea receiver behind two webhooks of the repository, one sending JSON and
	// one a form, and a third webhook signing with a secret sluice does not know.
	got := &hints{secret: "hook-secret", reasons: map[string]int{}}
	handler, err := webhook.New(webhook.Options{Trigger: got, Secrets: got, Metrics: got})
	check(t, err)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	events := []string{"push", "pull_request", "pull_request_sync", "pull_request_label", "issue_comment", "pull_request_comment"}
	for _, h := range []giteatest.Webhook{
		{URL: srv.URL + "/json", Secret: "hook-secret", Events: events},
		{URL: srv.URL + "/form", Secret: "hook-secret", ContentType: "form", Events: []string{"push"}},
		{URL: srv.URL + "/forged", Secret: "not-the-secret", Events: []string{"push"}},
	} {
		_, err := repo.CreateWebhook(ctx, world.alice, h)
		check(t, err)
	}

	// When bob pushes a branch and opens a pull request, alice labels it, bob comments, pushes
	// again, and alice merges it.
	co, err := repo.Clone(ctx, world.bob)
	check(t, err)
	first, err := co.CommitAndPush(ctx, "v2", giteatest.Change{Write: map[string]string{"app.yaml": "v2\n"}, Message: "Ship v2"})
	check(t, err)
	pr, err := repo.OpenPullRequest(ctx, world.bob, "v2", repo.DefaultBranch, "Ship v2")
	check(t, err)
	check(t, repo.EnsureLabels(ctx, world.alice, "sluice/approve"))
	check(t, repo.AddLabels(ctx, world.alice, pr.Index, "sluice/approve"))
	_, err = repo.Comment(ctx, world.bob, pr.Index, "/sluice approve")
	check(t, err)
	second, err := co.CommitAndPush(ctx, "v2", giteatest.Change{Write: map[string]string{"app.yaml": "v2.1\n"}, Message: "Fix v2"})
	check(t, err)
	number := int(pr.Index)
	isPull := func(action, sender, sha string) func(receiver.Event) bool {
		return func(e receiver.Event) bool {
			return e.Kind == receiver.KindPullRequest && e.Action == action && e.Sender == sender && e.Number == number &&
				e.SHA == sha && e.Ref == repo.DefaultBranch && e.Repository == repo.FullName()
		}
	}
	// Gitea updates a pull request from a push in a queue of its own and
	// sends no synchronize for a pull request merged before that ran (seen
	// on a busy machine), so the merge waits for it, as a reviewer would.
	got.waitFor(t, "synchronize", isPull(receiver.ActionSynchronize, world.bob.Login, second))
	merged, err := repo.MergePullRequest(ctx, world.alice, pr.Index, sdk.MergeStyleMerge)
	check(t, err)

	// Then each arrives as the hint the GitHub receiver would give, from the right user.
	got.waitFor(t, "push of the branch", func(e receiver.Event) bool {
		return e.Kind == receiver.KindPush && e.Ref == "refs/heads/v2" && e.SHA == first && e.Sender == world.bob.Login
	})
	got.waitFor(t, "opened", isPull(receiver.ActionOpened, world.bob.Login, first))
	got.waitFor(t, "labeled", isPull(receiver.ActionLabeled, world.alice.Login, first))
	got.waitFor(t, "comment", func(e receiver.Event) bool {
		return e.Kind == webhook.KindIssueComment && e.Action == "created" && e.Number == number && e.Sender == world.bob.Login
	})
	closed := got.waitFor(t, "merged", isPull(receiver.ActionClosed, world.alice.Login, second))
	if !closed.Merged || closed.MergeCommitSHA != *merged.MergedCommitID {
		t.Fatalf("merged event = %+v, want merged as %s", closed, *merged.MergedCommitID)
	}
	mainPushes := func(e receiver.Event) bool {
		return e.Kind == receiver.KindPush && e.Ref == "refs/heads/main" && e.SHA == *merged.MergedCommitID
	}
	got.waitFor(t, "push of main", mainPushes)
	deadline := time.Now().Add(time.Minute)
	for got.count(mainPushes) < 2 { // from the JSON and from the form webhook
		if time.Now().After(deadline) {
			t.Fatalf("pushes of main = %d, want 2 (JSON and form)", got.count(mainPushes))
		}
		time.Sleep(100 * time.Millisecond)
	}

	// And the deliveries signed with another secret were refused, none accepted.
	deadline = time.Now().Add(time.Minute)
	for got.refusals(receiver.ReasonBadSignature) < 3 { // the pushes of v2 (twice) and of main
		if time.Now().After(deadline) {
			t.Fatalf("forged deliveries refused = %d, want 3", got.refusals(receiver.ReasonBadSignature))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := got.count(mainPushes); n != 2 {
		t.Fatalf("pushes of main accepted = %d, want 2: the forged one must not be", n)
	}
}
