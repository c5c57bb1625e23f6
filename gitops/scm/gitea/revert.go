package gitea

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/sluice-dev/sluice/gitops/commitid"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// lfsPointerPrefix starts the content of a Git LFS pointer file.
const lfsPointerPrefix = "version https://git-lfs.github.com/spec/"

// ProposeRevert implements scm.RevertProposer with Gitea's API, without a clone: it reads the
// base branch, the commit to revert and its first parent, and their trees; plans the revert
// path by path (failing with a scm.ConflictError where the base changed a path the commit
// changed); and writes the plan as one commit on a new branch from the base with POST
// /repos/{owner}/{repo}/contents, each update and deletion conditional on the blob the plan read.
// Then it opens the pull request. If the branch already has an open pull request into the base,
// that one is returned and nothing is written. Gitea's file API writes regular and executable
// files only: a revert that would restore a symbolic link, a submodule, a file mode or a Git LFS
// object fails with an error that says so.
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
	api := c.api(ctx)
	base, resp, err := api.GetRepoBranch(c.owner, c.repo, req.Base)
	if err != nil {
		return scm.RevertProposal{}, c.mapError(err, resp, "branch "+req.Base)
	}
	target, err := c.commit(ctx, req.MergeCommitSHA)
	if err != nil {
		return scm.RevertProposal{}, err
	}
	if len(target.Parents) == 0 {
		return scm.RevertProposal{}, fmt.Errorf("propose revert: commit %s has no parent", req.MergeCommitSHA)
	}
	parentSHA := target.Parents[0].SHA
	ops, err := c.planOn(ctx, base.Commit.ID, req.MergeCommitSHA, parentSHA)
	if err != nil {
		return scm.RevertProposal{}, err
	}
	files, err := c.fileOperations(ctx, ops)
	if err != nil {
		return scm.RevertProposal{}, err
	}
	subjectLine := ""
	if target.RepoCommit != nil {
		subjectLine = subject(target.RepoCommit.Message)
	}
	message := fmt.Sprintf("Revert %q\n\nThis reverts commit %s.\n", subjectLine, req.MergeCommitSHA)
	if len(target.Parents) > 1 {
		message = fmt.Sprintf("Revert %q\n\nThis reverts commit %s, reversing\nchanges made to %s.\n", subjectLine, req.MergeCommitSHA, parentSHA)
	}
	opt := sdk.ChangeFilesOptions{Files: files, Message: message, Branch: req.Base, NewBranch: branch, ForcePush: true}
	if a := req.Author; a != nil {
		opt.Author = sdk.Identity{Name: a.Name, Email: a.Email}
		opt.Committer = opt.Author
		opt.Dates = sdk.CommitDateOptions{Author: a.When, Committer: a.When}
	}
	written, resp, err := api.ChangeFiles(c.owner, c.repo, opt)
	if err != nil {
		return scm.RevertProposal{}, c.mapError(err, resp, "writing the revert commit on branch "+branch)
	}
	if written.Commit == nil || written.Commit.SHA == "" {
		return scm.RevertProposal{}, fmt.Errorf("writing the revert commit on branch %s: the server named no commit", branch)
	}
	title := req.Title
	if title == "" {
		title = fmt.Sprintf("Revert %q", subjectLine)
	}
	body := req.Body
	if body == "" {
		body = fmt.Sprintf("This reverts commit %s.", req.MergeCommitSHA)
	}
	pr, resp, err := api.CreatePullRequest(c.owner, c.repo, sdk.CreatePullRequestOption{Head: branch, Base: req.Base, Title: title, Body: body})
	if err != nil {
		return scm.RevertProposal{}, c.mapError(err, resp, "creating the revert pull request")
	}
	return scm.RevertProposal{Number: int(pr.Index), URL: pr.HTMLURL, Branch: branch, CommitSHA: written.Commit.SHA}, nil
}

