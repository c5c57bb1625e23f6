package githubfake

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The states of a pull-request review, as GitHub names them.
const (
	ReviewApproved         = "APPROVED"
	ReviewChangesRequested = "CHANGES_REQUESTED"
	ReviewCommented        = "COMMENTED"
	ReviewDismissed        = "DISMISSED"
)

// conversations holds the reviews of pull requests, by repository (lower case) and number, and
// the e-mail addresses GitHub links to accounts. (The comments are the repository's, see
// comments.go.)
type conversations struct {
	reviews map[string]map[int][]*review
	emails  map[string]string // lower-case e-mail -> login
}

// review is a pull-request review.
type review struct {
	id        int64
	user      string
	body      string
	state     string
	commit    string
	submitted time.Time
}

// conv returns the fake's conversations, making them on first use.
func (s *Server) conv() *conversations {
	if s.conversations == nil {
		s.conversations = &conversations{reviews: map[string]map[int][]*review{}, emails: map[string]string{}}
	}
	return s.conversations
}

// conversationHandlers serve the operations of this file.
func (s *Server) conversationHandlers() map[string]handler {
	return map[string]handler{
		"pulls/list-reviews": s.listReviews,
		"pulls/list-commits": s.listPullCommits,
	}
}

// SetUserEmail links an e-mail address to an account, as a verified e-mail of the user's
// GitHub account: commits authored with it name the user.
func (s *Server) SetUserEmail(login, email string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conv().emails[strings.ToLower(email)] = login
}

// EditComment replaces the body of comment id, as its author editing it on GitHub's web page:
// its updated_at moves.
func (s *Server) EditComment(fullName string, id int64, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, list := range s.mustRepo(fullName).comments {
		for _, c := range list {
			if c.id == id {
				c.body, c.updatedAt = body, s.clock()
				c.edits++
				return
			}
		}
	}
	panic(fmt.Sprintf("githubfake: no comment %d in %s", id, fullName))
}

// Review has login submit a review of pull request number in state (ReviewApproved,
// ReviewChangesRequested or ReviewCommented) on its head commit, and returns the review's id.
// GitHub refuses a review of one's own pull request in any state but COMMENTED (422
// "Can not approve your own pull request"); so does the fake, by panicking.
func (s *Server) Review(fullName string, number int, login, state, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(fullName)
	pr := r.pulls[number]
	if pr == nil {
		panic(fmt.Sprintf("githubfake: no pull request #%d in %s", number, fullName))
	}
	if state != ReviewApproved && state != ReviewChangesRequested && state != ReviewCommented {
		panic("githubfake: a review is submitted as APPROVED, CHANGES_REQUESTED or COMMENTED, not " + state)
	}
	if strings.EqualFold(pr.user, login) && state != ReviewCommented {
		panic(fmt.Sprintf("githubfake: %s cannot approve or request changes on their own pull request #%d", login, number))
	}
	s.nextID++
	key := strings.ToLower(fullName)
	byNumber := s.conv().reviews[key]
	if byNumber == nil {
		byNumber = map[int][]*review{}
		s.conv().reviews[key] = byNumber
	}
	now := s.clock()
	byNumber[number] = append(byNumber[number], &review{id: s.nextID, user: login, body: body, state: state, commit: pr.headSHA, submitted: now})
	pr.updatedAt = now
	return s.nextID
}

// DismissReview dismisses review id, as a maintainer does: its state becomes DISMISSED.
func (s *Server) DismissReview(fullName string, number int, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rv := range s.conv().reviews[strings.ToLower(fullName)][number] {
		if rv.id == id {
			rv.state = ReviewDismissed
			return
		}
	}
	panic(fmt.Sprintf("githubfake: no review %d on #%d of %s", id, number, fullName))
}

