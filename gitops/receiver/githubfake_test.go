package receiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice/observability/metrics"
	"github.com/sluice-dev/sluice/test/githubfake"
)

// TestHandler_realDeliveriesFromTheGitHubFake sends the fake's schema-validated, signed
// deliveries to the handler served over HTTP, and reads the counts through the manager's
// Prometheus series (observability/metrics), which the handler's Metrics is meant for.
func TestHandler_realDeliveriesFromTheGitHubFake(t *testing.T) {
	fake, err := githubfake.New(t)
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	base := fake.CreateRepo("acme/app", "main", map[string]string{"deploy.yaml": "image: app:1\n"})
	head := fake.Commit("acme/app", "feature", "main", "Bump image", map[string]string{"deploy.yaml": "image: app:2\n"}, githubfake.Signature{Name: "bob", Email: "bob@example.com"})
	pr := fake.OpenPullRequest("acme/app", "feature", "main", "Bump image", "bob")
	fake.AddLabel("acme/app", pr, "sluice/approve", "carol")

	trigger := &triggered{}
	registry := prometheus.NewRegistry()
	counters, err := metrics.New(registry)
	if err != nil {
		t.Fatal(err)
	}
	handler, err := New(Options{Trigger: trigger, Secrets: secretMap{"acme/app": {otherSecret, secret}}, Metrics: counters})
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(handler)
	defer server.Close()
	ctx := context.Background()

	// Given a ping when the webhook is created,
	ping, err := fake.DeliverPing(ctx, server.URL, secret, "acme/app", 99)
	if err != nil || ping.Status != http.StatusOK {
		t.Fatalf("ping: %d, %v", ping.Status, err)
	}
	// when carol labels the pull request and the fake delivers it,
	labeled, err := fake.DeliverLabel(ctx, server.URL, secret, "acme/app", pr, "sluice/approve", "carol", true)
	if err != nil || labeled.Status != http.StatusOK {
		t.Fatalf("labeled: %d, %v", labeled.Status, err)
	}
	// and GitHub redelivers it, and someone with the wrong secret sends one,
	again, err := fake.Redeliver(ctx, server.URL, secret, labeled)
	if err != nil || again.Status != http.StatusOK {
		t.Fatalf("redelivery: %d, %v", again.Status, err)
	}
	forged, err := fake.DeliverLabel(ctx, server.URL, []byte("guess"), "acme/app", pr, "sluice/approve", "mallory", true)
	if err != nil || forged.Status != http.StatusUnauthorized {
		t.Fatalf("forged: %d, %v; want 401", forged.Status, err)
	}
	// then the label is removed and the branch pushed,
	if d, err := fake.DeliverLabel(ctx, server.URL, secret, "acme/app", pr, "sluice/approve", "carol", false); err != nil || d.Status != http.StatusOK {
		t.Fatalf("unlabeled: %d, %v", d.Status, err)
	}
	push, err := fake.DeliverPush(ctx, server.URL, secret, "acme/app", "feature", base, head, "bob")
	if err != nil || push.Status != http.StatusOK {
		t.Fatalf("push: %d, %v", push.Status, err)
	}

	// Then the Trigger saw each genuine delivery once, with the fake's values.
	want := []Event{
		{Delivery: ping.ID, Kind: KindPing, Repository: "acme/app", Sender: "acme", HookID: 99},
		{Delivery: labeled.ID, Kind: KindPullRequest, Action: ActionLabeled, Repository: "acme/app", Sender: "carol", Number: pr, SHA: head, Ref: "main", Label: "sluice/approve", HookID: 1},
		{Kind: KindPullRequest, Action: ActionUnlabeled, Repository: "acme/app", Sender: "carol", Number: pr, SHA: head, Ref: "main", Label: "sluice/approve", HookID: 1},
		{Delivery: push.ID, Kind: KindPush, Repository: "acme/app", Sender: "bob", SHA: head, Ref: "refs/heads/feature", HookID: 1},
	}
	got := trigger.all()
	if len(got) != len(want) {
		t.Fatalf("triggered %d events, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if want[i].Delivery == "" {
			want[i].Delivery = got[i].Delivery // the fake picks the id
		}
		if got[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, family := range families {
		if family.GetName() != "sluice_webhook_deliveries_total" {
			continue
		}
		for _, m := range family.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			counts[labels["result"]+"/"+labels["reason"]] = m.GetCounter().GetValue()
		}
	}
	wantCounts := map[string]float64{"accepted/ping": 1, "accepted/pull_request": 2, "rejected/bad-signature": 1, "rejected/duplicate": 1, "accepted/push": 1}
	if !reflect.DeepEqual(counts, wantCounts) {
		t.Errorf("counters = %v, want %v", counts, wantCounts)
	}
}

// TestHandler_pullRequestLifecycleFromTheGitHubFake follows one pull request from opening to
// merge through the fake's schema-validated deliveries: each event names the commit the
// controller must look at.
func TestHandler_pullRequestLifecycleFromTheGitHubFake(t *testing.T) {
	fake, err := githubfake.New(t)
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	author := githubfake.Signature{Name: "bob", Email: "bob@example.com"}
	fake.CreateRepo("acme/app", "main", map[string]string{"deploy.yaml": "image: app:1\n"})
	first := fake.Commit("acme/app", "feature", "main", "Bump image", map[string]string{"deploy.yaml": "image: app:2\n"}, author)
	trigger := &triggered{}
	handler, err := New(Options{Trigger: trigger, Secrets: secretMap{"acme/app": {secret}}})
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(handler)
	defer server.Close()
	ctx := context.Background()
	deliver := func(number int, action, sender string) {
		t.Helper()
		d, err := fake.DeliverPullRequest(ctx, server.URL, secret, "acme/app", number, action, sender)
		if err != nil || d.Status != http.StatusOK {
			t.Fatalf("%s delivery: %d, %v", action, d.Status, err)
		}
	}
	last := func() Event {
		t.Helper()
		all := trigger.all()
		if len(all) == 0 {
			t.Fatal("nothing triggered")
		}
		return all[len(all)-1]
	}

	// Given bob opens a pull request,
	pr := fake.OpenPullRequest("acme/app", "feature", "main", "Bump image", "bob")
	deliver(pr, "opened", "bob")
	if e := last(); e.Action != ActionOpened || e.Number != pr || e.SHA != first || e.Ref != "main" || e.Sender != "bob" || e.Merged {
		t.Fatalf("opened = %+v, want pull request %d at %s", e, pr, first)
	}
	// when he pushes another commit to it,
	second := fake.Commit("acme/app", "feature", "feature", "Fix the image tag", map[string]string{"deploy.yaml": "image: app:2.1\n"}, author)
	deliver(pr, "synchronize", "bob")
	if e := last(); e.Action != ActionSynchronize || e.SHA != second {
		t.Fatalf("synchronize = %+v, want head %s", e, second)
	}
	// and carol merges it,
	merge := fake.MergePullRequest("acme/app", pr, "carol")
	deliver(pr, "closed", "carol")
	// then the closed event carries the merge commit, which is what gets deployed.
	if e := last(); e.Action != ActionClosed || !e.Merged || e.MergeCommitSHA != merge || e.SHA != second || e.Sender != "carol" {
		t.Fatalf("closed = %+v, want merged with merge commit %s", e, merge)
	}
	if n := len(trigger.all()); n != 3 {
		t.Errorf("triggered %d events, want 3", n)
	}
	if _, err := fake.DeliverPullRequest(ctx, server.URL, secret, "acme/app", pr, "reopened", "carol"); err == nil {
		t.Error("the fake reopened a merged pull request")
	}
}

// TestHandler_conversationDeliveriesFromTheGitHubFake sends the fake's schema-validated
// issue_comment and pull_request_review deliveries: each wakes the gate for the pull request.
func TestHandler_conversationDeliveriesFromTheGitHubFake(t *testing.T) {
	fake, err := githubfake.New(t)
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	fake.CreateRepo("acme/app", "main", map[string]string{"deploy.yaml": "image: app:1\n"})
	head := fake.Commit("acme/app", "feature", "main", "Bump image", map[string]string{"deploy.yaml": "image: app:2\n"}, githubfake.Signature{Name: "bob", Email: "bob@example.com"})
	pr := fake.OpenPullRequest("acme/app", "feature", "main", "Bump image", "bob")
	fake.MergePullRequest("acme/app", pr, "alice")
	comment := fake.AddComment("acme/app", pr, "carol", "/sluice approve")
	review := fake.Review("acme/app", pr, "dave", githubfake.ReviewApproved, "")

	trigger := &triggered{}
	handler, err := New(Options{Trigger: trigger, Secrets: secretMap{"acme/app": {secret}}})
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(handler)
	defer server.Close()
	ctx := context.Background()

	created, err := fake.DeliverComment(ctx, server.URL, secret, "acme/app", pr, comment, "created")
	if err != nil || created.Status != http.StatusOK {
		t.Fatalf("comment created: %d, %v", created.Status, err)
	}
	fake.EditComment("acme/app", comment, "/sluice approve step=1")
	edited, err := fake.DeliverComment(ctx, server.URL, secret, "acme/app", pr, comment, "edited")
	if err != nil || edited.Status != http.StatusOK {
		t.Fatalf("comment edited: %d, %v", edited.Status, err)
	}
	submitted, err := fake.DeliverReview(ctx, server.URL, secret, "acme/app", pr, review, "submitted", "dave")
	if err != nil || submitted.Status != http.StatusOK {
		t.Fatalf("review submitted: %d, %v", submitted.Status, err)
	}
	fake.DismissReview("acme/app", pr, review)
	dismissed, err := fake.DeliverReview(ctx, server.URL, secret, "acme/app", pr, review, "dismissed", "alice")
	if err != nil || dismissed.Status != http.StatusOK {
		t.Fatalf("review dismissed: %d, %v", dismissed.Status, err)
	}

	want := []Event{
		{Delivery: created.ID, Kind: KindIssueComment, Action: ActionCreated, Repository: "acme/app", Sender: "carol", Number: pr, HookID: 1},
		{Delivery: edited.ID, Kind: KindIssueComment, Action: ActionEdited, Repository: "acme/app", Sender: "carol", Number: pr, HookID: 1},
		{Delivery: submitted.ID, Kind: KindPullRequestReview, Action: ActionSubmitted, Repository: "acme/app", Sender: "dave", Number: pr, SHA: head, Ref: "main", HookID: 1},
		{Delivery: dismissed.ID, Kind: KindPullRequestReview, Action: ActionDismissed, Repository: "acme/app", Sender: "alice", Number: pr, SHA: head, Ref: "main", HookID: 1},
	}
	if got := trigger.all(); !reflect.DeepEqual(got, want) {
		t.Errorf("triggered %+v\nwant %+v", got, want)
	}
}
