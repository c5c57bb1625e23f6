package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/sluice-dev/sluice/gitops/codeowners"
	"github.com/sluice-dev/sluice/gitops/command"
	"github.com/sluice-dev/sluice/gitops/git"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// The observation of what people write on a release's pull requests
// (comment commands, reviews), who authored the release, and who owns its
// manifests: the facts the approval policy beyond labels asks for.

// actorOf reads what the policy needs to know of a user of the host: their
// permission and the allowed teams they are in. ok is false when the host
// failed (said in the log).
func (r *Reconciler) actorOf(ctx context.Context, s *scope, login string) (Actor, bool) {
	a := Actor{Login: login, Permission: scm.PermissionNone}
	if login == "" {
		return a, true
	}
	log := ctrl.LoggerFrom(ctx)
	// Asked once per user and reconcile (the memo).
	perm, err := s.c.scm.Permission(ctx, login)
	if err != nil && !scm.IsNotFound(err) {
		s.noteSCM(err)
		log.Info("Permission not read", "user", login, "reason", err.Error())
		return a, false
	}
	if err != nil {
		perm = scm.PermissionNone
	}
	a.Permission = perm
	teams, err := r.teamsOf(ctx, s, login, s.policy.TeamsToAsk(login, perm))
	if err != nil {
		s.noteSCM(err)
		log.Info("Team membership not read", "user", login, "reason", err.Error())
		return a, false
	}
	a.Teams = teams
	return a, true
}

// observeConversation reads the sluice commands in the comments of pull
// request n and its reviews, as the policy asks; false when the host
// failed. Comments are read while a release is in progress or aborted
// (commands stop and retry it), reviews only while a step waits for
// approval.
func (r *Reconciler) observeConversation(ctx context.Context, s *scope, o *Observation, n int) bool {
	log := ctrl.LoggerFrom(ctx)
	rel := o.Rollout
	if s.policy.Comments && (rel.InRelease || rel.Aborted != nil) {
		comments, err := s.c.scm.Comments(ctx, n)
		if err != nil {
			s.noteSCM(err)
			log.Info("Comments not read", "pullRequest", n, "reason", err.Error())
			return false
		}
		for _, c := range comments {
			cmds := commandsOf(c, n)
			if len(cmds) == 0 {
				continue
			}
			a, ok := r.actorOf(ctx, s, c.Author)
			if !ok {
				return false
			}
			for _, cmd := range cmds {
				cmd.Actor = a
				o.Comments = append(o.Comments, cmd)
			}
		}
	}
	if s.policy.Reviews && rel.InRelease && rel.Paused {
		reviews, err := s.c.scm.Reviews(ctx, n)
		if err != nil {
			s.noteSCM(err)
			log.Info("Reviews not read", "pullRequest", n, "reason", err.Error())
			return false
		}
		for _, rv := range standing(reviews) {
			a, ok := r.actorOf(ctx, s, rv.Author)
			if !ok {
				return false
			}
			o.Reviews = append(o.Reviews, ReviewVote{Review: rv, Actor: a, PullRequest: n})
		}
	}
	return true
}

// sluiceComment tells whether body is sluice's own comment: it carries the hidden marker of
// scm.CommentMarker.
func sluiceComment(body string) bool {
	return strings.Contains(body, strings.TrimSuffix(scm.CommentMarker("x"), "x -->"))
}

// commandsOf reads the sluice command lines of a comment on pull request n. sluice's own
// comment (it carries the marker of scm.CommentMarker) asks for nothing, whatever it shows.
func commandsOf(c scm.Comment, n int) []CommentCommand {
	if !strings.Contains(strings.ToLower(c.Body), command.Prefix) || sluiceComment(c.Body) {
		return nil
	}
	at := c.UpdatedAt
	if at.IsZero() || at.Before(c.CreatedAt) {
		at = c.CreatedAt
	}
	base := CommentCommand{Comment: c.ID, At: at, Edited: at.After(c.CreatedAt), PullRequest: n}
	cmds, errs := command.Parse(c.Body)
	out := make([]CommentCommand, 0, len(cmds)+len(errs))
	for _, cmd := range cmds {
		cc := base
		cc.Command = cmd
		out = append(out, cc)
	}
	for _, e := range errs {
		cc := base
		cc.Line, cc.Text, cc.Problem = e.Line, e.Text, e.Problem
		out = append(out, cc)
	}
	return out
}

// standing keeps each reviewer's latest word among their reviews: an
// approval, a request for changes, or (their latest review dismissed)
// nothing.
func standing(reviews []scm.Review) []scm.Review {
	latest := map[string]int{}
	var order []string
	for i, rv := range reviews {
		k := strings.ToLower(rv.Author)
		if rv.Author == "" {
			continue
		}
		j, ok := latest[k]
		if !ok {
			order = append(order, k)
		}
		if !ok || !rv.SubmittedAt.Before(reviews[j].SubmittedAt) {
			latest[k] = i
		}
	}
	var out []scm.Review
	for _, k := range order {
		if rv := reviews[latest[k]]; rv.State != scm.ReviewDismissed {
			out = append(out, rv)
		}
	}
	return out
}