// openPullRequest finds the open pull request of branch into base.
func (c *Client) openPullRequest(ctx context.Context, branch, base string) (scm.RevertProposal, bool, error) {
	api := c.api(ctx)
	for page := 1; page <= maxPages; page++ {
		list, resp, err := api.ListRepoPullRequests(c.owner, c.repo, sdk.ListPullRequestsOptions{
			ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}, State: sdk.StateOpen,
		})
		if err != nil {
			return scm.RevertProposal{}, false, c.mapError(err, resp, "pull requests of branch "+branch)
		}
		for _, pr := range list {
			if pr.Head != nil && pr.Base != nil && pr.Head.Ref == branch && pr.Base.Ref == base && pr.Head.RepoID == pr.Base.RepoID {
				return scm.RevertProposal{
					Number: int(pr.Index), URL: pr.HTMLURL, Branch: branch, CommitSHA: pr.Head.Sha, Existing: true,
				}, true, nil
			}
		}
		if len(list) < pageSize {
			break
		}
	}
	return scm.RevertProposal{}, false, nil
}

// commit reads a commit without its file list, diff statistics or signature verification.
func (c *Client) commit(ctx context.Context, sha string) (*sdk.Commit, error) {
	var commit sdk.Commit
	query := url.Values{"stat": {"false"}, "files": {"false"}, "verification": {"false"}}
	resp, err := c.getJSON(ctx, c.repoPath()+"/git/commits/"+url.PathEscape(sha), query, &commit)
	if err != nil {
		return nil, c.mapError(err, resp, "commit "+sha)
	}
	return &commit, nil
}

// planOn plans the revert of target (against its parent) on head.
func (c *Client) planOn(ctx context.Context, head, target, parent string) ([]fileOp, error) {
	var trees [3]map[string]entry
	for i, sha := range []string{target, parent, head} {
		if i == 2 && head == target {
			trees[2] = trees[0]
			break
		}
		tree, err := c.tree(ctx, sha)
		if err != nil {
			return nil, err
		}
		trees[i] = tree
	}
	ops, conflicts, err := planRevert(trees[0], trees[1], trees[2])
	if err != nil {
		return nil, fmt.Errorf("propose revert of %s: %w", target, err)
	}
	if len(conflicts) > 0 {
		return nil, &scm.ConflictError{Paths: conflicts}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("propose revert: the changes of commit %s are already undone on the base", target)
	}
	return ops, nil
}

// tree lists the files of a commit's tree, every page of it (Gitea pages trees by 1000 entries).
func (c *Client) tree(ctx context.Context, sha string) (map[string]entry, error) {
	out := map[string]entry{}
	api := c.api(ctx)
	for page := 1; ; page++ {
		t, resp, err := api.GetTrees(c.owner, c.repo, sdk.ListTreeOptions{Ref: sha, Recursive: true, ListOptions: sdk.ListOptions{Page: page}})
		if err != nil {
			return nil, c.mapError(err, resp, "tree of commit "+sha)
		}
		flatTree(t.Entries, out)
		if !t.Truncated || len(t.Entries) == 0 {
			return out, nil
		}
	}
}

// fileOperations turns the plan into the file API's operations, reading the content of every
// blob to write.
func (c *Client) fileOperations(ctx context.Context, ops []fileOp) ([]*sdk.ChangeFileOperation, error) {
	api := c.api(ctx)
	out := make([]*sdk.ChangeFileOperation, 0, len(ops))
	for _, op := range ops {
		f := &sdk.ChangeFileOperation{Operation: op.Operation, Path: op.Path, SHA: op.Current}
		if op.Blob != "" {
			blob, resp, err := api.GetBlob(c.owner, c.repo, op.Blob)
			if err != nil {
				return nil, c.mapError(err, resp, "blob of "+op.Path)
			}
			if blob.Encoding != "base64" || blob.Content == "" && blob.Size > 0 {
				return nil, fmt.Errorf("propose revert: the server gave no content for %s (%d bytes; too large for its API?)", op.Path, blob.Size)
			}
			if raw, err := base64.StdEncoding.DecodeString(blob.Content); err == nil && strings.HasPrefix(string(raw), lfsPointerPrefix) {
				return nil, fmt.Errorf("propose revert: %s is a Git LFS pointer, which Gitea's file API cannot restore", op.Path)
			}
			f.Content = blob.Content
		}
		out = append(out, f)
	}
	return out, nil
}

func subject(message string) string {
	first, _, _ := strings.Cut(message, "\n")
	return strings.TrimSpace(first)
}
