package webhook

import (
	"net/http"
	"net/http/httptest"
	"testing"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/receiver"
	"github.com/sluice-dev/sluice/test/gitlabfake"
)

// The deliveries of these tests come from test/gitlabfake, whose payloads are built from
// client-go's webhook event types (gl.MergeEvent, gl.PushEvent, gl.MergeCommentEvent), so the
// handler is checked against GitLab's shapes as client-go knows them, not only against the
// hand-written payloads of handler_test.go.

func TestHandler_turnsTheFakesDeliveriesIntoHints(t *testing.T) {
	r := newRecorder()
	r.secrets = map[string][][]byte{"acme/app": {[]byte(testSecret)}}
	srv := httptest.NewServer(newHandler(t, r))
	t.Cleanup(srv.Close)
	fake := gitlabfake.New(t)
	t.Cleanup(fake.Close)
	fake.AddUser("alice")
	fake.AddUser("bob")
	fake.CreateProject("acme/app", "main", map[string]string{"app.yaml": "v1\n"}, "alice")
	fake.AddGroupMember("acme", "alice", gl.OwnerPermissions)
	fake.AddHook("acme/app", srv.URL, testSecret)

	head := fake.Push("acme/app", "feature", "bob", map[string]string{"app.yaml": "v2\n"}, nil, "Bump")
	iid := fake.OpenMergeRequest("acme/app", "bob", "feature", "main", "Bump")
	fake.AddLabels("acme/app", iid, "alice", "sluice/approve")
	fake.RemoveLabels("acme/app", iid, "alice", "sluice/approve")
	head2 := fake.Push("acme/app", "feature", "bob", map[string]string{"app.yaml": "v3\n"}, nil, "Bump again")
	fake.CommentOnMergeRequest("acme/app", iid, "alice", "/sluice approve")
	fake.ApproveMergeRequest("acme/app", iid, "alice")
	fake.UnapproveMergeRequest("acme/app", iid, "alice")
	merge := fake.MergeMergeRequest("acme/app", iid, "alice", gitlabfake.MergeCommit)

	pr := func(action, sender, sha, label string) receiver.Event {
		return receiver.Event{Kind: receiver.KindPullRequest, Action: action, Repository: "acme/app", Sender: sender, Number: int(iid), SHA: sha, Ref: "main", Label: label}
	}
	merged := pr(receiver.ActionClosed, "alice", head2, "")
	merged.Merged, merged.MergeCommitSHA = true, merge
	want := []receiver.Event{
		{Kind: receiver.KindPush, Repository: "acme/app", Sender: "bob", SHA: head, Ref: "refs/heads/feature"},
		pr(receiver.ActionOpened, "bob", head, ""),
		pr(receiver.ActionLabeled, "alice", head, "sluice/approve"),
		pr(receiver.ActionUnlabeled, "alice", head, "sluice/approve"),
		{Kind: receiver.KindPush, Repository: "acme/app", Sender: "bob", SHA: head2, Ref: "refs/heads/feature"},
		pr(receiver.ActionSynchronize, "bob", head2, ""),
		{Kind: KindIssueComment, Action: "created", Repository: "acme/app", Sender: "alice", Number: int(iid)},
		{Kind: receiver.KindPullRequestReview, Action: receiver.ActionSubmitted, Repository: "acme/app", Sender: "alice", Number: int(iid), SHA: head2, Ref: "main"},
		{Kind: receiver.KindPullRequestReview, Action: receiver.ActionDismissed, Repository: "acme/app", Sender: "alice", Number: int(iid), SHA: head2, Ref: "main"},
		{Kind: receiver.KindPush, Repository: "acme/app", Sender: "alice", SHA: merge, Ref: "refs/heads/main"},
		merged,
	}
	events, _ := r.snapshot()
	if len(events) != len(want) {
		t.Fatalf("events = %d (%+v), want %d; deliveries %+v", len(events), events, len(want), fake.Deliveries())
	}
	for i := range want {
		got := events[i]
		if got.Delivery == "" {
			t.Fatalf("event %d has no delivery id", i)
		}
		got.Delivery = ""
		if got != want[i] {
			t.Errorf("event %d = %+v\nwant       %+v", i, got, want[i])
		}
	}
	// GitLab's "Resend request" of a delivery is acknowledged and triggers nothing new.
	first := fake.Deliveries()[0]
	if status := fake.Redeliver(first); status != http.StatusOK {
		t.Fatalf("redelivery answered %d", status)
	}
	if events, counts := r.snapshot(); len(events) != len(want) || counts[receiver.ReasonDuplicate] != 1 {
		t.Fatalf("after a redelivery: %d events, counts %v; want no new event and one duplicate", len(events), counts)
	}
}

func TestHandler_refusesTheFakesDeliveriesWithAnotherToken(t *testing.T) {
	r := newRecorder()
	r.secrets = map[string][][]byte{"acme/app": {[]byte(testSecret)}}
	srv := httptest.NewServer(newHandler(t, r))
	t.Cleanup(srv.Close)
	fake := gitlabfake.New(t)
	t.Cleanup(fake.Close)
	fake.AddUser("alice")
	fake.CreateProject("acme/app", "main", map[string]string{"app.yaml": "v1\n"}, "alice")
	fake.AddHook("acme/app", srv.URL, "not-the-secret")
	fake.Push("acme/app", "main", "alice", map[string]string{"app.yaml": "v2\n"}, nil, "Bump")
	d := fake.Deliveries()
	if len(d) != 1 || d[0].Status != http.StatusUnauthorized {
		t.Fatalf("deliveries = %+v; want one answered 401", d)
	}
	if events, counts := r.snapshot(); len(events) != 0 || counts[receiver.ReasonBadSignature] != 1 {
		t.Fatalf("%d events, counts %v; want none and a bad token counted", len(events), counts)
	}
}