// listReviews serves GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews, oldest first.
func (s *Server) listReviews(c *call) (int, any, error) {
	n, _ := strconv.Atoi(c.params["pull_number"])
	if c.repo.pulls[n] == nil {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	items := []any{}
	for _, rv := range s.conv().reviews[strings.ToLower(c.repo.owner+"/"+c.repo.name)][n] {
		pull := s.apiURL("repos/%s/%s/pulls/%d", c.repo.owner, c.repo.name, n)
		html := fmt.Sprintf("%s%s/%s/pull/%d#pullrequestreview-%d", s.htmlRoot(), c.repo.owner, c.repo.name, n, rv.id)
		items = append(items, map[string]any{
			"id": rv.id, "node_id": "PRR_" + itoa(rv.id), "user": s.user(rv.user), "body": rv.body, "state": rv.state,
			"commit_id": nullable(rv.commit), "html_url": html, "pull_request_url": pull, "submitted_at": stamp(rv.submitted),
			"author_association": s.association(c.repo, rv.user),
			"_links":             map[string]any{"html": map[string]any{"href": html}, "pull_request": map[string]any{"href": pull}},
		})
	}
	return http.StatusOK, page(c, items), nil
}

// listPullCommits serves GET /repos/{owner}/{repo}/pulls/{pull_number}/commits: the commits of
// the pull request's head that its base did not have when it was opened, oldest first, each
// naming its author's account when GitHub links the author's e-mail to one (SetUserEmail).
func (s *Server) listPullCommits(c *call) (int, any, error) {
	n, _ := strconv.Atoi(c.params["pull_number"])
	pr := c.repo.pulls[n]
	if pr == nil {
		return 0, nil, fail(http.StatusNotFound, "Not Found")
	}
	var shas []string
	for sha := pr.headSHA; sha != "" && sha != pr.forkPoint && len(shas) < 250; {
		cm := c.repo.commits[sha]
		if cm == nil {
			break
		}
		shas = append(shas, sha)
		if len(cm.Parents) == 0 {
			break
		}
		sha = cm.Parents[0]
	}
	items := []any{}
	for i := len(shas) - 1; i >= 0; i-- {
		cm := c.repo.commits[shas[i]]
		parents := make([]any, 0, len(cm.Parents))
		for _, p := range cm.Parents {
			parents = append(parents, map[string]any{"sha": p, "url": s.apiURL("repos/%s/%s/commits/%s", c.repo.owner, c.repo.name, p)})
		}
		items = append(items, map[string]any{
			"sha": cm.SHA, "node_id": "C_" + cm.SHA, "url": s.apiURL("repos/%s/%s/commits/%s", c.repo.owner, c.repo.name, cm.SHA),
			"html_url":     fmt.Sprintf("%s%s/%s/commit/%s", s.htmlRoot(), c.repo.owner, c.repo.name, cm.SHA),
			"comments_url": s.apiURL("repos/%s/%s/commits/%s/comments", c.repo.owner, c.repo.name, cm.SHA),
			"commit": map[string]any{
				"url":     s.apiURL("repos/%s/%s/git/commits/%s", c.repo.owner, c.repo.name, cm.SHA),
				"message": cm.Message, "comment_count": 0,
				"author":    map[string]any{"name": cm.Author.Name, "email": cm.Author.Email, "date": stamp(cm.Author.When)},
				"committer": map[string]any{"name": cm.Committer.Name, "email": cm.Committer.Email, "date": stamp(cm.Committer.When)},
				"tree":      map[string]any{"sha": cm.Tree, "url": s.apiURL("repos/%s/%s/git/trees/%s", c.repo.owner, c.repo.name, cm.Tree)},
			},
			"author": s.userByEmail(cm.Author.Email), "committer": s.userByEmail(cm.Committer.Email), "parents": parents,
		})
	}
	return http.StatusOK, page(c, items), nil
}

// userByEmail is the account GitHub links email to, or null.
func (s *Server) userByEmail(email string) any {
	if login := s.conv().emails[strings.ToLower(email)]; login != "" {
		return s.user(login)
	}
	return nil
}

// association is the author_association of login on r, as GitHub reports it.
func (s *Server) association(r *repository, login string) string {
	switch {
	case strings.EqualFold(login, r.owner):
		return "OWNER"
	case r.roles[login] != "":
		return "COLLABORATOR"
	}
	return "NONE"
}
