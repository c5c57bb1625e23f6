package gitea

import (
	"context"
	"fmt"

	sdk "code.gitea.io/sdk/gitea"
)

// EditComment replaces the body of comment id, as by (its author).
func (r *Repo) EditComment(ctx context.Context, by *User, id int64, body string) (*sdk.Comment, error) {
	api, err := by.API(ctx)
	if err != nil {
		return nil, err
	}
	c, _, err := api.EditIssueComment(r.Owner, r.Name, id, sdk.EditIssueCommentOption{Body: body})
	if err != nil {
		return nil, fmt.Errorf("editing comment %d on %s as %s: %w", id, r.FullName(), by.Login, err)
	}
	return c, nil
}

// Review submits a review of pull request number as by, in state (sdk.ReviewStateApproved,
// sdk.ReviewStateRequestChanges or sdk.ReviewStateComment), with body.
func (r *Repo) Review(ctx context.Context, by *User, number int64, state sdk.ReviewStateType, body string) (*sdk.PullReview, error) {
	api, err := by.API(ctx)
	if err != nil {
		return nil, err
	}
	rv, _, err := api.CreatePullReview(r.Owner, r.Name, number, sdk.CreatePullReviewOptions{State: state, Body: body})
	if err != nil {
		return nil, fmt.Errorf("reviewing %s#%d as %s (%s): %w", r.FullName(), number, by.Login, state, err)
	}
	return rv, nil
}

// DismissReview dismisses review id of pull request number, as by (who may administer the
// repository), with message.
func (r *Repo) DismissReview(ctx context.Context, by *User, number, id int64, message string) error {
	api, err := by.API(ctx)
	if err != nil {
		return err
	}
	if _, err := api.DismissPullReview(r.Owner, r.Name, number, id, sdk.DismissPullReviewOptions{Message: message}); err != nil {
		return fmt.Errorf("dismissing review %d of %s#%d as %s: %w", id, r.FullName(), number, by.Login, err)
	}
	return nil
}
