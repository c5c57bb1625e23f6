package github

import (
	"context"
	"testing"

	"github.com/sluice-dev/sluice/gitops/scm"
)

func TestSetStatus_postsOnlyOnChange(t *testing.T) {
	clock := newClock()
	fake, sha := startFake(t, clock)
	c := newTestClient(t, fake, clock)
	ctx := context.Background()
	paused := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "step 2/4 paused: add label sluice/approve", TargetURL: "https://sluice.invalid/prod/app"}

	// Given no status yet, when the rollout pauses, then one status is posted.
	posted, err := c.SetStatus(ctx, sha, paused)
	if err != nil || !posted {
		t.Fatalf("first SetStatus = %v, %v; want posted", posted, err)
	}
	if got := fake.Statuses(testRepo, sha); len(got) != 1 || got[0].State != "pending" || got[0].Description != paused.Description || got[0].Creator != "sluice-bot" {
		t.Fatalf("statuses after first post = %+v", got)
	}
	// When the same status is set again (context in another case), nothing is posted.
	again := paused
	again.Context = "Sluice/Prod/App"
	if posted, err := c.SetStatus(ctx, sha, again); err != nil || posted {
		t.Fatalf("repeated SetStatus = %v, %v; want not posted", posted, err)
	}
	if n := fake.Count("repos/create-commit-status"); n != 1 {
		t.Fatalf("create-commit-status calls = %d, want 1", n)
	}
	// When the description changes (next step), a new status is posted.
	next := paused
	next.Description = "step 3/4 paused: add label sluice/approve"
	if posted, err := c.SetStatus(ctx, sha, next); err != nil || !posted {
		t.Fatalf("SetStatus(step 3) = %v, %v; want posted", posted, err)
	}
	// When the rollout completes, success is posted once.
	done := scm.CommitStatus{Context: paused.Context, State: scm.StateSuccess, Description: "rollout complete"}
	for i := 0; i < 3; i++ {
		if _, err := c.SetStatus(ctx, sha, done); err != nil {
			t.Fatal(err)
		}
	}
	got := fake.Statuses(testRepo, sha)
	if len(got) != 3 || got[0].State != "success" || got[1].Description != next.Description {
		t.Fatalf("statuses = %+v, want success, step 3, step 2 (newest first)", got)
	}

	// Given a restarted client (nothing in memory), when it sets the status already shown,
	// then it lists the statuses and posts nothing.
	restarted := newTestClient(t, fake, clock)
	lists := fake.Count("repos/list-commit-statuses-for-ref")
	if posted, err := restarted.SetStatus(ctx, sha, done); err != nil || posted {
		t.Fatalf("SetStatus after restart = %v, %v; want not posted", posted, err)
	}
	if fake.Count("repos/list-commit-statuses-for-ref") != lists+1 {
		t.Fatal("the restarted client did not list the statuses before deciding")
	}
	if n := len(fake.Statuses(testRepo, sha)); n != 3 {
		t.Fatalf("statuses after restart = %d, want 3", n)
	}
	// And when it sets a different state, it posts it, and remembers it from then on.
	failed := scm.CommitStatus{Context: paused.Context, State: scm.StateFailure, Description: "rolled back"}
	if posted, err := restarted.SetStatus(ctx, sha, failed); err != nil || !posted {
		t.Fatalf("SetStatus(failure) after restart = %v, %v; want posted", posted, err)
	}
	if _, err := restarted.SetStatus(ctx, sha, failed); err != nil {
		t.Fatal(err)
	}
	if fake.Count("repos/list-commit-statuses-for-ref") != lists+1 || len(fake.Statuses(testRepo, sha)) != 4 {
		t.Fatal("the restarted client listed again or posted the same status twice")
	}
}
