package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v56/github"

	"github.com/sluice-dev/sluice/gitops/commitid"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// ProposeRevert implements scm.RevertProposer with the Git Data API: it reads the base branch,
// the commit to revert and its first parent, computes the reverted tree (the parent's tree when
// the base still points at the commit; otherwise the commit's changes undone path by path on the
// base, failing with a scm.ConflictError where the base changed a path since), creates the tree
// and the revert commit, the branch, and the pull request. If the branch already has an open
// pull request into the base, that one is returned and nothing is written.
func (c *Client) ProposeRevert(ctx context.Context, req scm.RevertRequest) (scm.RevertProposal, error) {
	if req.MergeCommitSHA == "" || req.Base == "" {
		return scm.RevertProposal{}, fmt.Errorf("propose revert: the commit and the base branch are required")
	}
	branch := req.Branch
	if branch == "" {
		branch = "sluice/revert-" + commitid.Short(req.MergeCommitSHA)
	}
	if existing, ok, err := c.openPullRequest(ctx, branch, req.Base); err != nil || ok {
		return existing, err
	}
	head, err := c.branchHead(ctx, req.Base)
	if err != nil {
		return scm.RevertProposal{}, err
	}
	target, err := c.commit(ctx, req.MergeCommitSHA)
	if err != nil {
		return scm.RevertProposal{}, err
	}
	if len(target.Parents) == 0 {
		return scm.RevertProposal{}, fmt.Errorf("propose revert: commit %s has no parent", req.MergeCommitSHA)
	}
	parent, err := c.commit(ctx, target.Parents[0].GetSHA())
	if err != nil {
		return scm.RevertProposal{}, err
	}
	tree, err := c.revertedTree(ctx, head, target, parent)
	if err != nil {
		return scm.RevertProposal{}, err
	}
	revert, err := c.createRevertCommit(ctx, req, tree, head, target, parent)
	if err != nil {
		return scm.RevertProposal{}, err
	}
	if err := c.pointBranch(ctx, branch, revert); err != nil {
		return scm.RevertProposal{}, err
	}
	title := req.Title
	if title == "" {
		title = fmt.Sprintf("Revert %q", subject(target.GetMessage()))
	}
	body := req.Body
	if body == "" {
		body = fmt.Sprintf("This reverts commit %s.", req.MergeCommitSHA)
	}
	pr, resp, err := c.gh.PullRequests.Create(ctx, c.owner, c.repo, &gh.NewPullRequest{
		Title: gh.String(title),
		Head:  gh.String(branch),
		Base:  gh.String(req.Base),
		Body:  gh.String(body),
	})
	if err != nil {
		return scm.RevertProposal{}, mapError(err, resp, "creating the revert pull request", c.now())
	}
	return scm.RevertProposal{Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Branch: branch, CommitSHA: revert}, nil
}

// openPullRequest finds the open pull request of branch into base.
func (c *Client) openPullRequest(ctx context.Context, branch, base string) (scm.RevertProposal, bool, error) {
	list, resp, err := c.gh.PullRequests.List(ctx, c.owner, c.repo, &gh.PullRequestListOptions{
		State: "open", Head: c.owner + ":" + branch, Base: base, ListOptions: gh.ListOptions{PerPage: 10},
	})
	if err != nil {
		return scm.RevertProposal{}, false, mapError(err, resp, "pull requests of branch "+branch, c.now())
	}
	for _, pr := range list {
		if pr.GetHead().GetRef() == branch {
			return scm.RevertProposal{
				Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Branch: branch, CommitSHA: pr.GetHead().GetSHA(), Existing: true,
			}, true, nil
		}
	}
	return scm.RevertProposal{}, false, nil
}

func (c *Client) branchHead(ctx context.Context, branch string) (*gh.Commit, error) {
	ref, resp, err := c.gh.Git.GetRef(ctx, c.owner, c.repo, "heads/"+branch)
	if err != nil {
		return nil, mapError(err, resp, "branch "+branch, c.now())
	}
	return c.commit(ctx, ref.GetObject().GetSHA())
}

func (c *Client) commit(ctx context.Context, sha string) (*gh.Commit, error) {
	commit, resp, err := c.gh.Git.GetCommit(ctx, c.owner, c.repo, sha)
	if err != nil {
		return nil, mapError(err, resp, "commit "+sha, c.now())
	}
	return commit, nil
}

