package github

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/githubfake"
)

func TestPullRequestReader_commitToPullRequestAndLabels(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	ctx := context.Background()

	// Given a pull request bumping the image, merged into main.
	change := fake.Commit(testRepo, "bump", "main", "Bump app to v2", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, githubfake.Signature{Name: "bob", Email: "bob@example.com"})
	number := fake.OpenPullRequest(testRepo, "bump", "main", "Bump app to v2", "bob")
	open, err := c.PullRequest(ctx, number)
	if err != nil {
		t.Fatal(err)
	}
	if open.Merged || open.MergeCommitSHA != "" || open.State != "open" || open.HeadSHA != change || open.BaseRef != "main" || open.Author != "bob" {
		t.Fatalf("open pull request = %+v", open)
	}
	merge := fake.MergePullRequest(testRepo, number, "alice")

	// When the controller looks up the merge commit it is rolling out, it finds the pull request.
	prs, err := c.PullRequestsForCommit(ctx, merge)
	if err != nil {
		t.Fatal(err)
	}
	if len(prs) != 1 || prs[0].Number != number || !prs[0].Merged || prs[0].MergeCommitSHA != merge || prs[0].Title != "Bump app to v2" {
		t.Fatalf("pull requests of the merge commit = %+v", prs)
	}
	// And the pull request's own commit leads to it too.
	if prs, err := c.PullRequestsForCommit(ctx, change); err != nil || len(prs) != 1 || prs[0].Number != number {
		t.Fatalf("pull requests of the change = %+v, %v", prs, err)
	}
	merged, err := c.PullRequest(ctx, number)
	if err != nil || merged.MergeCommitSHA != merge || !merged.Merged || merged.State != "closed" {
		t.Fatalf("merged pull request = %+v, %v", merged, err)
	}

	// Labels: carol approves at t0; dave adds and removes a rollback label; erin re-adds the
	// approval later; a label deleted from the repository disappears without an event.
	fake.AddLabel(testRepo, number, "sluice/approve", "carol")
	clock.Advance(time.Minute)
	fake.AddLabel(testRepo, number, "sluice/rollback", "dave")
	fake.AddLabel(testRepo, number, "team/payments", "dave")
	clock.Advance(time.Minute)
	fake.RemoveLabel(testRepo, number, "sluice/rollback", "dave")
	labels, err := c.Labels(ctx, number)
	if err != nil {
		t.Fatal(err)
	}
	want := []scm.AppliedLabel{
		{Name: "sluice/approve", AddedBy: "carol", AddedAt: time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)},
		{Name: "team/payments", AddedBy: "dave", AddedAt: time.Date(2030, 5, 1, 12, 1, 0, 0, time.UTC)},
	}
	assertLabels(t, "after carol and dave", labels, want)

	fake.RemoveLabel(testRepo, number, "sluice/approve", "carol")
	clock.Advance(time.Minute)
	fake.AddLabel(testRepo, number, "sluice/approve", "erin")
	fake.DeleteLabelSilently(testRepo, number, "team/payments")
	labels, err = c.Labels(ctx, number)
	if err != nil {
		t.Fatal(err)
	}
	assertLabels(t, "after erin re-approved", labels, []scm.AppliedLabel{
		{Name: "sluice/approve", AddedBy: "erin", AddedAt: time.Date(2030, 5, 1, 12, 3, 0, 0, time.UTC)},
	})
}

func assertLabels(t *testing.T, when string, got, want []scm.AppliedLabel) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: labels = %+v, want %+v", when, got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || got[i].AddedBy != want[i].AddedBy || !got[i].AddedAt.Equal(want[i].AddedAt) {
			t.Errorf("%s: label %d = %+v, want %+v", when, i, got[i], want[i])
		}
	}
}

func TestPullRequestReader_pollsWithETags(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	ctx := context.Background()
	fake.Commit(testRepo, "bump", "main", "Bump", map[string]string{"deploy/app.yaml": "image: app:v2\n"}, githubfake.Signature{Name: "bob"})
	number := fake.OpenPullRequest(testRepo, "bump", "main", "Bump", "bob")
	fake.AddLabel(testRepo, number, "sluice/approve", "carol")

	// The first poll reads everything.
	if _, err := c.Labels(ctx, number); err != nil {
		t.Fatal(err)
	}
	first := len(fake.Requests())
	// An unchanged poll is answered 304 for every request, with the same labels.
	labels, err := c.Labels(ctx, number)
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 1 || labels[0].AddedBy != "carol" {
		t.Fatalf("labels from the cache = %+v", labels)
	}
	polled := fake.Requests()[first:]
	if len(polled) != 2 {
		t.Fatalf("an unchanged poll made %d requests, want 2", len(polled))
	}
	for _, r := range polled {
		if r.Status != http.StatusNotModified || r.IfNoneMatch == "" {
			t.Errorf("poll request %s %s answered %d (If-None-Match %q), want a 304", r.Method, r.Path, r.Status, r.IfNoneMatch)
		}
	}
	// After a change, the poll sees it.
	fake.AddLabel(testRepo, number, "sluice/promote-full", "dave")
	labels, err = c.Labels(ctx, number)
	if err != nil || len(labels) != 2 || labels[1].Name != "sluice/promote-full" || labels[1].AddedBy != "dave" {
		t.Fatalf("labels after a change = %+v, %v", labels, err)
	}
	for _, r := range fake.Requests()[first+2:] {
		if r.Status != http.StatusOK {
			t.Errorf("after a change %s answered %d, want 200", r.Path, r.Status)
		}
	}
}

func TestPullRequestReader_notFound(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	_, err := c.PullRequest(context.Background(), 42)
	if !scm.IsNotFound(err) {
		t.Fatalf("PullRequest(42) error = %v, want NotFoundError", err)
	}
	other, err := New(Options{Owner: "acme", Repo: "app", BaseURL: fake.URL, Token: "wrong", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.PullRequestsForCommit(context.Background(), "0123"); !scm.IsUnauthorized(err) {
		t.Fatalf("bad token error = %v, want UnauthorizedError", err)
	}
}

func TestPermissionReader_roles(t *testing.T) {
	clock := newClock()
	fake, _ := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	for user, role := range map[string]string{
		"ann": githubfake.RoleAdmin, "max": githubfake.RoleMaintain, "wes": githubfake.RoleWrite,
		"tia": githubfake.RoleTriage, "rex": githubfake.RoleRead,
	} {
		fake.SetRole(testRepo, user, role)
	}
	tests := []struct {
		user     string
		want     scm.Permission
		notFound bool
	}{
		{user: "acme", want: scm.PermissionAdmin},
		{user: "ann", want: scm.PermissionAdmin},
		{user: "max", want: scm.PermissionMaintain},
		{user: "wes", want: scm.PermissionWrite},
		{user: "tia", want: scm.PermissionTriage},
		{user: "rex", want: scm.PermissionRead},
		{user: "sluice-bot", want: scm.PermissionNone},
		{user: "nobody", notFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			got, err := c.Permission(context.Background(), tt.user)
			if tt.notFound {
				if !scm.IsNotFound(err) {
					t.Fatalf("Permission(%s) = %q, %v; want NotFoundError", tt.user, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Permission(%s) = %q, %v; want %q", tt.user, got, err, tt.want)
			}
		})
	}
}
