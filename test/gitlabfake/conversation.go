package gitlabfake

import (
	"fmt"
	"net/http"
	"net/mail"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// approval is a user's standing approval of a merge request.
type approval struct {
	user *user
	at   time.Time
}

// The system notes GitLab writes when a merge request is approved and the approval taken back.
const (
	noteApproved   = "approved this merge request"
	noteUnapproved = "unapproved this merge request"
)

// conversationRoutes are the operations of this file.
func (s *Server) conversationRoutes() []route {
	return []route{
		{http.MethodGet, "/projects/:id/merge_requests/:iid/approvals", nil, s.getApprovals},
		{http.MethodGet, "/projects/:id/merge_requests/:iid/commits", &gitlab.GetMergeRequestCommitsOptions{}, s.mergeRequestCommits},
	}
}

// addSystemNote records a note GitLab writes itself on mr.
func (s *Server) addSystemNote(mr *mergeRequest, u *user, body string) *note {
	n := s.addNote(mr, u, body)
	n.system = true
	return n
}

// EditNote has the author of note id on a merge request change its body: its updated_at moves.
func (s *Server) EditNote(projectPath string, iid, id int64, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mr := s.mustMR(s.mustProject(projectPath), iid)
	for _, n := range mr.notes {
		if n.id == id && !n.system {
			n.body, n.updated = body, s.now()
			n.edits++
			return
		}
	}
	panic(fmt.Sprintf("gitlabfake: no note %d on !%d", id, iid))
}

// ApproveMergeRequest has username approve a merge request, as POST
// /projects/:id/merge_requests/:iid/approve does: GitLab records the approval with a system note
// "approved this merge request" and delivers a Merge Request Hook with action "approval". Like
// GitLab, the fake refuses (here by panicking) an approval of a merge request that is no longer
// open, by a user below the Developer role, or twice.
func (s *Server) ApproveMergeRequest(projectPath string, iid int64, username string) {
	s.mu.Lock()
	p := s.mustProject(projectPath)
	mr := s.mustMR(p, iid)
	u := s.mustUser(username)
	refuse := ""
	switch {
	case mr.state != "opened":
		refuse = fmt.Sprintf("merge request !%d is %s and cannot be approved", iid, mr.state)
	case s.access(p, u) < gitlab.DeveloperPermissions:
		refuse = fmt.Sprintf("%s may not approve merge requests of %s", username, p.path)
	}
	for _, a := range mr.approvals {
		if a.user == u {
			refuse = fmt.Sprintf("%s already approved !%d", username, iid)
		}
	}
	if refuse != "" {
		s.mu.Unlock()
		panic("gitlabfake: " + refuse)
	}
	n := s.addSystemNote(mr, u, noteApproved)
	mr.approvals = append(mr.approvals, &approval{user: u, at: n.created})
	deliveries := s.mrHook(p, mr, u, "approval", hookChanges{})
	s.mu.Unlock()
	s.deliver(deliveries)
}

// UnapproveMergeRequest has username take back their approval of a merge request (a system note
// "unapproved this merge request", a Merge Request Hook with action "unapproval").
func (s *Server) UnapproveMergeRequest(projectPath string, iid int64, username string) {
	s.mu.Lock()
	p := s.mustProject(projectPath)
	mr := s.mustMR(p, iid)
	u := s.mustUser(username)
	for i, a := range mr.approvals {
		if a.user != u {
			continue
		}
		mr.approvals = append(mr.approvals[:i], mr.approvals[i+1:]...)
		s.addSystemNote(mr, u, noteUnapproved)
		deliveries := s.mrHook(p, mr, u, "unapproval", hookChanges{})
		s.mu.Unlock()
		s.deliver(deliveries)
		return
	}
	s.mu.Unlock()
	panic(fmt.Sprintf("gitlabfake: %s has not approved !%d", username, iid))
}

// getApprovals serves GET /projects/:id/merge_requests/:iid/approvals: who approves the merge
// request now (GitLab's approval configuration, without approval rules).
func (s *Server) getApprovals(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	mr, err := s.findMR(c, p)
	if err != nil {
		return reply{}, err
	}
	created, updated := mr.created, mr.updated
	out := &gitlab.MergeRequestApprovals{
		ID: mr.id, IID: mr.iid, ProjectID: p.id, Title: mr.title, Description: mr.desc, State: mr.state,
		CreatedAt: &created, UpdatedAt: &updated, MergeStatus: "can_be_merged", Approved: true,
		ApprovedBy: []*gitlab.MergeRequestApproverUser{}, SuggestedApprovers: []*gitlab.BasicUser{},
		Approvers: []*gitlab.MergeRequestApproverUser{}, ApproverGroups: []*gitlab.MergeRequestApproverGroup{},
		UserCanApprove: mr.state == "opened" && s.access(p, c.user) >= gitlab.DeveloperPermissions,
	}
	for _, a := range mr.approvals {
		out.ApprovedBy = append(out.ApprovedBy, &gitlab.MergeRequestApproverUser{User: s.basicUser(a.user)})
		out.UserHasApproved = out.UserHasApproved || a.user == c.user
	}
	return reply{status: http.StatusOK, value: out}, nil
}

// mergeRequestCommits serves GET /projects/:id/merge_requests/:iid/commits: the commits the
// merge request brings, newest first, as GitLab lists them.
func (s *Server) mergeRequestCommits(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	mr, err := s.findMR(c, p)
	if err != nil {
		return reply{}, err
	}
	brought := map[string]bool{}
	for _, sha := range mr.commits {
		brought[sha] = true
	}
	list := []*gitlab.Commit{}
	for sha := mr.head; brought[sha]; {
		list = append(list, s.commitValue(p, sha))
		cm := p.repo.commits[sha]
		if len(cm.parents) == 0 {
			break
		}
		sha = cm.parents[0]
	}
	from, to := paginate(c, len(list))
	return reply{status: http.StatusOK, value: list[from:to]}, nil
}

// searchUsers matches a user against GET /users?search=: an e-mail address matches exactly (a
// user's e-mail, which the fake treats as public), anything else a part of the username or
// name, ignoring case.
func searchUsers(u *user, q string) bool {
	if _, err := mail.ParseAddress(q); err == nil && strings.Contains(q, "@") {
		return strings.EqualFold(u.email, q)
	}
	q = strings.ToLower(q)
	return strings.Contains(strings.ToLower(u.username), q) || strings.Contains(strings.ToLower(u.name), q)
}
