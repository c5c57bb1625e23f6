package gitlab

import (
	"net/http"
	"strings"
	"testing"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/scm"
	"github.com/sluice-dev/sluice/test/gitlabfake"
)

const routePostStatus = "POST /projects/:id/statuses/:sha"

func states(list []gitlabfake.Status) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.State)
	}
	return out
}

func TestSetStatus_walksGitLabsStateMachine_postingOnlyWhatGitLabAccepts(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	c := w.client(t, Options{})
	sha := w.first
	step1 := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "Step 1 of 3: 20% of pods", TargetURL: "https://sluice.example/prod/app"}

	// Given a commit without statuses, when sluice reports a step, GitLab shows it running.
	if posted, err := c.SetStatus(ctx, sha, step1); err != nil || !posted {
		t.Fatalf("first SetStatus = %v, %v; want posted", posted, err)
	}
	if got := w.fake.Statuses(testProject, sha); len(got) != 1 || got[0].State != "running" || got[0].Description != step1.Description {
		t.Fatalf("statuses = %+v; want one running", got)
	}
	// When it reports the same again, nothing is sent.
	before := w.fake.Count(routePostStatus)
	if posted, err := c.SetStatus(ctx, sha, step1); err != nil || posted {
		t.Fatalf("SetStatus(same) = %v, %v; want nothing posted", posted, err)
	}
	if n := w.fake.Count(routePostStatus); n != before {
		t.Fatalf("posts of an unchanged status = %d, want none", n-before)
	}
	// When it reports the next step, GitLab cannot describe the running status anew (it refuses
	// running→running): the status is canceled and a new one runs, in the same pipeline.
	step2 := step1
	step2.Description = "Step 2 of 3: 50% of pods"
	if posted, err := c.SetStatus(ctx, sha, step2); err != nil || !posted {
		t.Fatalf("SetStatus(step 2) = %v, %v; want posted", posted, err)
	}
	got := w.fake.Statuses(testProject, sha)
	if len(got) != 2 || got[0].State != "canceled" || got[0].Description != step1.Description ||
		got[1].State != "running" || got[1].Description != step2.Description || got[1].Ref != got[0].Ref {
		t.Fatalf("statuses = %+v; want step 1's canceled and step 2's running beside it", got)
	}
	if n := w.fake.Count(routePostStatus); n != before+2 {
		t.Fatalf("posts for the next step = %d, want 2 (canceled, running)", n-before)
	}
	// When the rollout completes, the running status succeeds in place.
	done := step1
	done.State, done.Description = scm.StateSuccess, "Rollout complete"
	if posted, err := c.SetStatus(ctx, sha, done); err != nil || !posted {
		t.Fatalf("SetStatus(success) = %v, %v; want posted", posted, err)
	}
	got = w.fake.Statuses(testProject, sha)
	if len(got) != 2 || got[1].State != "success" || !got[1].Started || got[1].Description != "Rollout complete" || got[1].TargetURL != step1.TargetURL {
		t.Fatalf("statuses = %+v; want step 2's status succeeded", got)
	}
	if n := w.fake.Count(routePostStatus); n != before+3 {
		t.Fatalf("posts for completing = %d, want 1", n-before-2)
	}
	// When the same commit is rolled out again and rolled back, GitLab starts a new status
	// after the finished one.
	if posted, err := c.SetStatus(ctx, sha, step1); err != nil || !posted {
		t.Fatalf("SetStatus(in progress) after success = %v, %v; want posted", posted, err)
	}
	failed := step1
	failed.State, failed.Description = scm.StateFailure, "Rolled back"
	if posted, err := c.SetStatus(ctx, sha, failed); err != nil || !posted {
		t.Fatalf("SetStatus(failure) = %v, %v; want posted", posted, err)
	}
	if s := states(w.fake.Statuses(testProject, sha)); strings.Join(s, ",") != "canceled,success,failed" {
		t.Fatalf("states = %v, want canceled,success,failed", s)
	}
}

func TestSetStatus_afterARestart_readsGitLabFirst(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	sha := w.first
	paused := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "paused"}
	if _, err := w.client(t, Options{}).SetStatus(ctx, sha, paused); err != nil {
		t.Fatal(err)
	}
	// A restarted sluice (nothing remembered) reads the commit's statuses before posting: the
	// same status posts nothing.
	obs := newCountingObserver()
	fresh := w.client(t, Options{Observer: obs})
	if posted, err := fresh.SetStatus(ctx, sha, paused); err != nil || posted {
		t.Fatalf("SetStatus after a restart = %v, %v; want nothing posted", posted, err)
	}
	if obs.count("GET /projects/{id}/repository/commits/{sha}/statuses 200") != 1 || obs.count("POST /projects/{id}/statuses/{sha} 201") != 0 {
		t.Fatalf("requests = %v; want one listing, no post", obs.requests)
	}
	// An error state reads as GitLab's failed, from running.
	errored := paused
	errored.State, errored.Description = scm.StateError, "cannot tell"
	if posted, err := fresh.SetStatus(ctx, sha, errored); err != nil || !posted {
		t.Fatalf("SetStatus(error) = %v, %v", posted, err)
	}
	if got := w.fake.Statuses(testProject, sha); len(got) != 1 || got[0].State != "failed" || !got[0].Started {
		t.Fatalf("statuses = %+v; want the running one failed", got)
	}
}

