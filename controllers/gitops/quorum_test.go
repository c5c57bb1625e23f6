package gitops

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/gitops/command"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// comment is a comment command by a writer, written at at, on the release's
// pull request.
func comment(id int64, by string, at time.Time, c command.Command) CommentCommand {
	return CommentCommand{Command: c, Comment: id, Actor: Actor{Login: by, Permission: scm.PermissionWrite}, At: at, PullRequest: 42}
}

// review is by's latest review of the release's pull request, in state, at.
func review(id int64, by string, state scm.ReviewState, at time.Time) ReviewVote {
	return ReviewVote{Review: scm.Review{ID: id, Author: by, State: state, SubmittedAt: at}, Actor: Actor{Login: by, Permission: scm.PermissionWrite},
		PullRequest: 42}
}

// quorumOf is an observation at step 1 of 3 paused whose policy needs n
// approvals.
func quorumOf(n int32, f func(*Observation)) Observation {
	return with(atStep(1), func(o *Observation) {
		o.Policy.MinApprovals = n
		o.Policy.Comments, o.Policy.Reviews = true, true
		o.Rollout.StartedAt = paused.Add(-time.Hour)
		o.Now = after.Add(time.Minute)
		if f != nil {
			f(o)
		}
	})
}

var (
	approveCmd = command.Command{Verb: command.Approve}
	later      = after.Add(time.Minute)
)

