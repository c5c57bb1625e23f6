// Package gitopsworld is what the GitOps user stories (test/gitops) and the
// demo (test/demo) share about their setting: a repository on the test Git
// server (test/gitserver), which Flux and sluice read, mirrored on the fake
// GitHub (test/githubfake), which holds its pull requests and commit
// statuses, and the moves a team makes on it: merging a pull request,
// reverting a commit, pushing by hand.
//
// Git is the source of truth: every commit is written to the Git server
// first and then recorded on the fake under the same SHA (MirrorCommit), so
// that statuses posted on it and pull requests naming it line up with what
// Flux applies.
//
// GitLabProject is the same setting hosted on the fake GitLab
// (test/gitlabfake) instead, for the GitLab stories (test/gitopsgitlab).
//
// It is test support, not used by sluice.
package gitopsworld

import (
	"fmt"
	"slices"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// Repo is one repository of the setting.
type Repo struct {
	// Git is the repository on the test Git server.
	Git *gitserver.Repo
	// GitHub is the fake GitHub that hosts it.
	GitHub *githubfake.Server
	// Name is its owner/name on GitHub ("acme/shop").
	Name string
}

// PullRequest is a pull request opened with OpenPullRequest.
type PullRequest struct {
	// Number is its number on GitHub.
	Number int
	// Branch is its head branch, the same name in Git and on GitHub.
	Branch string
	// Title is its title, also the message of its one commit.
	Title string
}

// Mirror records the commit sha of the Git repository on GitHub as the new
// head of branch.
func (r Repo) Mirror(branch, sha string) error {
	c, err := r.Git.CommitObject(sha)
	if err != nil {
		return fmt.Errorf("reading commit %s: %w", sha, err)
	}
	r.mirror(branch, c)
	return nil
}

func (r Repo) mirror(branch string, c *object.Commit) {
	parents := make([]string, len(c.ParentHashes))
	for i, p := range c.ParentHashes {
		parents[i] = p.String()
	}
	r.GitHub.MirrorCommit(r.Name, branch, c.Hash.String(), parents, c.Message,
		githubfake.Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When})
}

// OpenPullRequest opens a pull request by author that changes files: a
// branch "pr-<random>" from main's head with one commit, in Git and on
// GitHub.
func (r Repo) OpenPullRequest(title, author string, files map[string]string) (PullRequest, error) {
	return r.OpenPullRequestOn("pr-"+rand.String(4), title, author, files)
}

// OpenPullRequestOn opens a pull request as OpenPullRequest does, from the
// named branch.
func (r Repo) OpenPullRequestOn(branch, title, author string, files map[string]string) (PullRequest, error) {
	head, err := r.Git.Head("main")
	if err != nil {
		return PullRequest{}, err
	}
	if err := r.Git.Branch(branch, head); err != nil {
		return PullRequest{}, err
	}
	// The pull request's author wrote the commit, in Git and in GitHub's
	// copy of the branch.
	by := &object.Signature{Name: author, Email: author + "@example.com"}
	if _, err := r.Git.Commit(branch, gitserver.Change{Message: title, Files: files, Author: by}); err != nil {
		return PullRequest{}, fmt.Errorf("committing on %s: %w", branch, err)
	}
	// GitHub links the author's e-mail to their account, as it does for a
	// verified e-mail: the pull request's commits name the author.
	r.GitHub.SetUserEmail(author, author+"@example.com")
	r.GitHub.Commit(r.Name, branch, "main", title, map[string]string{"pr/" + branch: title}, githubfake.Signature{Name: author, Email: author + "@example.com"})
	number := r.GitHub.OpenPullRequest(r.Name, branch, "main", title, author)
	return PullRequest{Number: number, Branch: branch, Title: title}, nil
}

// Merge merges the pull request into main as merger, with a merge commit
// in Git (GitHub's message, the Git server's test author) mirrored on
// GitHub, and returns the merge commit.
func (r Repo) Merge(pr PullRequest, merger string) (string, error) {
	owner, _, _ := strings.Cut(r.Name, "/")
	merge, err := r.Git.Merge("main", pr.Branch, gitserver.MergeOptions{
		Message: fmt.Sprintf("Merge pull request #%d from %s/%s\n\n%s", pr.Number, owner, pr.Branch, pr.Title),
	})
	if err != nil {
		return "", fmt.Errorf("merging pull request #%d: %w", pr.Number, err)
	}
	if err := r.Mirror("main", merge); err != nil {
		return "", err
	}
	r.GitHub.MirrorMerge(r.Name, pr.Number, merge, merger)
	return merge, nil
}

