package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/sluice-dev/sluice/gitops/commitid"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// ProposeRevert implements scm.RevertProposer with GitLab's revert API, without a clone: it
// creates the branch from the base (POST /projects/:id/repository/branches), has GitLab revert
// the commit onto it (POST /projects/:id/repository/commits/:sha/revert; a merge commit is
// reverted against its first parent), and opens a merge request of it into the base that removes
// the branch when merged. If the branch already has an open merge request into the base, that
// one is returned and nothing is written; a branch left by an attempt that stopped before
// opening its merge request is deleted and made again from the base.
//
// GitLab writes the revert commit itself: its message is GitLab's ("Revert "<title>"", "This
// reverts commit <sha>"), and its author is the token's user (RevertRequest.Author is not
// honoured; GitLab's revert API takes none). A revert GitLab cannot apply (a path changed again
// since) is a scm.ConflictError without paths (GitLab names none); one with nothing left to
// undo is an error saying so. Either way the branch is deleted again.
func (c *Client) ProposeRevert(ctx context.Context, req scm.RevertRequest) (scm.RevertProposal, error) {
	if req.MergeCommitSHA == "" || req.Base == "" {
		return scm.RevertProposal{}, errors.New("propose revert: the commit and the base branch are required")
	}
	branch := req.Branch
	if branch == "" {
		branch = "sluice/revert-" + commitid.Short(req.MergeCommitSHA)
	}
	info, err := c.projectInfo(ctx)
	if err != nil {
		return scm.RevertProposal{}, err
	}
	if existing, ok, err := c.openMergeRequest(ctx, info.ID, branch, req.Base); err != nil || ok {
		return existing, err
	}
	target, resp, err := c.api.Commits.GetCommit(c.project, req.MergeCommitSHA, nil, gl.WithContext(ctx))
	if err != nil {
		return scm.RevertProposal{}, mapError(err, resp, "commit "+req.MergeCommitSHA)
	}
	if len(target.ParentIDs) == 0 {
		return scm.RevertProposal{}, fmt.Errorf("propose revert: commit %s has no parent", req.MergeCommitSHA)
	}
	if err := c.freshBranch(ctx, branch, req.Base); err != nil {
		return scm.RevertProposal{}, err
	}
	revert, resp, err := c.api.Commits.RevertCommit(c.project, req.MergeCommitSHA, &gl.RevertCommitOptions{Branch: gl.Ptr(branch)}, gl.WithContext(ctx))
	if err != nil {
		return scm.RevertProposal{}, c.revertFailed(ctx, branch, req, err, resp)
	}
	title := req.Title
	if title == "" {
		title = fmt.Sprintf("Revert %q", target.Title)
	}
	body := req.Body
	if body == "" {
		body = fmt.Sprintf("This reverts commit %s.", req.MergeCommitSHA)
	}
	mr, resp, err := c.api.MergeRequests.CreateMergeRequest(c.project, &gl.CreateMergeRequestOptions{
		Title: gl.Ptr(title), Description: gl.Ptr(body), SourceBranch: gl.Ptr(branch), TargetBranch: gl.Ptr(req.Base),
		RemoveSourceBranch: gl.Ptr(true),
	}, gl.WithContext(ctx))
	if statusOf(resp) == http.StatusConflict {
		// Another caller opened it meanwhile.
		if existing, ok, ferr := c.openMergeRequest(ctx, info.ID, branch, req.Base); ferr == nil && ok {
			return existing, nil
		}
	}
	if err != nil {
		return scm.RevertProposal{}, mapError(err, resp, "creating the revert merge request")
	}
	return scm.RevertProposal{Number: int(mr.IID), URL: mr.WebURL, Branch: branch, CommitSHA: revert.ID}, nil
}

// openMergeRequest finds the open merge request of branch into base within the project.
func (c *Client) openMergeRequest(ctx context.Context, projectID int64, branch, base string) (scm.RevertProposal, bool, error) {
	list, resp, err := c.api.MergeRequests.ListProjectMergeRequests(c.project, &gl.ListProjectMergeRequestsOptions{
		State: gl.Ptr("opened"), SourceBranch: gl.Ptr(branch), TargetBranch: gl.Ptr(base), ListOptions: gl.ListOptions{PerPage: 20},
	}, gl.WithContext(ctx))
	if err != nil {
		return scm.RevertProposal{}, false, mapError(err, resp, "merge requests of branch "+branch)
	}
	for _, mr := range list {
		if mr.SourceBranch == branch && mr.TargetBranch == base && mr.SourceProjectID == projectID && mr.TargetProjectID == projectID {
			return scm.RevertProposal{Number: int(mr.IID), URL: mr.WebURL, Branch: branch, CommitSHA: mr.SHA, Existing: true}, true, nil
		}
	}
	return scm.RevertProposal{}, false, nil
}

// freshBranch creates branch at the head of base; an existing branch of that name (left by an
// attempt that stopped before opening its merge request) is deleted first.
func (c *Client) freshBranch(ctx context.Context, branch, base string) error {
	opt := &gl.CreateBranchOptions{Branch: gl.Ptr(branch), Ref: gl.Ptr(base)}
	_, resp, err := c.api.Branches.CreateBranch(c.project, opt, gl.WithContext(ctx))
	if err == nil {
		return nil
	}
	if statusOf(resp) != http.StatusBadRequest || !strings.Contains(strings.ToLower(messageOf(err)), "already exists") {
		return mapError(err, resp, "creating branch "+branch+" from "+base)
	}
	if resp, err := c.api.Branches.DeleteBranch(c.project, branch, gl.WithContext(ctx)); err != nil && statusOf(resp) != http.StatusNotFound {
		return mapError(err, resp, "deleting the stale branch "+branch)
	}
	if _, resp, err := c.api.Branches.CreateBranch(c.project, opt, gl.WithContext(ctx)); err != nil {
		return mapError(err, resp, "creating branch "+branch+" from "+base)
	}
	return nil
}

// revertFailed turns a refused revert into its error, deleting the branch made for it.
func (c *Client) revertFailed(ctx context.Context, branch string, req scm.RevertRequest, err error, resp *gl.Response) error {
	code := ""
	var er *gl.ErrorResponse
	if statusOf(resp) == http.StatusBadRequest && errors.As(err, &er) {
		var body struct {
			ErrorCode string `json:"error_code"`
		}
		if json.Unmarshal(er.Body, &body) == nil {
			code = body.ErrorCode
		}
	}
	if code != "" {
		// The branch holds nothing but the base: remove it, best-effort.
		_, _ = c.api.Branches.DeleteBranch(c.project, branch, gl.WithContext(ctx))
	}
	switch code {
	case "conflict":
		return fmt.Errorf("propose revert of %s on %s: %s: %w", req.MergeCommitSHA, req.Base, messageOf(err), &scm.ConflictError{})
	case "empty":
		return fmt.Errorf("propose revert: the changes of commit %s are already undone on %s", req.MergeCommitSHA, req.Base)
	}
	return mapError(err, resp, "reverting commit "+req.MergeCommitSHA+" on branch "+branch)
}