// A pending status (posted by a sluice that showed rollouts in progress as pending, or by
// someone else with the token) is taken to running with the new step, in place.
func TestSetStatus_aPendingStatusRunsWithTheNextStep(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	sha := w.first
	api, err := gl.NewClient(w.bot.Token, gl.WithBaseURL(w.fake.URL), gl.WithoutRetries())
	check(t, err)
	_, _, err = api.Commits.SetCommitStatus(testProject, sha, &gl.SetCommitStatusOptions{State: gl.Pending, Name: gl.Ptr("sluice/prod/app"), Description: gl.Ptr("step 1")})
	check(t, err)
	step2 := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "step 2"}
	if posted, err := w.client(t, Options{}).SetStatus(ctx, sha, step2); err != nil || !posted {
		t.Fatalf("SetStatus(step 2) = %v, %v; want posted", posted, err)
	}
	if got := w.fake.Statuses(testProject, sha); len(got) != 1 || got[0].State != "running" || got[0].Description != "step 2" {
		t.Fatalf("statuses = %+v; want the pending one running with step 2", got)
	}
}

func TestSetStatus_finishesTheStatusItRead_whenAnotherPipelineStartedSince(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	sha := w.first
	c := w.client(t, Options{})
	pending := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "paused"}
	check(t, firstErr(c.SetStatus(ctx, sha, pending)))
	// Given another pipeline for the commit, started after sluice's status (CI on a new branch
	// that contains it): a post naming no pipeline would go to it.
	other, err := gl.NewClient(w.bot.Token, gl.WithBaseURL(w.fake.URL), gl.WithoutRetries())
	check(t, err)
	_, _, err = other.Branches.CreateBranch(testProject, &gl.CreateBranchOptions{Branch: gl.Ptr("release"), Ref: gl.Ptr("main")})
	check(t, err)
	_, _, err = other.Commits.SetCommitStatus(testProject, sha, &gl.SetCommitStatusOptions{State: gl.Running, Name: gl.Ptr("ci/build"), Ref: gl.Ptr("release")})
	check(t, err)
	// When the next step restarts sluice's status, the new one runs beside the canceled one,
	// on main; when the rollout completes, it finishes there; none is left running.
	step2 := pending
	step2.Description = "step 2"
	check(t, firstErr(c.SetStatus(ctx, sha, step2)))
	done := pending
	done.State = scm.StateSuccess
	check(t, firstErr(c.SetStatus(ctx, sha, done)))
	var mine []string
	for _, s := range w.fake.Statuses(testProject, sha) {
		if s.Name == "sluice/prod/app" {
			mine = append(mine, s.State+"@"+s.Ref)
		}
	}
	if strings.Join(mine, ",") != "canceled@main,success@main" {
		t.Fatalf("sluice's statuses = %v; want canceled and success, both on main", mine)
	}
}

func TestSetStatus_aFailedPostIsReadAgain_andLongDescriptionsAreCut(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	sha := w.first
	c := w.client(t, Options{})
	pending := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: strings.Repeat("step 1 of 3 ", 20)}
	w.fake.FailNext(routePostStatus, http.StatusInternalServerError, 1)
	if _, err := c.SetStatus(ctx, sha, pending); err == nil {
		t.Fatal("SetStatus with GitLab failing: want an error")
	}
	if n := w.fake.Count(routePostStatus); n != 1 {
		t.Fatalf("a failed POST was sent %d times; want once (it may have been applied)", n)
	}
	if posted, err := c.SetStatus(ctx, sha, pending); err != nil || !posted {
		t.Fatalf("SetStatus after the failure = %v, %v; want posted", posted, err)
	}
	got := w.fake.Statuses(testProject, sha)
	if len(got) != 1 || len([]rune(got[0].Description)) != scm.MaxDescriptionLength || !strings.HasSuffix(got[0].Description, "…") {
		t.Fatalf("statuses = %+v; want one with the description cut to %d characters", got, scm.MaxDescriptionLength)
	}
	if _, err := c.SetStatus(ctx, sha, scm.CommitStatus{Context: "x", State: "bogus"}); err == nil {
		t.Fatal("an invalid state was accepted")
	}
}

func firstErr(_ bool, err error) error { return err }