// MergePullRequest opens a pull request by author that changes files and
// merges it as merger. It returns the pull request's number and the merge
// commit.
func (r Repo) MergePullRequest(title, author, merger string, files map[string]string) (int, string, error) {
	pr, err := r.OpenPullRequest(title, author, files)
	if err != nil {
		return 0, "", err
	}
	merge, err := r.Merge(pr, merger)
	return pr.Number, merge, err
}

// Revert reverts the commit sha on main, as `git revert -m 1` does for a
// merge (plain `git revert` otherwise), mirrors the revert on GitHub and
// returns it.
func (r Repo) Revert(sha string) (string, error) {
	c, err := r.Git.CommitObject(sha)
	if err != nil {
		return "", fmt.Errorf("reading commit %s: %w", sha, err)
	}
	o := gitserver.RevertOptions{}
	if len(c.ParentHashes) > 1 {
		o.Mainline = 1
	}
	revert, err := r.Git.Revert("main", sha, o)
	if err != nil {
		return "", err
	}
	return revert, r.Mirror("main", revert)
}

// Push is what GitHub saw of a branch that moved in Git.
type Push struct {
	// Before and After are the branch's heads on GitHub before and after.
	Before, After string
	// Mirrored are the commits recorded on GitHub, parents first.
	Mirrored []string
	// Merged are the pull requests the push merged: their head became part
	// of the branch (GitHub marks such a pull request merged).
	Merged []int
}

// MirrorPush records on GitHub what was pushed to branch in Git since
// GitHub last saw it, as GitHub does on a push: the new commits, parents
// first, and the pull requests opened with OpenPullRequest whose head the
// push brought (merged by pusher, their merge commit the pushed commit that
// merged them, or their head when fast-forwarded). It reads the repository
// from disk afresh, so that it sees pushes made with git by hand. A branch
// that did not move gives a Push with Before equal to After.
func (r Repo) MirrorPush(branch, pusher string) (Push, error) {
	repo, err := gogit.PlainOpen(r.Git.Dir())
	if err != nil {
		return Push{}, fmt.Errorf("opening %s: %w", r.Git.Dir(), err)
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return Push{}, fmt.Errorf("reading branch %s: %w", branch, err)
	}
	p := Push{Before: r.GitHub.Branch(r.Name, branch), After: ref.Hash().String()}
	if p.Before == p.After {
		return p, nil
	}
	commits, err := unmirrored(repo, ref.Hash(), func(sha string) bool {
		msg, _ := r.GitHub.CommitInfo(r.Name, sha)
		return msg != ""
	})
	if err != nil {
		return Push{}, err
	}
	for _, c := range commits {
		r.mirror(branch, c)
		p.Mirrored = append(p.Mirrored, c.Hash.String())
	}
	p.Merged = r.mergePushed(branch, pusher, commits)
	return p, nil
}

// unmirrored returns the commits reachable from head that a host does not
// know (known says which it does), parents before children. The ancestors of
// a known commit are taken as known.
func unmirrored(repo *gogit.Repository, head plumbing.Hash, known func(sha string) bool) ([]*object.Commit, error) {
	var out []*object.Commit
	seen := map[plumbing.Hash]bool{}
	var visit func(h plumbing.Hash) error
	visit = func(h plumbing.Hash) error {
		if seen[h] {
			return nil
		}
		seen[h] = true
		if known(h.String()) {
			return nil
		}
		c, err := repo.CommitObject(h)
		if err != nil {
			return fmt.Errorf("reading commit %s: %w", h, err)
		}
		for _, p := range c.ParentHashes {
			if err := visit(p); err != nil {
				return err
			}
		}
		out = append(out, c)
		return nil
	}
	return out, visit(head)
}

// mergePushed marks merged the open pull requests into branch whose Git
// head is among the pushed commits, and returns their numbers.
func (r Repo) mergePushed(branch, pusher string, pushed []*object.Commit) []int {
	var merged []int
	for number, pr := range r.GitHub.PullRequests(r.Name) {
		if pr.State != "open" || pr.Base != branch {
			continue
		}
		head, err := r.Git.Head(pr.Head)
		if err != nil {
			continue // a branch only on GitHub
		}
		if commit := mergedBy(pushed, head); commit != "" {
			r.GitHub.MirrorMerge(r.Name, number, commit, pusher)
			merged = append(merged, number)
		}
	}
	slices.Sort(merged)
	return merged
}

// mergedBy returns the pushed commit that merged head: the first with head
// as a parent other than its first, or head itself when the branch was
// fast-forwarded to it; "" when the push did not bring head.
func mergedBy(pushed []*object.Commit, head string) string {
	brought := false
	for _, c := range pushed {
		if c.Hash.String() == head {
			brought = true
		}
		for _, p := range c.ParentHashes[min(1, len(c.ParentHashes)):] {
			if p.String() == head {
				return c.Hash.String()
			}
		}
	}
	if brought {
		return head
	}
	return ""
}
