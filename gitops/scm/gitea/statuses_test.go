package gitea

import (
	"strings"
	"testing"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/scm"
)

const postStatus = "POST /repos/statuses/{sha} 201"

func TestSetStatus_postsOnlyOnChange_andGiteaShowsTheLatest(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	sha, err := repo.BranchHead(ctx, world.alice, repo.DefaultBranch)
	check(t, err)
	obs := newCountingObserver()
	c := newClient(t, repo, Options{Observer: obs})
	pending := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "Step 1 of 3: 20% of pods", TargetURL: "https://sluice.example/prod/app"}

	// Given a commit without statuses, when sluice reports a step, the status is posted.
	if posted, err := c.SetStatus(ctx, sha, pending); err != nil || !posted {
		t.Fatalf("first SetStatus = %v, %v; want posted", posted, err)
	}
	// When it reports the same again, nothing is posted.
	if posted, err := c.SetStatus(ctx, sha, pending); err != nil || posted {
		t.Fatalf("same SetStatus = %v, %v; want not posted", posted, err)
	}
	// When another sluice (a restart: nothing remembered) reports it, it reads Gitea's statuses
	// first and posts nothing either; the context compares case-insensitively.
	fresh := newClient(t, repo, Options{Observer: obs})
	upper := pending
	upper.Context = "Sluice/Prod/App"
	if posted, err := fresh.SetStatus(ctx, sha, upper); err != nil || posted {
		t.Fatalf("SetStatus after a restart = %v, %v; want not posted", posted, err)
	}
	if n := obs.count(postStatus); n != 1 {
		t.Fatalf("statuses posted = %d, want 1 (%v)", n, obs.requests)
	}

	// When the step moves on with a long description, the status is posted, cut to fit.
	long := pending
	long.Description = strings.Repeat("step 2 of 3 ", 20)
	if posted, err := c.SetStatus(ctx, sha, long); err != nil || !posted {
		t.Fatalf("changed SetStatus = %v, %v; want posted", posted, err)
	}
	for _, state := range []scm.CommitState{scm.StateSuccess, scm.StateFailure, scm.StateError} {
		s := pending
		s.State, s.Description = state, "Rollout "+string(state)
		if posted, err := c.SetStatus(ctx, sha, s); err != nil || !posted {
			t.Fatalf("SetStatus %s = %v, %v; want posted", state, posted, err)
		}
	}

	// Then Gitea shows the last one as the context's status, and keeps the cut description.
	api, err := world.alice.API(ctx)
	check(t, err)
	combined, _, err := api.GetCombinedStatus(repo.Owner, repo.Name, sha)
	check(t, err)
	if len(combined.Statuses) != 1 {
		t.Fatalf("contexts on the commit = %d, want 1", len(combined.Statuses))
	}
	got := combined.Statuses[0]
	if got.State != sdk.StatusError || got.Description != "Rollout error" || got.Context != "sluice/prod/app" || got.TargetURL != pending.TargetURL {
		t.Fatalf("latest status = %+v", got)
	}
	all, _, err := api.ListStatuses(repo.Owner, repo.Name, sha, sdk.ListStatusesOption{})
	check(t, err)
	var cut bool
	for _, s := range all {
		if strings.HasPrefix(s.Description, "step 2 of 3") {
			cut = len([]rune(s.Description)) == scm.MaxDescriptionLength && strings.HasSuffix(s.Description, "…")
		}
	}
	if !cut || len(all) != 5 {
		t.Fatalf("statuses = %d, long description cut = %v; want 5 and cut to %d characters", len(all), cut, scm.MaxDescriptionLength)
	}
}

func TestSetStatus_findsItsContextAmongManyOthers(t *testing.T) {
	ctx := testContext(t)
	repo := newRepo(t)
	sha, err := repo.BranchHead(ctx, world.alice, repo.DefaultBranch)
	check(t, err)
	api, err := world.sluice.API(ctx)
	check(t, err)
	// Given more contexts on the commit than one page of Gitea's combined status holds, ours
	// posted first (the combined status lists the newest last-updated first).
	ours := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "paused"}
	c := newClient(t, repo, Options{})
	if _, err := c.SetStatus(ctx, sha, ours); err != nil {
		t.Fatal(err)
	}
	for i := range pageSize + 5 {
		_, _, err := api.CreateStatus(repo.Owner, repo.Name, sha, sdk.CreateStatusOption{State: sdk.StatusSuccess, Context: "ci/job-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)})
		check(t, err)
	}
	// When a restarted sluice reports the same status, it finds it on a later page and posts
	// nothing.
	obs := newCountingObserver()
	fresh := newClient(t, repo, Options{Observer: obs})
	if posted, err := fresh.SetStatus(ctx, sha, ours); err != nil || posted {
		t.Fatalf("SetStatus = %v, %v; want found and not posted", posted, err)
	}
	if obs.count(postStatus) != 0 || obs.count("GET /repos/commits/{sha}/status 200") < 2 {
		t.Fatalf("requests = %v; want two pages read and no post", obs.requests)
	}
}