// observeHostAuthors reads who authored the commits of the release's pull
// requests, as the host links their e-mails to accounts, unless the policy
// lets authors approve.
func (r *Reconciler) observeHostAuthors(ctx context.Context, s *scope, o *Observation, numbers []int) {
	if s.policy.AllowSelfApproval || !o.Rollout.InRelease {
		return
	}
	for _, n := range numbers {
		commits, err := s.c.scm.PullRequestCommits(ctx, n)
		if err != nil {
			s.noteSCM(err)
			ctrl.LoggerFrom(ctx).Info("Commits of a pull request not read", "pullRequest", n, "reason", err.Error())
			o.HostAuthorsUnread = fmt.Sprintf("the commits of pull request #%d are not read: %v", n, err)
			return
		}
		o.CommitAuthors = append(o.CommitAuthors, commits...)
	}
	o.HostAuthorsUnread = ""
}

// observeGitAuthors reads the authors of the release's commits from Git:
// each commit of the release that is not a merge, and the commits its
// merges brought (a merge's own author merged, they did not write the
// change).
func (r *Reconciler) observeGitAuthors(ctx context.Context, s *scope, o *Observation) {
	if s.policy.AllowSelfApproval || !o.Rollout.InRelease {
		return
	}
	for _, sha := range o.releaseSHAs() {
		commits, err := s.c.git.Brought(ctx, sha)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("Commits of the release not read", "sha", sha, "reason", err.Error())
			o.GitAuthorsUnread = fmt.Sprintf("the commits commit %s brought are not read: %v", short(sha), err)
			continue
		}
		for _, c := range commits {
			if !c.IsMerge() {
				o.CommitAuthors = append(o.CommitAuthors, scm.CommitAuthor{SHA: c.SHA, Email: c.Author.Email, Name: c.Author.Name})
			}
		}
	}
}

// observeCodeOwners reads the owners CODEOWNERS (on the branch head) gives
// the workload's manifest path, when a required approver set names them.
func (r *Reconciler) observeCodeOwners(ctx context.Context, s *scope, o *Observation, path string) {
	wanted := false
	for _, set := range s.policy.Required {
		wanted = wanted || set.CodeOwners
	}
	if !wanted || !o.Rollout.InRelease || !o.Rollout.Paused {
		return
	}
	o.CodeOwners.Path = git.CleanPath(path)
	for _, file := range codeowners.Files {
		data, err := s.c.git.File(ctx, s.head, file)
		if errors.Is(err, git.ErrFileNotFound) {
			continue
		}
		if err != nil {
			o.CodeOwners.Problem = "CODEOWNERS not read: " + err.Error()
			return
		}
		o.CodeOwners.File = file
		f := codeowners.Parse(data)
		if rule, ok := f.Owners(o.CodeOwners.Path, true); ok {
			o.CodeOwners.Owners = rule.Owners
		}
		return
	}
	o.CodeOwners.Problem = "no CODEOWNERS file on branch " + branchOf(s.gg)
}

// observeMembers reads which of the teams of the required approver sets
// (and the code-owner teams) each person who approved is an active member
// of.
func (r *Reconciler) observeMembers(ctx context.Context, s *scope, o *Observation) {
	var ownerTeams []string
	for _, owner := range o.CodeOwners.Owners {
		if team, ok := codeowners.IsTeam(owner); ok {
			ownerTeams = append(ownerTeams, team)
		}
	}
	teams := s.policy.RequiredTeams(ownerTeams)
	if len(teams) == 0 {
		return
	}
	var logins []string
	for _, l := range o.Labels {
		logins = append(logins, l.AddedBy)
	}
	for _, c := range o.Comments {
		logins = append(logins, c.Login)
	}
	for _, rv := range o.Reviews {
		logins = append(logins, rv.Author)
	}
	for _, login := range logins {
		key := strings.ToLower(login)
		if login == "" || o.Members[key] != nil {
			continue
		}
		var in []string
		for _, team := range teams {
			member, err := r.member(ctx, s, login, team)
			if err != nil {
				s.noteSCM(err)
				ctrl.LoggerFrom(ctx).Info("Team membership not read", "user", login, "team", team, "reason", err.Error())
				continue
			}
			if member {
				in = append(in, team)
			}
		}
		if o.Members == nil {
			o.Members = map[string][]string{}
		}
		o.Members[key] = append([]string{}, in...)
	}
}

// member tells whether login is an active member of team ("org/slug"),
// asking the host once per reconcile.
func (r *Reconciler) member(ctx context.Context, s *scope, login, team string) (bool, error) {
	key := strings.ToLower(login) + "\x00" + strings.ToLower(team)
	s.mu.Lock()
	m, ok := s.members[key]
	s.mu.Unlock()
	if ok {
		return m, nil
	}
	org, slug, _ := strings.Cut(team, "/")
	m, err := s.c.scm.TeamMember(ctx, org, slug, login)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	s.members[key] = m
	s.mu.Unlock()
	return m, nil
}
