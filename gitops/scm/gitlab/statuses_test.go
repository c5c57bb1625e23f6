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
	pending := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "Step 1 of 3: 20% of pods", TargetURL: "https://sluice.example/prod/app"}

	// Given a commit without statuses, when sluice reports a step, GitLab shows it pending.
	if posted, err := c.SetStatus(ctx, sha, pending); err != nil || !posted {
		t.Fatalf("first SetStatus = %v, %v; want posted", posted, err)
	}
	// When it reports the same again, or the next step while still in progress, nothing is
	// sent: GitLab refuses pending→pending and cannot change a pending status's description.
	before := w.fake.Count(routePostStatus)
	step2 := pending
	step2.Description = "Step 2 of 3: 50% of pods"
	for _, s := range []scm.CommitStatus{pending, step2} {
		if posted, err := c.SetStatus(ctx, sha, s); err != nil || posted {
			t.Fatalf("SetStatus(%q) while pending = %v, %v; want nothing posted", s.Description, posted, err)
		}
	}
	if n := w.fake.Count(routePostStatus); n != before {
		t.Fatalf("posts while pending = %d, want none", n-before)
	}
	// When the rollout completes, the status goes pending→running→success: one status,
	// started and finished, with the final description.
	done := pending
	done.State, done.Description = scm.StateSuccess, "Rollout complete"
	if posted, err := c.SetStatus(ctx, sha, done); err != nil || !posted {
		t.Fatalf("SetStatus(success) = %v, %v; want posted", posted, err)
	}
	got := w.fake.Statuses(testProject, sha)
	if len(got) != 1 || got[0].State != "success" || !got[0].Started || got[0].Description != "Rollout complete" || got[0].TargetURL != pending.TargetURL {
		t.Fatalf("statuses = %+v; want one, success, through running", got)
	}
	if n := w.fake.Count(routePostStatus); n != before+2 {
		t.Fatalf("posts for completing = %d, want 2 (running, success)", n-before)
	}
	// When the same commit is rolled out again and rolled back, GitLab starts a new status
	// after the finished one.
	if posted, err := c.SetStatus(ctx, sha, pending); err != nil || !posted {
		t.Fatalf("SetStatus(pending) after success = %v, %v; want posted", posted, err)
	}
	failed := pending
	failed.State, failed.Description = scm.StateFailure, "Rolled back"
	if posted, err := c.SetStatus(ctx, sha, failed); err != nil || !posted {
		t.Fatalf("SetStatus(failure) = %v, %v; want posted", posted, err)
	}
	if s := states(w.fake.Statuses(testProject, sha)); strings.Join(s, ",") != "success,failed" {
		t.Fatalf("states = %v, want success,failed", s)
	}
}

func TestSetStatus_afterARestart_readsGitLabFirst(t *testing.T) {
	w := newWorld(t)
	ctx := testContext(t)
	sha := w.first
	pending := scm.CommitStatus{Context: "sluice/prod/app", State: scm.StatePending, Description: "paused"}
	if _, err := w.client(t, Options{}).SetStatus(ctx, sha, pending); err != nil {
		t.Fatal(err)
	}
	// A restarted sluice (nothing remembered) reads the commit's statuses before posting: the
	// same status, or another step of the same rollout, posts nothing.
	obs := newCountingObserver()
	fresh := w.client(t, Options{Observer: obs})
	again := pending
	again.Description = "step 2"
	if posted, err := fresh.SetStatus(ctx, sha, again); err != nil || posted {
		t.Fatalf("SetStatus after a restart = %v, %v; want nothing posted", posted, err)
	}
	if obs.count("GET /projects/{id}/repository/commits/{sha}/statuses 200") != 1 || obs.count("POST /projects/{id}/statuses/{sha} 201") != 0 {
		t.Fatalf("requests = %v; want one listing, no post", obs.requests)
	}
	// An error state reads as GitLab's failed, through running.
	errored := pending
	errored.State, errored.Description = scm.StateError, "cannot tell"
	if posted, err := fresh.SetStatus(ctx, sha, errored); err != nil || !posted {
		t.Fatalf("SetStatus(error) = %v, %v", posted, err)
	}
	if got := w.fake.Statuses(testProject, sha); len(got) != 1 || got[0].State != "failed" || !got[0].Started {
		t.Fatalf("statuses = %+v; want the pending one failed through running", got)
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
	// When the rollout completes, sluice's own status (on main) finishes; none is left pending.
	done := pending
	done.State = scm.StateSuccess
	check(t, firstErr(c.SetStatus(ctx, sha, done)))
	for _, s := range w.fake.Statuses(testProject, sha) {
		if s.Name == "sluice/prod/app" && (s.State != "success" || s.Ref != "main") {
			t.Fatalf("sluice's status = %+v; want success on main", s)
		}
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