func TestDecide_policy(t *testing.T) {
	tests := []struct {
		name string
		o    Observation
		// wantBy/wantVia/wantStep/wantAction describe the approval applied ("" By: none).
		wantBy, wantVia string
		wantStep        int32
		wantAction      Action
		wantApprovers   []string
		wantReasons     []string
		// wantDescription is the pending status of the release ("" : not checked).
		wantDescription string
		wantWaiting     []string
	}{
		{
			name:            "two approvers needed: one label waits, saying who approved and what is missing",
			o:               quorumOf(2, func(o *Observation) { o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)} }),
			wantDescription: "step 1/3 paused: 1 of 2 approvals (alice); waiting for 1 more",
			wantWaiting:     []string{"1 more"},
		},
		{
			name: "none yet: 0 of 2",
			o:    quorumOf(2, nil), wantDescription: "step 1/3 paused: 0 of 2 approvals; waiting for 2 more", wantWaiting: []string{"2 more"},
		},
		{
			name: "a label and a comment by another person approve, recording both",
			o: quorumOf(2, func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
				o.Comments = []CommentCommand{comment(7, "bob", later, approveCmd)}
			}),
			wantBy: "alice, bob", wantVia: "github-label+github-comment", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"alice", "bob"},
			wantDescription: "step 1/3 approved by alice, bob",
		},
		{
			name: "a review counts as the reviewer's approval",
			o: quorumOf(2, func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
				o.Reviews = []ReviewVote{review(9, "carol", scm.ReviewApproved, later)}
			}),
			wantBy: "alice, carol", wantVia: "github-label+github-review", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"alice", "carol"},
		},
		{
			name: "a check run's button press counts as its presser's approval toward the quorum",
			o: quorumOf(2, func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
				o.Presses = []ButtonPress{press("approve-1", "bob", scm.PermissionWrite, later)}
			}),
			wantBy: "alice, bob", wantVia: "github-label+github-check-run", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"alice", "bob"},
		},
		{
			name: "a press by someone who also labelled counts once",
			o: quorumOf(2, func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
				o.Presses = []ButtonPress{press("approve-1", "alice", scm.PermissionWrite, later)}
			}),
			wantWaiting: []string{"1 more"},
		},
		{
			name: "a press by an author of the release's commits is refused",
			o: quorumOf(1, func(o *Observation) {
				o.CommitAuthors = []scm.CommitAuthor{{SHA: tcSHA, Login: "pair"}}
				o.Presses = []ButtonPress{press("approve-1", "pair", scm.PermissionWrite, later)}
			}),
			wantReasons: []string{ReasonSelfApproval},
		},
		{
			name: "the same person through every source counts once",
			o: quorumOf(2, func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
				o.Comments = []CommentCommand{comment(7, "Alice", later, approveCmd)}
				o.Reviews = []ReviewVote{review(9, "alice", scm.ReviewApproved, later)}
			}),
			wantDescription: "step 1/3 paused: 1 of 2 approvals (Alice); waiting for 1 more", wantWaiting: []string{"1 more"},
		},
		{
			name: "the pull request's author cannot approve by comment",
			o: quorumOf(1, func(o *Observation) {
				o.Authors = map[int]string{42: "dev"}
				o.Comments = []CommentCommand{comment(7, "dev", later, approveCmd)}
			}),
			wantReasons: []string{ReasonSelfApproval}, wantDescription: "step 1/3 paused: add label sluice/approve to continue",
		},
		{
			name: "nor by a review",
			o: quorumOf(1, func(o *Observation) {
				o.Authors = map[int]string{42: "dev"}
				o.Reviews = []ReviewVote{review(9, "dev", scm.ReviewApproved, later)}
			}),
			wantReasons: []string{ReasonSelfApproval},
		},
		{
			name: "an author of one of the release's commits cannot approve",
			o: quorumOf(1, func(o *Observation) {
				o.Authors = map[int]string{42: "dev"}
				o.CommitAuthors = []scm.CommitAuthor{{SHA: tcSHA, Login: "pair", Email: "pair@example.com"}}
				o.Labels = []Label{label("sluice/approve", "pair", scm.PermissionWrite, after)}
			}),
			wantReasons: []string{ReasonSelfApproval},
		},
		{
			name: "nor through a trailer signed with their e-mail",
			o: quorumOf(1, func(o *Observation) {
				o.CommitAuthors = []scm.CommitAuthor{{SHA: tcSHA, Email: "pair@example.com"}}
				o.Trailers = []TrailerCommit{{SHA: revert, Identity: "Pair@example.com", When: after,
					Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 1}}}}
			}),
			wantReasons: []string{ReasonSelfApproval},
		},
		{
			name: "while the pull requests' commits cannot be read, nobody is known not to be an author",
			o: quorumOf(1, func(o *Observation) {
				o.HostAuthorsUnread = "the commits of pull request #42 are not read: 502 Bad Gateway"
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
			}),
			wantReasons: []string{ReasonAuthorsUnknown},
		},
		{
			name: "nor, for a trailer, while the release's Git commits cannot be read",
			o: quorumOf(1, func(o *Observation) {
				o.GitAuthorsUnread = "the commits commit 111111111111 brought are not read: shallow"
				o.Trailers = []TrailerCommit{{SHA: tcSHA, Identity: "rm@example.com", When: after,
					Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 1}}}}
			}),
			wantReasons: []string{ReasonAuthorsUnknown},
		},
		{
			name: "allowSelfApproval lets the authors approve",
			o: quorumOf(2, func(o *Observation) {
				o.Policy.AllowSelfApproval = true
				o.HostAuthorsUnread = "not read: the policy lets authors approve"
				o.Authors = map[int]string{42: "dev"}
				o.CommitAuthors = []scm.CommitAuthor{{SHA: tcSHA, Login: "pair"}}
				o.Comments = []CommentCommand{comment(7, "dev", after, approveCmd)}
				o.Reviews = []ReviewVote{review(9, "pair", scm.ReviewApproved, later)}
			}),
			wantBy: "dev, pair", wantVia: "github-comment+github-review", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"dev", "pair"},
		},
		{
			name: "the author may still reject by comment",
			o: quorumOf(2, func(o *Observation) {
				o.Authors = map[int]string{42: "dev"}
				o.Comments = []CommentCommand{comment(7, "dev", later, command.Command{Verb: command.Reject})}
			}),
			wantBy: "dev", wantVia: "github-comment", wantAction: ActionRollback,
		},
		{
			name: "a required user set waits for its member",
			o: quorumOf(1, func(o *Observation) {
				o.Policy.Required = []RequiredSet{{Name: "release managers", Users: []string{"lead"}}}
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
			}),
			wantDescription: "step 1/3 paused: 1 of 1 approval (alice); waiting for an approval by release managers (lead)",
			wantWaiting:     []string{"an approval by release managers (lead)"},
		},
		{
			name: "and applies once the member approves, both recorded",
			o: quorumOf(1, func(o *Observation) {
				o.Policy.Required = []RequiredSet{{Name: "release managers", Users: []string{"lead"}}}
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
				o.Reviews = []ReviewVote{review(9, "Lead", scm.ReviewApproved, later)}
			}),
			wantBy: "alice, Lead", wantVia: "github-label+github-review", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"alice", "Lead"},
		},
		{
			name: "a required team counts its active members",
			o: quorumOf(1, func(o *Observation) {
				o.Policy.Required = []RequiredSet{{Teams: []string{"acme/sre"}}}
				o.Members = map[string][]string{"ops": {"acme/sre"}}
				o.Comments = []CommentCommand{comment(7, "ops", later, approveCmd)}
			}),
			wantBy: "ops", wantVia: "github-comment", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"ops"},
		},
		{
			name: "someone outside the team does not",
			o: quorumOf(1, func(o *Observation) {
				o.Policy.Required = []RequiredSet{{Teams: []string{"acme/sre"}, Min: 1}}
				o.Members = map[string][]string{"alice": {}}
				o.Comments = []CommentCommand{comment(7, "alice", later, approveCmd)}
			}),
			wantWaiting: []string{"an approval by one of acme/sre"},
		},
		{
			name: "code owners of the manifest path: a user owner approves",
			o: quorumOf(1, func(o *Observation) {
				o.Policy.Required = []RequiredSet{{CodeOwners: true}}
				o.CodeOwners = CodeOwners{File: ".github/CODEOWNERS", Path: "apps", Owners: []string{"@acme/payments", "@alice"}}
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
			}),
			wantBy: "alice", wantVia: "github-label", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"alice"},
		},
		{
			name: "so does a member of an owning team",
			o: quorumOf(1, func(o *Observation) {
				o.Policy.Required = []RequiredSet{{CodeOwners: true}}
				o.CodeOwners = CodeOwners{File: ".github/CODEOWNERS", Path: "apps", Owners: []string{"@acme/payments", "@alice"}}
				o.Members = map[string][]string{"bob": {"acme/payments"}}
				o.Reviews = []ReviewVote{review(9, "bob", scm.ReviewApproved, later)}
			}),
			wantBy: "bob", wantVia: "github-review", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"bob"},
		},
		{
			name: "someone who owns nothing there waits for an owner, naming them",
			o: quorumOf(1, func(o *Observation) {
				o.Policy.Required = []RequiredSet{{CodeOwners: true}}
				o.CodeOwners = CodeOwners{File: ".github/CODEOWNERS", Path: "apps", Owners: []string{"@acme/payments", "@alice"}}
				o.Labels = []Label{label("sluice/approve", "carol", scm.PermissionWrite, after)}
			}),
			wantWaiting: []string{"an approval by a code owner of apps (@acme/payments @alice)"},
		},
		{
			name: "no CODEOWNERS: the wait says so",
			o: quorumOf(1, func(o *Observation) {
				o.Policy.Required = []RequiredSet{{CodeOwners: true}}
				o.CodeOwners = CodeOwners{Path: "apps", Problem: "no CODEOWNERS file on branch main"}
				o.Labels = []Label{label("sluice/approve", "carol", scm.PermissionWrite, after)}
			}),
			wantWaiting: []string{"an approval by a code owner of apps (no CODEOWNERS file on branch main)"},
		},
		{
			name: "a set for step 2 only does not hold step 1",
			o: quorumOf(1, func(o *Observation) {
				o.Policy.Required = []RequiredSet{{Name: "security", Steps: []int32{2}, Users: []string{"sec"}}}
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
			}),
			wantBy: "alice", wantVia: "github-label", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"alice"},
		},
		{
			name: "but holds a full promotion at step 1 to step 1 only",
			o: quorumOf(1, func(o *Observation) {
				o.Policy.Required = []RequiredSet{{Name: "security", Steps: []int32{2}, Users: []string{"sec"}}}
				o.Labels = []Label{label("sluice/promote-full", "alice", scm.PermissionWrite, after)}
			}),
			wantBy: "alice", wantVia: "github-label", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"alice"},
		},
		{
			name: "a full promotion by the whole quorum promotes fully",
			o: quorumOf(2, func(o *Observation) {
				o.Labels = []Label{label("sluice/promote-full", "alice", scm.PermissionWrite, after)}
				o.Comments = []CommentCommand{comment(7, "bob", later, command.Command{Verb: command.PromoteFull})}
			}),
			wantBy: "alice, bob", wantVia: "github-label+github-comment", wantStep: 3, wantAction: ActionPromoteFull, wantApprovers: []string{"alice", "bob"},
		},
		{
			name: "a full promotion and an approval approve the step",
			o: quorumOf(2, func(o *Observation) {
				o.Labels = []Label{label("sluice/promote-full", "alice", scm.PermissionWrite, after)}
				o.Comments = []CommentCommand{comment(7, "bob", later, approveCmd)}
			}),
			wantBy: "alice, bob", wantVia: "github-label+github-comment", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"alice", "bob"},
		},
		{
			name: "an approval older than expireAfter does not count, and the message says it expired",
			o: quorumOf(2, func(o *Observation) {
				o.Policy.ExpireAfter = time.Hour
				o.Now = after.Add(90 * time.Minute)
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
				o.Comments = []CommentCommand{comment(7, "bob", after.Add(80*time.Minute), approveCmd)}
			}),
			wantReasons:     []string{ReasonApprovalExpired},
			wantDescription: "step 1/3 paused: 1 of 2 approvals (bob); waiting for 1 more", wantWaiting: []string{"1 more"},
		},
		{
			name: "both within expireAfter: approved",
			o: quorumOf(2, func(o *Observation) {
				o.Policy.ExpireAfter = time.Hour
				o.Now = after.Add(50 * time.Minute)
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
				o.Comments = []CommentCommand{comment(7, "bob", after.Add(40*time.Minute), approveCmd)}
			}),
			wantBy: "alice, bob", wantVia: "github-label+github-comment", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"alice", "bob"},
		},
		{
			name: "a comment written before the step paused does not approve it",
			o: quorumOf(1, func(o *Observation) {
				o.Comments = []CommentCommand{comment(7, "bob", before, approveCmd)}
			}),
			wantReasons: []string{ReasonCommentPredatesPause},
		},
		{
			name: "edited after the pause, it does, from its edit",
			o: quorumOf(1, func(o *Observation) {
				c := comment(7, "bob", later, approveCmd)
				c.Edited = true
				o.Comments = []CommentCommand{c}
			}),
			wantBy: "bob", wantVia: "github-comment", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"bob"},
		},
		{
			name:        "a review submitted before the step paused does not approve it",
			o:           quorumOf(1, func(o *Observation) { o.Reviews = []ReviewVote{review(9, "carol", scm.ReviewApproved, before)} }),
			wantReasons: []string{ReasonReviewPredatesPause},
		},
		{
			name: "a later review requesting changes withdraws the reviewer's approvals",
			o: quorumOf(1, func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "carol", scm.PermissionWrite, after)}
				o.Reviews = []ReviewVote{review(9, "carol", scm.ReviewChangesRequested, later)}
			}),
			wantReasons: []string{ReasonApprovalWithdrawn},
		},
		{
			name: "an approval given after the request for changes stands",
			o: quorumOf(1, func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "carol", scm.PermissionWrite, later)}
				o.Reviews = []ReviewVote{review(9, "carol", scm.ReviewChangesRequested, after)}
			}),
			wantBy: "carol", wantVia: "github-label", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"carol"},
		},
		{
			name: "a comment naming the step the release waits at approves",
			o: quorumOf(1, func(o *Observation) {
				o.Comments = []CommentCommand{comment(7, "bob", later, command.Command{Verb: command.Approve, Step: 1})}
			}),
			wantBy: "bob", wantVia: "github-comment", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"bob"},
		},
		{
			name: "one naming a later step does not",
			o: quorumOf(1, func(o *Observation) {
				o.Comments = []CommentCommand{comment(7, "bob", later, command.Command{Verb: command.Approve, Step: 2})}
			}),
			wantReasons: []string{ReasonOtherStep},
		},
		{
			name: "nor one naming a passed step",
			o: with(quorumOf(1, nil), func(o *Observation) {
				o.Rollout.Step = 2
				o.Comments = []CommentCommand{comment(7, "bob", later, command.Command{Verb: command.Approve, Step: 1})}
			}),
			wantReasons: []string{ReasonOlderStep},
		},
		{
			name: "a comment for another Rollout is not for this one",
			o: quorumOf(1, func(o *Observation) {
				o.Comments = []CommentCommand{comment(7, "bob", later, command.Command{Verb: command.Approve, Rollout: "shop/cart"})}
			}),
		},
		{
			name: "a comment by a reader is refused",
			o: quorumOf(1, func(o *Observation) {
				c := comment(7, "joe", later, approveCmd)
				c.Permission = scm.PermissionRead
				o.Comments = []CommentCommand{c}
			}),
			wantReasons: []string{ReasonInsufficientPermission},
		},
		{
			name: "a malformed command line is reported with its fix",
			o: quorumOf(1, func(o *Observation) {
				c := comment(7, "bob", later, command.Command{})
				c.Text, c.Problem = "/sluice aprove", `unknown command "aprove"`
				o.Comments = []CommentCommand{c}
			}),
			wantReasons: []string{ReasonInvalidCommand},
		},
		{
			name: "with a host, a trailer does not count toward a quorum of two",
			o: quorumOf(2, func(o *Observation) {
				o.Host = scm.HostGitHub
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
				o.Trailers = []TrailerCommit{{SHA: tcSHA, Identity: "rm@example.com", When: after,
					Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 1}}}}
			}),
			wantReasons: []string{ReasonGitApprovalNotCounted}, wantWaiting: []string{"1 more"},
		},
		{
			name: "from Git alone, two committers make a quorum of two",
			o: quorumOf(2, func(o *Observation) {
				o.Trailers = []TrailerCommit{
					{SHA: tcSHA, Identity: "rm@example.com", When: after, Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 2}}},
					{SHA: revert, Identity: "qa@example.com", When: later, Directives: []git.Directive{{Action: git.ActionApprove, Namespace: "shop", Name: "checkout", Step: 1}}},
				}
			}),
			wantBy: "rm@example.com, qa@example.com", wantVia: "git-trailer", wantStep: 1, wantAction: ActionApprove, wantApprovers: []string{"rm@example.com", "qa@example.com"},
		},
		{
			name: "a step already approved is not approved again while the Rollout catches up",
			o: quorumOf(2, func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
				o.Comments = []CommentCommand{comment(7, "bob", later, approveCmd), comment(8, "carol", later, approveCmd)}
				o.Applied = []Applied{{Action: ActionApprove, Step: 1, By: "alice, bob", Key: stepKey(1)}}
			}),
			wantDescription: "step 1/3 approved by alice, bob",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.o)
			switch {
			case tt.wantBy == "" && d.Apply != nil:
				t.Fatalf("applied %+v, want nothing", d.Apply)
			case tt.wantBy != "" && d.Apply == nil:
				t.Fatalf("applied nothing (rejections %+v, message %q), want %s by %s", d.Rejections, d.Message, tt.wantAction, tt.wantBy)
			case d.Apply != nil:
				a := d.Apply
				if a.By != tt.wantBy || a.Via != tt.wantVia || a.Step != tt.wantStep || a.Action != tt.wantAction {
					t.Errorf("applied %s step %d by %q via %q, want %s step %d by %q via %q", a.Action, a.Step, a.By, a.Via, tt.wantAction, tt.wantStep, tt.wantBy, tt.wantVia)
				}
				var got []string
				for _, p := range a.Approvers {
					got = append(got, p.By)
					if len(p.Keys) == 0 {
						t.Errorf("approver %+v has no keys", p)
					}
				}
				if strings.Join(got, ",") != strings.Join(tt.wantApprovers, ",") {
					t.Errorf("approvers %v, want %v", got, tt.wantApprovers)
				}
			}
			var reasons []string
			for _, r := range d.Rejections {
				reasons = append(reasons, r.Reason)
				if r.By == "" || r.Via == "" || r.At.IsZero() {
					t.Errorf("rejection %+v does not say who, how and when", r)
				}
			}
			if strings.Join(reasons, ",") != strings.Join(tt.wantReasons, ",") {
				t.Errorf("rejections %+v, want reasons %v", d.Rejections, tt.wantReasons)
			}
			if tt.wantDescription != "" && (len(d.Posts) == 0 || d.Posts[0].Status.Description != tt.wantDescription) {
				t.Errorf("posts %+v, want the description %q", d.Posts, tt.wantDescription)
			}
			if tt.wantWaiting != nil && (d.Quorum == nil || strings.Join(d.Quorum.Waiting, "|") != strings.Join(tt.wantWaiting, "|")) {
				t.Errorf("quorum %+v, want waiting for %q", d.Quorum, tt.wantWaiting)
			}
		})
	}
}