// revertedTree returns the sha of the tree of the revert commit.
func (c *Client) revertedTree(ctx context.Context, head, target, parent *gh.Commit) (string, error) {
	if head.GetSHA() == target.GetSHA() {
		return parent.GetTree().GetSHA(), nil
	}
	var entries [3]map[string]treeEntry
	for i, commit := range []*gh.Commit{target, parent, head} {
		tree, resp, err := c.gh.Git.GetTree(ctx, c.owner, c.repo, commit.GetTree().GetSHA(), true)
		if err != nil {
			return "", mapError(err, resp, "tree of commit "+commit.GetSHA(), c.now())
		}
		if tree.GetTruncated() {
			return "", fmt.Errorf("propose revert: the tree of commit %s is too large to list", commit.GetSHA())
		}
		entries[i] = flatTree(tree)
	}
	changes, conflicts := planRevert(entries[0], entries[1], entries[2])
	if len(conflicts) > 0 {
		return "", &scm.ConflictError{Paths: conflicts}
	}
	if len(changes) == 0 {
		return "", fmt.Errorf("propose revert: the changes of commit %s are already undone on the base", target.GetSHA())
	}
	newEntries := make([]*gh.TreeEntry, 0, len(changes))
	for _, ch := range changes {
		e := &gh.TreeEntry{Path: gh.String(ch.Path)}
		if ch.Entry != nil {
			e.SHA, e.Mode, e.Type = gh.String(ch.Entry.SHA), gh.String(ch.Entry.Mode), gh.String(ch.Entry.Type)
		} else {
			// A removal: go-github sends "sha": null.
			e.Mode, e.Type = gh.String(ch.Removed.Mode), gh.String(ch.Removed.Type)
		}
		newEntries = append(newEntries, e)
	}
	tree, resp, err := c.gh.Git.CreateTree(withIdempotent(ctx), c.owner, c.repo, head.GetTree().GetSHA(), newEntries)
	if err != nil {
		return "", mapError(err, resp, "creating the reverted tree", c.now())
	}
	return tree.GetSHA(), nil
}

func (c *Client) createRevertCommit(ctx context.Context, req scm.RevertRequest, tree string, head, target, parent *gh.Commit) (string, error) {
	message := fmt.Sprintf("Revert %q\n\nThis reverts commit %s.\n", subject(target.GetMessage()), target.GetSHA())
	if len(target.Parents) > 1 {
		message = fmt.Sprintf("Revert %q\n\nThis reverts commit %s, reversing\nchanges made to %s.\n",
			subject(target.GetMessage()), target.GetSHA(), parent.GetSHA())
	}
	commit := &gh.Commit{
		Message: gh.String(message),
		Tree:    &gh.Tree{SHA: gh.String(tree)},
		Parents: []*gh.Commit{{SHA: gh.String(head.GetSHA())}},
	}
	if req.Author != nil {
		when := req.Author.When
		if when.IsZero() {
			when = c.now()
		}
		sig := &gh.CommitAuthor{Name: gh.String(req.Author.Name), Email: gh.String(req.Author.Email), Date: &gh.Timestamp{Time: when}}
		commit.Author, commit.Committer = sig, sig
	}
	created, resp, err := c.gh.Git.CreateCommit(ctx, c.owner, c.repo, commit, nil)
	if err != nil {
		return "", mapError(err, resp, "creating the revert commit", c.now())
	}
	return created.GetSHA(), nil
}

// pointBranch creates branch at sha, or moves it there if it exists (a revert branch left by an
// attempt that stopped before opening its pull request).
func (c *Client) pointBranch(ctx context.Context, branch, sha string) error {
	ref := &gh.Reference{Ref: gh.String("refs/heads/" + branch), Object: &gh.GitObject{SHA: gh.String(sha)}}
	_, resp, err := c.gh.Git.CreateRef(ctx, c.owner, c.repo, ref)
	if err == nil {
		return nil
	}
	if statusCode(err) != http.StatusUnprocessableEntity {
		return mapError(err, resp, "creating branch "+branch, c.now())
	}
	if _, resp, err = c.gh.Git.UpdateRef(ctx, c.owner, c.repo, ref, true); err != nil {
		return mapError(err, resp, "moving branch "+branch, c.now())
	}
	return nil
}

func subject(message string) string {
	first, _, _ := strings.Cut(message, "\n")
	return strings.TrimSpace(first)
}
