package gitlabfake

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Signature is who made a mirrored commit and when.
type Signature struct {
	// Name and Email of the author.
	Name, Email string
	// When the commit was authored.
	When time.Time
}

// Commit is a commit made in a real Git repository (a test's Git server), to be mirrored on the
// fake under the same SHA.
type Commit struct {
	// SHA is the commit's name in Git.
	SHA string
	// Parents are its parents' SHAs, the first parent first.
	Parents []string
	// Files are the files of its tree, by path.
	Files map[string]string
	// Message is its whole message.
	Message string
	// Author wrote it.
	Author Signature
}

// MirrorPush records a push to branch made in a real Git repository, as GitLab records a push:
// the commits, parents first, each under its own SHA (those the fake knows already are skipped),
// the branch moved to the last one, the open merge requests of the branch brought up to date (a
// system note "added N commits" and a Merge Request Hook "update" with oldrev), and one Push Hook
// by pusher. Mirror every ancestor of a commit before it (or with it): the fake merges, reverts
// and relates merge requests to commits by walking the parents it knows. The statuses posted on
// a mirrored commit, the merge requests naming it and the reverts of it then line up with what
// the Git server serves.
func (s *Server) MirrorPush(projectPath, branch, pusher string, commits []Commit) {
	if len(commits) == 0 {
		return
	}
	s.mu.Lock()
	p := s.mustProject(projectPath)
	u := s.mustUser(pusher)
	for _, c := range commits {
		if p.repo.commits[c.SHA] != nil {
			continue
		}
		p.repo.commits[c.SHA] = &commit{sha: c.SHA, parents: append([]string(nil), c.Parents...), files: maps.Clone(c.Files),
			message: c.Message, author: sig{name: c.Author.Name, email: c.Author.Email, when: c.Author.When.UTC()}}
	}
	before := p.repo.branches[branch]
	after := commits[len(commits)-1].SHA
	p.repo.branches[branch] = after
	deliveries := s.pushHooks(p, u, branch, before, after)
	for _, mr := range p.mrs {
		if mr.state != "opened" || mr.source != branch || mr.head == after {
			continue
		}
		oldrev, had := mr.head, len(mr.commits)
		s.refreshMR(p, mr)
		if added := len(mr.commits) - had; added > 0 {
			s.addSystemNote(mr, u, plural(added, "added %d commit", "added %d commits"))
		}
		deliveries = append(deliveries, s.mrHook(p, mr, u, "update", hookChanges{oldrev: oldrev})...)
	}
	s.mu.Unlock()
	s.deliver(deliveries)
}

// MirrorMerge records that merge request iid was merged by merger into its target branch as the
// commit sha, mirrored with MirrorPush first: its merge commit when sha has the merge request's
// head as a parent other than the first, the head itself when the target was fast-forwarded to
// it, else its squash commit. It delivers the Merge Request Hook "merge", as GitLab does after
// the push of the target branch.
func (s *Server) MirrorMerge(projectPath string, iid int64, sha, merger string) {
	s.mu.Lock()
	p := s.mustProject(projectPath)
	mr := s.mustMR(p, iid)
	u := s.mustUser(merger)
	c := p.repo.commits[sha]
	switch {
	case c == nil:
		s.mu.Unlock()
		panic(fmt.Sprintf("gitlabfake: merge of !%d as %s: mirror the commit first", iid, sha))
	case mr.state != "opened":
		s.mu.Unlock()
		panic(fmt.Sprintf("gitlabfake: merge request !%d is %s", iid, mr.state))
	case !p.repo.ancestors(p.repo.branches[mr.target])[sha]:
		s.mu.Unlock()
		panic(fmt.Sprintf("gitlabfake: merge of !%d as %s: the commit is not on %s", iid, sha, mr.target))
	}
	switch {
	case sha == mr.head:
	case len(c.parents) > 1 && slices.Contains(c.parents[1:], mr.head):
		mr.mergeCommit = sha
	default:
		mr.squashCommit = sha
	}
	now := s.now()
	mr.state, mr.mergedAt, mr.mergedBy, mr.updated = "merged", &now, u, now
	deliveries := s.mrHook(p, mr, u, "merge", hookChanges{})
	s.mu.Unlock()
	s.deliver(deliveries)
}

// HasCommit tells whether the fake knows the commit sha of project (made on it, or mirrored).
func (s *Server) HasCommit(projectPath, sha string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mustProject(projectPath).repo.commits[sha] != nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf(one, n)
	}
	return fmt.Sprintf(many, n)
}