func TestDecide_commentStops(t *testing.T) {
	reject := command.Command{Verb: command.Reject}
	rollback := command.Command{Verb: command.Rollback}
	retry := command.Command{Verb: command.Retry}
	for _, tt := range []struct {
		name         string
		o            Observation
		want         *Intent
		wantReasons  []string
		wantDescribe string
	}{
		{
			name: "/sluice reject aborts the release, recorded as a rejection by who wrote it",
			o:    quorumOf(1, func(o *Observation) { o.Comments = []CommentCommand{comment(7, "ops", later, reject)} }),
			want: &Intent{Action: ActionRollback, Rejected: true, By: "ops", Via: "github-comment", At: later, PullRequest: 42,
				Key: "comment:7@" + later.Format(time.RFC3339)},
			wantDescribe: "rejected at step 1/3 by ops",
		},
		{
			name: "a rejection wins over a rollback and an approval",
			o: quorumOf(1, func(o *Observation) {
				o.Labels = []Label{label("sluice/approve", "jane", scm.PermissionWrite, after), label("sluice/rollback", "ops", scm.PermissionWrite, after)}
				o.Comments = []CommentCommand{comment(7, "sec", later, reject)}
			}),
			want: &Intent{Action: ActionRollback, Rejected: true, By: "sec", Via: "github-comment", At: later, PullRequest: 42,
				Key: "comment:7@" + later.Format(time.RFC3339)},
			wantDescribe: "rejected at step 1/3 by sec",
		},
		{
			name: "/sluice rollback while a step is in progress rolls back",
			o: quorumOf(1, func(o *Observation) {
				o.Rollout.Paused = false
				o.Comments = []CommentCommand{comment(7, "ops", before, rollback)}
			}),
			want:         &Intent{Action: ActionRollback, By: "ops", Via: "github-comment", At: before, PullRequest: 42, Key: "comment:7@" + before.Format(time.RFC3339)},
			wantDescribe: "aborted at step 1/3 by ops",
		},
		{
			name: "a stop written before the release started is refused",
			o: quorumOf(1, func(o *Observation) {
				o.Comments = []CommentCommand{comment(7, "ops", paused.Add(-2*time.Hour), reject)}
			}),
			wantReasons: []string{ReasonCommentPredatesPause},
		},
		{
			name: "a stop by a reader is refused",
			o: quorumOf(1, func(o *Observation) {
				c := comment(7, "joe", later, rollback)
				c.Permission = scm.PermissionRead
				o.Comments = []CommentCommand{c}
			}),
			wantReasons: []string{ReasonInsufficientPermission},
		},
		{
			name: "a stop already applied is not applied again",
			o: quorumOf(1, func(o *Observation) {
				o.Comments = []CommentCommand{comment(7, "ops", later, reject)}
				o.Applied = []Applied{{Action: ActionRollback, Rejected: true, By: "ops", Key: "comment:7@" + later.Format(time.RFC3339)}}
			}),
		},
		{
			name: "aborted: /sluice retry written after the abort retries",
			o:    with(abortedAt(), func(o *Observation) { o.Comments = []CommentCommand{comment(7, "lead", after, retry)} }),
			want: &Intent{Action: ActionRetry, By: "lead", Via: "github-comment", At: after, PullRequest: 42, Key: "comment:7@" + after.Format(time.RFC3339)},
		},
		{
			name:        "aborted: one written before the abort is refused",
			o:           with(abortedAt(), func(o *Observation) { o.Comments = []CommentCommand{comment(7, "lead", before, retry)} }),
			wantReasons: []string{ReasonCommentPredatesPause},
		},
		{
			name:        "aborted: /sluice approve says what to do",
			o:           with(abortedAt(), func(o *Observation) { o.Comments = []CommentCommand{comment(7, "jane", after, approveCmd)} }),
			wantReasons: []string{ReasonRolledBack},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.o)
			if !sameIntent(d.Apply, tt.want) {
				t.Errorf("Apply = %+v, want %+v", d.Apply, tt.want)
			}
			var reasons []string
			for _, r := range d.Rejections {
				reasons = append(reasons, r.Reason)
			}
			if strings.Join(reasons, ",") != strings.Join(tt.wantReasons, ",") {
				t.Errorf("rejections %+v, want %v", d.Rejections, tt.wantReasons)
			}
			if tt.wantDescribe != "" && (len(d.Posts) == 0 || d.Posts[0].Status.Description != tt.wantDescribe) {
				t.Errorf("posts %+v, want %q", d.Posts, tt.wantDescribe)
			}
		})
	}
}

