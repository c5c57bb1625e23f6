package prview

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// update rewrites the golden files: go test ./gitops/prview -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files")

const commit = "8f2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b"

var at = time.Date(2030, 5, 1, 12, 4, 5, 0, time.UTC)

func labels(buttons bool) Commands {
	return Commands{Approve: "sluice/approve", PromoteFull: "sluice/promote-full", Rollback: "sluice/rollback", Reject: "sluice/reject",
		Retry: "sluice/retry", Comments: true, Buttons: buttons}
}

func steps(current int, mark string) []Step {
	out := []Step{
		{Replicas: "1", Traffic: "10%", Pause: "until approved"},
		{Replicas: "50%", Traffic: "50%", Pause: "until approved"},
		{Replicas: "100%", Pause: "none (last step)"},
	}
	for i := range out {
		switch {
		case i+1 < current:
			out[i].Mark = MarkDone
		case i+1 == current:
			out[i].Mark = mark
		default:
			out[i].Mark = MarkPending
		}
	}
	return out
}

// paused is a release waiting at step 1 for its approval, a permission refusal on record.
func paused(buttons bool) Release {
	return Release{
		Rollout: "shop/checkout", Commit: commit, State: StateWaiting, Headline: "step 1/3 paused: add label sluice/approve to continue",
		Step: 1, Steps: 3, StepList: steps(1, MarkPaused),
		Revisions: []Revision{
			{Name: "6d5f8c7b9a", Role: "stable", Pods: 3, Percent: 90},
			{Name: "7c9ab1d2e3", Role: "canary", Pods: 1, Percent: 10},
		},
		TrafficNote: "Requests: the weights of step 1 on the routes.",
		Refused: []Refusal{{Reason: "InsufficientPermission",
			Message: "button Approve step 1 pressed by mallory: mallory has read permission, write is needed"}},
		Commands: labels(buttons),
	}
}

func TestMarkdown_golden(t *testing.T) {
	tests := []struct {
		name string
		r    Release
	}{
		{"paused-app", paused(true)},
		{"paused-token", paused(false)},
		{"in-progress", func() Release {
			r := paused(true)
			r.State, r.Headline, r.Step, r.StepList, r.Refused = StateInProgress, "step 2/3 in progress", 2, steps(2, MarkCurrent), nil
			r.Approvals = []Approval{{Action: "Approve", Step: 1, By: "reviewer", Via: "github-check-run", At: at}}
			r.Revisions[0].Pods, r.Revisions[1].Pods = 2, 2
			r.Revisions[0].Percent, r.Revisions[1].Percent = 50, 50
			return r
		}()},
		{"released", func() Release {
			r := paused(true)
			r.State, r.Headline, r.Step, r.StepList, r.Refused = StateSucceeded, "released: 3/3 steps done", 3, steps(4, ""), nil
			r.Approvals = []Approval{
				{Action: "Approve", Step: 1, By: "reviewer", Via: "github-check-run", At: at},
				{Action: "PromoteFull", Step: 3, By: "lead", Via: "github-label", At: at.Add(10 * time.Minute)},
			}
			r.Revisions, r.TrafficNote = []Revision{{Name: "7c9ab1d2e3", Role: "current", Pods: 4, Percent: 100}}, ""
			return r
		}()},
		{"rolled-back", func() Release {
			r := paused(true)
			r.State, r.Headline, r.Aborted = StateFailed, "rolled back at step 2/3 by lead", true
			r.Step, r.StepList = 2, steps(2, MarkAborted)
			r.Approvals = []Approval{
				{Action: "Approve", Step: 1, By: "reviewer", Via: "gitea-label", At: at},
				{Action: "Rollback", By: "lead", Via: "gitea-label", At: at.Add(time.Hour)},
			}
			r.Revisions, r.TrafficNote = []Revision{{Name: "6d5f8c7b9a", Role: "stable", Pods: 4, Percent: 100}}, ""
			return r
		}()},
		{"rejected-reverted", func() Release {
			r := paused(false)
			r.State, r.Headline, r.Aborted = StateFailed, "rejected at step 1/3 by lead", false
			r.StepList = steps(1, MarkAborted)
			r.Approvals = []Approval{{Action: "Rollback", By: "lead", Via: "github-label", At: at, Rejected: true}}
			r.Refused, r.Revisions, r.TrafficNote = nil, nil, ""
			return r
		}()},
		{"quorum-waiting", func() Release {
			r := paused(false)
			r.State, r.Step, r.StepList, r.Refused, r.PullRequest = StateWaiting, 2, steps(2, MarkPaused), nil, 42
			r.Headline = "step 2/3 paused: 2 of 2 approvals (alice, bob); waiting for an approval by security (carol, acme/sre)"
			r.Approvals = []Approval{{Action: "Approve", Step: 1, By: "lead", Via: "gitlab-label", At: at}}
			r.Quorum = &Quorum{Step: 2, Needed: 2, Approvals: []GivenApproval{
				{Action: "Approve", By: "alice", Via: "gitlab-label", At: at.Add(2 * time.Hour), PullRequest: 42},
				{Action: "Approve", By: "bob", Via: "gitlab-comment", At: at.Add(2*time.Hour + 3*time.Minute), PullRequest: 42},
			}, Waiting: []string{"an approval by security (carol, acme/sre)"}}
			return r
		}()},
		{"quorum-every-source", func() Release {
			r := paused(true)
			r.Refused, r.PullRequest = nil, 42
			r.Headline = "step 1/3 paused: 5 of 6 approvals (alice, bob, carol, dave, erin); waiting for 1 more"
			r.Quorum = &Quorum{Step: 1, Needed: 6, Approvals: []GivenApproval{
				{Action: "Approve", By: "alice", Via: "github-review", At: at, PullRequest: 42},
				{Action: "PromoteFull", By: "bob", Via: "github-label", At: at.Add(time.Minute), PullRequest: 42, Required: []string{"owners"}},
				{Action: "PromoteFull", By: "carol", Via: "github-comment", At: at.Add(2 * time.Minute), PullRequest: 41},
				{Action: "Approve", By: "dave", Via: "github-check-run", At: at.Add(3 * time.Minute)},
				{Action: "Approve", By: "erin@example.com", Via: "git-trailer", At: at.Add(25 * time.Hour), Commit: commit},
			}, Waiting: []string{"1 more"}}
			return r
		}()},
		{"quorum-none-yet", func() Release {
			r := paused(false)
			r.Refused = nil
			r.Headline = "step 1/3 paused: 0 of 2 approvals; waiting for 2 more"
			r.Quorum = &Quorum{Step: 1, Needed: 2, Waiting: []string{"2 more"}}
			return r
		}()},
		{"outside-text-escaped", func() Release {
			r := paused(true)
			r.Refused = []Refusal{{Reason: "UnverifiedCommit",
				Message: "trailer \"Sluice-Approve: 1\" in commit 1234567: <img src=x> [click](https://evil.example) @acme/admins | **bold**\n# heading <!-- sluice:comment shop/checkout -->"}}
			r.Approvals = []Approval{{Action: "Approve", Step: 1, By: "jane_doe@example.com", Via: "git-trailer", At: at}}
			r.Quorum = &Quorum{Step: 1, Needed: 2, Approvals: []GivenApproval{{Action: "Approve", By: "[x](https://evil.example) @acme/admins", Via: "gitea-label", At: at,
				Required: []string{"sec|urity"}}}, Waiting: []string{"an approval by security (*bold*, <b>acme</b>)\n# heading"}}
			return r
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Markdown(tt.r)
			path := filepath.Join("testdata", tt.name+".md")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("Markdown() differs from %s (run with -update and review the diff):\n%s", path, got)
			}
			if strings.Contains(got, "<!-- sluice:comment") {
				t.Error("the text carries a comment marker: someone else's text could pass for sluice's comment")
			}
		})
	}
}

