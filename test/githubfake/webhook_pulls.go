package githubfake

import (
	"context"
	"fmt"
)

// DeliverPullRequest sends a pull_request delivery of action opened, reopened, synchronize or
// closed for pull request number, sent by sender, to url signed with secret. The payload is
// validated against @octokit/webhooks-schemas like every other delivery.
//
//   - opened and reopened need an open pull request.
//   - synchronize moves the pull request's head to the current head of its branch (what GitHub
//     does when commits are pushed to it) and reports the move as before/after.
//   - closed needs a pull request closed by MergePullRequest; it reports merged true and the
//     merge commit.
func (s *Server) DeliverPullRequest(ctx context.Context, url string, secret []byte, fullName string, number int, action, sender string) (Delivery, error) {
	s.mu.Lock()
	r := s.mustRepo(fullName)
	pr := r.pulls[number]
	if pr == nil {
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("no pull request #%d", number)
	}
	values := map[string]any{"action": action, "number": number}
	switch action {
	case "opened", "reopened":
		if pr.state != "open" {
			s.mu.Unlock()
			return Delivery{}, fmt.Errorf("pull request #%d is %s, not open", number, pr.state)
		}
	case "synchronize":
		if pr.state != "open" {
			s.mu.Unlock()
			return Delivery{}, fmt.Errorf("pull request #%d is %s, not open", number, pr.state)
		}
		before := pr.headSHA
		pr.headSHA, pr.updatedAt = r.refs["refs/heads/"+pr.head], s.clock()
		values["before"], values["after"] = before, pr.headSHA
	case "closed":
		if !pr.merged {
			s.mu.Unlock()
			return Delivery{}, fmt.Errorf("pull request #%d is not merged; the fake closes pull requests only by merging them", number)
		}
	default:
		s.mu.Unlock()
		return Delivery{}, fmt.Errorf("action %q: use DeliverLabel for labeled and unlabeled", action)
	}
	pull := s.pullJSON(r, pr)
	pull["merged"], pull["merged_by"], pull["mergeable"], pull["rebaseable"] = pr.merged, s.userOrNil(pr.mergedBy), nil, nil
	pull["comments"], pull["review_comments"], pull["commits"], pull["additions"], pull["deletions"], pull["changed_files"] = 0, 0, 1, 1, 1, 1
	pull["requested_reviewers"], pull["requested_teams"], pull["assignees"] = []any{}, []any{}, []any{}
	if action != "closed" {
		pull["active_lock_reason"] = nil
	}
	values["pull_request"], values["repository"], values["sender"] = pull, s.repoJSON(r), s.user(sender)
	s.mu.Unlock()
	body, err := s.hooks.build("pull_request$"+action, values)
	if err != nil {
		s.report.Errorf("githubfake: %v", err)
		return Delivery{}, err
	}
	return s.send(ctx, url, secret, "pull_request", body)
}