// An approval toward a quorum that will expire makes the gate look again
// when it does.
func TestDecide_expiringApproval_wakesWhenItExpires(t *testing.T) {
	o := quorumOf(2, func(o *Observation) {
		o.Policy.ExpireAfter = time.Hour
		o.Labels = []Label{label("sluice/approve", "alice", scm.PermissionWrite, after)}
	})
	if d := Decide(o); d.Apply != nil || !d.WakeAt.Equal(after.Add(time.Hour)) {
		t.Errorf("decision %+v, want to wake at %s", d, after.Add(time.Hour))
	}
}

func TestStanding_keepsEachReviewersLatestWord(t *testing.T) {
	r := func(by string, state scm.ReviewState, at time.Time) scm.Review {
		return scm.Review{Author: by, State: state, SubmittedAt: at}
	}
	got := standing([]scm.Review{
		r("dave", scm.ReviewApproved, before),
		r("erin", scm.ReviewApproved, before),
		r("frank", scm.ReviewChangesRequested, before),
		r("dave", scm.ReviewDismissed, after),        // dave's approval dismissed: nothing stands
		r("erin", scm.ReviewChangesRequested, after), // erin changed her mind
		r("Frank", scm.ReviewApproved, later),        // frank approved after all
	})
	var words []string
	for _, rv := range got {
		words = append(words, rv.Author+" "+string(rv.State))
	}
	if w := "erin changes_requested, Frank approved"; strings.Join(words, ", ") != w {
		t.Errorf("standing = %s, want %s", strings.Join(words, ", "), w)
	}
}

func TestCommandsOf_readsEveryLineAndTheEditTime(t *testing.T) {
	c := scm.Comment{ID: 5, Author: "bob", Body: "LGTM\n/sluice approve rollout=checkout\n/sluice aprove", CreatedAt: before, UpdatedAt: after}
	got := commandsOf(c, 42)
	if len(got) != 2 || got[0].Verb != command.Approve || got[0].Rollout != "checkout" || !got[0].At.Equal(after) || !got[0].Edited ||
		got[1].Problem == "" || got[1].Text != "/sluice aprove" || got[1].PullRequest != 42 {
		t.Errorf("commands = %+v", got)
	}
	if got := commandsOf(scm.Comment{Body: "no commands here"}, 42); got != nil {
		t.Errorf("commands of a plain comment = %+v", got)
	}
	sticky := scm.Comment{Body: "Step 1/3 paused\n/sluice approve\n\n" + scm.CommentMarker("shop/checkout")}
	if got := commandsOf(sticky, 42); got != nil {
		t.Errorf("commands of sluice's own comment = %+v", got)
	}
}