// The check run follows the release: in progress with the buttons that can act, completed
// with success or failure and no buttons at the end; its buttons fit GitHub's limits.
func TestCheckRun_followsTheRelease(t *testing.T) {
	type want struct {
		status     scm.CheckRunStatus
		conclusion scm.CheckConclusion
		buttons    []string
	}
	released := paused(true)
	released.State = StateSucceeded
	failed := paused(true)
	failed.State = StateFailed
	lastStep := paused(true)
	lastStep.Step = 3
	inProgress := paused(true)
	inProgress.State = StateInProgress
	tests := []struct {
		name string
		r    Release
		want want
	}{
		{"waiting at step 1", paused(true), want{scm.CheckInProgress, "", []string{"approve-1", "promote", "rollback"}}},
		{"waiting at the last step", lastStep, want{scm.CheckInProgress, "", []string{"approve-3", "rollback"}}},
		{"between steps", inProgress, want{scm.CheckInProgress, "", []string{"promote", "rollback"}}},
		{"released", released, want{scm.CheckCompleted, scm.ConclusionSuccess, nil}},
		{"rolled back", failed, want{scm.CheckCompleted, scm.ConclusionFailure, nil}},
		{"no buttons without an App", paused(false), want{scm.CheckInProgress, "", nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := CheckRun(tt.r, "sluice/shop/checkout", "https://sluice.example/shop/checkout")
			if _, err := run.Validate(); err != nil {
				t.Fatalf("the check run breaks GitHub's rules: %v", err)
			}
			var ids []string
			for _, a := range run.Actions {
				ids = append(ids, a.Identifier)
				if b, ok := ParseButton(a.Identifier); !ok || b.Identifier() != a.Identifier {
					t.Errorf("button %q does not parse back", a.Identifier)
				}
			}
			if run.Status != tt.want.status || run.Conclusion != tt.want.conclusion || strings.Join(ids, ",") != strings.Join(tt.want.buttons, ",") {
				t.Fatalf("check run = %s/%s %v, want %s/%s %v", run.Status, run.Conclusion, ids, tt.want.status, tt.want.conclusion, tt.want.buttons)
			}
			if run.ExternalID != "shop/checkout" || run.Summary != Markdown(tt.r) || run.Title == "" {
				t.Fatalf("check run %+v does not name the Rollout or carry the comment's summary", run)
			}
		})
	}
	big := paused(true)
	big.Step, big.Steps = 50, 50
	if _, err := CheckRun(big, "n", "").Validate(); err != nil {
		t.Fatalf("step 50's buttons break GitHub's limits: %v", err)
	}
}

func TestParseButton(t *testing.T) {
	tests := []struct {
		id   string
		want Button
		ok   bool
	}{
		{"approve-2", Button{Kind: ButtonApprovePrefix, Step: 2}, true},
		{"approve-50", Button{Kind: ButtonApprovePrefix, Step: 50}, true},
		{"promote", Button{Kind: ButtonPromote}, true},
		{"rollback", Button{Kind: ButtonRollback}, true},
		{"approve-0", Button{}, false},
		{"approve-02", Button{}, false},
		{"approve--1", Button{}, false},
		{"approve-", Button{}, false},
		{"approve-99999999999", Button{}, false},
		{"retry", Button{}, false},
		{"", Button{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseButton(tt.id)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseButton(%q) = %+v, %v; want %+v, %v", tt.id, got, ok, tt.want, tt.ok)
		}
	}
}
