package gitlabfake

import (
	"net/http"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// routes lists every operation the fake serves, with the client-go options type each takes.
func (s *Server) routes() []route {
	return append([]route{
		{http.MethodGet, "/users", &gitlab.ListUsersOptions{}, s.listUsers},
		{http.MethodGet, "/projects/:id", &gitlab.GetProjectOptions{}, s.getProject},
		{http.MethodGet, "/projects/:id/members/all/:user_id", nil, s.projectMember},
		{http.MethodGet, "/groups/:id/members/all/:user_id", nil, s.groupMember},
		{http.MethodPost, "/projects/:id/statuses/:sha", &gitlab.SetCommitStatusOptions{}, s.setStatus},
		{http.MethodGet, "/projects/:id/repository/commits/:sha/statuses", &gitlab.GetCommitStatusesOptions{}, s.listStatuses},
		{http.MethodGet, "/projects/:id/repository/commits/:sha/merge_requests", &gitlab.ListOptions{}, s.commitMergeRequests},
		{http.MethodGet, "/projects/:id/repository/commits/:sha", &gitlab.GetCommitOptions{}, s.getCommit},
		{http.MethodPost, "/projects/:id/repository/commits/:sha/revert", &gitlab.RevertCommitOptions{}, s.revertCommit},
		{http.MethodGet, "/projects/:id/repository/branches/:branch", nil, s.getBranch},
		{http.MethodPost, "/projects/:id/repository/branches", &gitlab.CreateBranchOptions{}, s.createBranch},
		{http.MethodDelete, "/projects/:id/repository/branches/:branch", nil, s.deleteBranch},
		{http.MethodGet, "/projects/:id/merge_requests", &gitlab.ListProjectMergeRequestsOptions{}, s.listMergeRequests},
		{http.MethodPost, "/projects/:id/merge_requests", &gitlab.CreateMergeRequestOptions{}, s.createMergeRequest},
		{http.MethodGet, "/projects/:id/merge_requests/:iid", &gitlab.GetMergeRequestsOptions{}, s.getMergeRequest},
		{http.MethodGet, "/projects/:id/merge_requests/:iid/resource_label_events", &gitlab.ListLabelEventsOptions{}, s.labelEvents},
		{http.MethodGet, "/user", nil, s.currentUser},
		{http.MethodGet, "/projects/:id/merge_requests/:iid/notes", &gitlab.ListMergeRequestNotesOptions{}, s.listNotes},
		{http.MethodPost, "/projects/:id/merge_requests/:iid/notes", &gitlab.CreateMergeRequestNoteOptions{}, s.createNote},
		{http.MethodPut, "/projects/:id/merge_requests/:iid/notes/:note_id", &gitlab.UpdateMergeRequestNoteOptions{}, s.updateNote},
	}, s.conversationRoutes()...)
}

// getCommit serves GET /projects/:id/repository/commits/:sha (a commit id or a branch name).
func (s *Server) getCommit(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	sha := c.params["sha"]
	if head, ok := p.repo.branches[sha]; ok {
		sha = head
	}
	if p.repo.commits[sha] == nil {
		return reply{}, notFound("Commit")
	}
	return reply{status: http.StatusOK, value: s.commitValue(p, sha)}, nil
}

func (s *Server) commitValue(p *project, sha string) *gitlab.Commit {
	cm := p.repo.commits[sha]
	at := cm.author.when
	return &gitlab.Commit{
		ID: sha, ShortID: sha[:8], Title: cm.title(), Message: cm.message, ParentIDs: append([]string{}, cm.parents...),
		AuthorName: cm.author.name, AuthorEmail: cm.author.email, AuthoredDate: &at,
		CommitterName: cm.author.name, CommitterEmail: cm.author.email, CommittedDate: &at, CreatedAt: &at,
		ProjectID: p.id, Trailers: map[string]string{}, ExtendedTrailers: map[string]string{},
		WebURL: s.URL + "/" + p.path + "/-/commit/" + sha,
	}
}

func (s *Server) branchValue(p *project, name string) *gitlab.Branch {
	return &gitlab.Branch{
		Name: name, Commit: s.commitValue(p, p.repo.branches[name]), Default: name == p.repo.defaultBranch,
		CanPush: true, WebURL: s.URL + "/" + p.path + "/-/tree/" + name,
	}
}

// getBranch serves GET /projects/:id/repository/branches/:branch.
func (s *Server) getBranch(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	name := c.params["branch"]
	if _, ok := p.repo.branches[name]; !ok {
		return reply{}, notFound("Branch")
	}
	return reply{status: http.StatusOK, value: s.branchValue(p, name)}, nil
}

// createBranch serves POST /projects/:id/repository/branches.
func (s *Server) createBranch(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	if err := s.need(c, p, gitlab.DeveloperPermissions); err != nil {
		return reply{}, err
	}
	var opt gitlab.CreateBranchOptions
	if err := decodeBody(c, &opt); err != nil {
		return reply{}, err
	}
	name, ref := deref(opt.Branch), deref(opt.Ref)
	switch {
	case name == "":
		return reply{}, invalidParam("branch is missing")
	case ref == "":
		return reply{}, invalidParam("ref is missing")
	case strings.ContainsAny(name, " ~^:?*[\\") || strings.Contains(name, "..") || strings.HasSuffix(name, "/"):
		return reply{}, fail(http.StatusBadRequest, "Branch name is invalid")
	}
	if _, ok := p.repo.branches[name]; ok {
		return reply{}, fail(http.StatusBadRequest, "Branch already exists")
	}
	target := ref
	if head, ok := p.repo.branches[ref]; ok {
		target = head
	}
	if p.repo.commits[target] == nil {
		return reply{}, fail(http.StatusBadRequest, "Invalid reference name: %s", ref)
	}
	p.repo.branches[name] = target
	return reply{status: http.StatusCreated, value: s.branchValue(p, name)}, nil
}

// deleteBranch serves DELETE /projects/:id/repository/branches/:branch.
func (s *Server) deleteBranch(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	if err := s.need(c, p, gitlab.DeveloperPermissions); err != nil {
		return reply{}, err
	}
	name := c.params["branch"]
	if _, ok := p.repo.branches[name]; !ok {
		return reply{}, notFound("Branch")
	}
	if name == p.repo.defaultBranch {
		return reply{}, fail(http.StatusBadRequest, "Cannot remove the default branch")
	}
	delete(p.repo.branches, name)
	return reply{status: http.StatusNoContent}, nil
}

// revertCommit serves POST /projects/:id/repository/commits/:sha/revert: a commit undoing sha's
// changes on the branch, authored by the token's user, or 400 with GitLab's error_code.
func (s *Server) revertCommit(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	if err := s.need(c, p, gitlab.DeveloperPermissions); err != nil {
		return reply{}, err
	}
	var opt gitlab.RevertCommitOptions
	if err := decodeBody(c, &opt); err != nil {
		return reply{}, err
	}
	branch := deref(opt.Branch)
	if branch == "" {
		return reply{}, invalidParam("branch is missing")
	}
	sha := c.params["sha"]
	if p.repo.commits[sha] == nil {
		return reply{}, notFound("Commit")
	}
	if _, ok := p.repo.branches[branch]; !ok {
		return reply{}, notFound("Branch")
	}
	revert, code := p.repo.revert(sha, branch, signature(c.user, s.now()))
	if code != "" {
		return reply{}, &apiError{status: http.StatusBadRequest, errorCode: code,
			message: "Commit revert failed: Can't perform this action automatically. It may have already been done, or a more " +
				"recent commit may have updated some of this content. Please perform this action locally."}
	}
	return reply{status: http.StatusCreated, value: s.commitValue(p, revert)}, nil
}

// CommitFiles returns the files of a commit of project, by path.
func (s *Server) CommitFiles(projectPath, sha string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.mustProject(projectPath).repo.commits[sha]
	if c == nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range c.files {
		out[k] = v
	}
	return out
}

// CommitParents returns the parents of a commit of project.
func (s *Server) CommitParents(projectPath, sha string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.mustProject(projectPath).repo.commits[sha]
	if c == nil {
		return nil
	}
	return append([]string(nil), c.parents...)
}

// MergeRequest is a merge request as the fake holds it, for assertions.
type MergeRequest struct {
	// IID is its number in the project.
	IID int64
	// Title, Description, SourceBranch, TargetBranch, State and Author as GitLab has them.
	Title, Description, SourceBranch, TargetBranch, State, Author string
	// Head is the source branch's head.
	Head string
}

// MergeRequests lists the merge requests of project, oldest first.
func (s *Server) MergeRequests(projectPath string) []MergeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []MergeRequest
	for _, mr := range s.mustProject(projectPath).mrs {
		out = append(out, MergeRequest{IID: mr.iid, Title: mr.title, Description: mr.desc, SourceBranch: mr.source,
			TargetBranch: mr.target, State: mr.state, Author: mr.author.username, Head: mr.head})
	}
	return out
}
