package gitlabfake

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// mergeRequest is a merge request.
type mergeRequest struct {
	id, iid        int64
	title, desc    string
	source, target string
	author         *user
	state          string // opened, closed, merged
	created        time.Time
	updated        time.Time
	mergedAt       *time.Time
	mergedBy       *user
	mergeCommit    string
	squashCommit   string
	head           string   // the source branch's head
	commits        []string // the commits it brings, as of its last update
	removeSource   bool
	labels         []string
	labelEvents    []labelEvent
	notes          []*note     // comments and system notes, oldest first (conversation.go)
	approvals      []*approval // who approves it now (conversation.go)
}

// labelEvent is a resource label event.
type labelEvent struct {
	id     int64
	action string // add, remove
	label  string
	user   *user
	at     time.Time
}

// MergeMethod is how MergeMergeRequest merges.
type MergeMethod string

// The merge methods of a GitLab project.
const (
	// MergeCommit creates a merge commit (GitLab's default).
	MergeCommit MergeMethod = "merge"
	// SquashMerge squashes the merge request's commits into one commit on the target (with
	// fast-forward merges, so that GitLab reports a squash commit and no merge commit).
	SquashMerge MergeMethod = "squash"
	// FastForward moves the target branch to the merge request's head.
	FastForward MergeMethod = "ff"
)

// Push commits set (and removes remove) on branch of project (the branch is created from the
// default branch if missing) as author, and tells the open merge requests of that branch and
// the webhooks. It returns the new commit.
func (s *Server) Push(projectPath, branch, author string, set map[string]string, remove []string, message string) string {
	s.mu.Lock()
	p := s.mustProject(projectPath)
	u := s.mustUser(author)
	var base *string
	before, existed := p.repo.branches[branch]
	if !existed {
		d := p.repo.branches[p.repo.defaultBranch]
		base = &d
	}
	sha := p.repo.commit(branch, base, set, remove, message, signature(u, s.now()))
	deliveries := s.pushHooks(p, u, branch, before, sha)
	for _, mr := range p.mrs {
		if mr.state == "opened" && mr.source == branch {
			oldrev := mr.head
			s.refreshMR(p, mr)
			s.addSystemNote(mr, u, "added 1 commit")
			deliveries = append(deliveries, s.mrHook(p, mr, u, "update", hookChanges{oldrev: oldrev})...)
		}
	}
	s.mu.Unlock()
	s.deliver(deliveries)
	return sha
}

// BranchHead returns the commit at the head of branch in project ("" if it does not exist).
func (s *Server) BranchHead(projectPath, branch string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mustProject(projectPath).repo.branches[branch]
}

// OpenMergeRequest opens a merge request of source into target by author and returns its iid.
func (s *Server) OpenMergeRequest(projectPath, author, source, target, title string) int64 {
	s.mu.Lock()
	p := s.mustProject(projectPath)
	mr, err := s.openMR(p, s.mustUser(author), source, target, title, "", false)
	if err != nil {
		s.mu.Unlock()
		panic(err)
	}
	deliveries := s.mrHook(p, mr, mr.author, "open", hookChanges{})
	s.mu.Unlock()
	s.deliver(deliveries)
	return mr.iid
}

func (s *Server) openMR(p *project, u *user, source, target, title, desc string, removeSource bool) (*mergeRequest, error) {
	if p.repo.branches[source] == "" {
		return nil, fail(http.StatusBadRequest, "Source branch %q does not exist", source)
	}
	if p.repo.branches[target] == "" {
		return nil, fail(http.StatusBadRequest, "Target branch %q does not exist", target)
	}
	for _, mr := range p.mrs {
		if mr.state == "opened" && mr.source == source && mr.target == target {
			return nil, &apiError{status: http.StatusConflict,
				message: fmt.Sprintf("Another open merge request already exists for this source branch: !%d", mr.iid)}
		}
	}
	now := s.now()
	mr := &mergeRequest{id: s.newID(), iid: int64(len(p.mrs) + 1), title: title, desc: desc, source: source, target: target,
		author: u, state: "opened", created: now, updated: now, removeSource: removeSource}
	s.refreshMR(p, mr)
	p.mrs = append(p.mrs, mr)
	return mr, nil
}

func (s *Server) refreshMR(p *project, mr *mergeRequest) {
	mr.head = p.repo.branches[mr.source]
	mr.commits = p.repo.onlyIn(mr.head, p.repo.branches[mr.target])
	mr.updated = s.now()
}

// MergeMergeRequest merges an open merge request as user with method and returns the commit the
// target branch points at afterwards.
func (s *Server) MergeMergeRequest(projectPath string, iid int64, username string, method MergeMethod) string {
	s.mu.Lock()
	p := s.mustProject(projectPath)
	u := s.mustUser(username)
	mr := s.mustMR(p, iid)
	if mr.state != "opened" {
		s.mu.Unlock()
		panic(fmt.Sprintf("gitlabfake: merge request !%d is %s", iid, mr.state))
	}
	targetHead := p.repo.branches[mr.target]
	now := s.now()
	var head string
	switch method {
	case FastForward:
		if !p.repo.ancestors(mr.head)[targetHead] {
			s.mu.Unlock()
			panic("gitlabfake: cannot fast-forward " + mr.target)
		}
		head = mr.head
	default:
		files, err := p.repo.mergedFiles(targetHead, mr.head)
		if err != nil {
			s.mu.Unlock()
			panic(err)
		}
		if method == SquashMerge {
			head = p.repo.add([]string{targetHead}, files, mr.title+"\n", signature(mr.author, now))
			mr.squashCommit = head
		} else {
			msg := fmt.Sprintf("Merge branch '%s' into '%s'\n\n%s\n\nSee merge request %s!%d\n", mr.source, mr.target, mr.title, p.path, mr.iid)
			head = p.repo.add([]string{targetHead, mr.head}, files, msg, signature(u, now))
			mr.mergeCommit = head
		}
	}
	p.repo.branches[mr.target] = head
	mr.state, mr.mergedAt, mr.mergedBy, mr.updated = "merged", &now, u, now
	deliveries := s.pushHooks(p, u, mr.target, targetHead, head)
	deliveries = append(deliveries, s.mrHook(p, mr, u, "merge", hookChanges{})...)
	s.mu.Unlock()
	s.deliver(deliveries)
	return head
}

// CloseMergeRequest closes an open merge request without merging it.
func (s *Server) CloseMergeRequest(projectPath string, iid int64, username string) {
	s.mu.Lock()
	p := s.mustProject(projectPath)
	mr := s.mustMR(p, iid)
	mr.state, mr.updated = "closed", s.now()
	deliveries := s.mrHook(p, mr, s.mustUser(username), "close", hookChanges{})
	s.mu.Unlock()
	s.deliver(deliveries)
}

// AddLabels has username add labels to a merge request: one resource label event each, and one
// webhook delivery for the change.
func (s *Server) AddLabels(projectPath string, iid int64, username string, labels ...string) {
	s.changeLabels(projectPath, iid, username, labels, nil)
}

// RemoveLabels has username remove labels from a merge request.
func (s *Server) RemoveLabels(projectPath string, iid int64, username string, labels ...string) {
	s.changeLabels(projectPath, iid, username, nil, labels)
}

func (s *Server) changeLabels(projectPath string, iid int64, username string, add, remove []string) {
	s.mu.Lock()
	p := s.mustProject(projectPath)
	u := s.mustUser(username)
	mr := s.mustMR(p, iid)
	previous := append([]string(nil), mr.labels...)
	now := s.now()
	for _, l := range add {
		if !containsFold(mr.labels, l) {
			mr.labels = append(mr.labels, l)
			mr.labelEvents = append(mr.labelEvents, labelEvent{id: s.newID(), action: "add", label: l, user: u, at: now})
		}
	}
	for _, l := range remove {
		for i, have := range mr.labels {
			if strings.EqualFold(have, l) {
				mr.labels = append(mr.labels[:i], mr.labels[i+1:]...)
				mr.labelEvents = append(mr.labelEvents, labelEvent{id: s.newID(), action: "remove", label: have, user: u, at: now})
				break
			}
		}
	}
	mr.updated = now
	deliveries := s.mrHook(p, mr, u, "update", hookChanges{labels: true, previous: previous})
	s.mu.Unlock()
	s.deliver(deliveries)
}

// ForgetLabelEvents drops the label history of a merge request (as when events predate GitLab
// recording them), keeping its labels.
func (s *Server) ForgetLabelEvents(projectPath string, iid int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustMR(s.mustProject(projectPath), iid).labelEvents = nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func (s *Server) mustMR(p *project, iid int64) *mergeRequest {
	for _, mr := range p.mrs {
		if mr.iid == iid {
			return mr
		}
	}
	panic(fmt.Sprintf("gitlabfake: no merge request !%d in %s", iid, p.path))
}

func (s *Server) findMR(c *call, p *project) (*mergeRequest, error) {
	iid, ok := parseInt(c.params["iid"])
	if !ok {
		return nil, notFound("Merge Request")
	}
	for _, mr := range p.mrs {
		if mr.iid == iid {
			return mr, nil
		}
	}
	return nil, notFound("Merge Request")
}

// commitMergeRequests serves GET /projects/:id/repository/commits/:sha/merge_requests: the merge
// requests whose merge or squash commit is sha or that bring it, newest first.
func (s *Server) commitMergeRequests(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	sha := c.params["sha"]
	if p.repo.commits[sha] == nil {
		return reply{}, notFound("Commit")
	}
	var list []*gitlab.BasicMergeRequest
	for i := len(p.mrs) - 1; i >= 0; i-- {
		mr := p.mrs[i]
		related := mr.mergeCommit == sha || mr.squashCommit == sha
		for _, c := range mr.commits {
			related = related || c == sha
		}
		if related {
			list = append(list, s.basicMR(p, mr))
		}
	}
	from, to := paginate(c, len(list))
	return reply{status: http.StatusOK, value: list[from:to]}, nil
}

// getMergeRequest serves GET /projects/:id/merge_requests/:iid.
func (s *Server) getMergeRequest(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	mr, err := s.findMR(c, p)
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, value: s.fullMR(p, mr)}, nil
}

// listMergeRequests serves GET /projects/:id/merge_requests with the filters sluice uses
// (state, source_branch, target_branch), newest first.
func (s *Server) listMergeRequests(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	state := c.query.Get("state")
	var list []*gitlab.BasicMergeRequest
	for i := len(p.mrs) - 1; i >= 0; i-- {
		mr := p.mrs[i]
		if state != "" && state != "all" && mr.state != state ||
			c.query.Has("source_branch") && mr.source != c.query.Get("source_branch") ||
			c.query.Has("target_branch") && mr.target != c.query.Get("target_branch") {
			continue
		}
		list = append(list, s.basicMR(p, mr))
	}
	from, to := paginate(c, len(list))
	return reply{status: http.StatusOK, value: list[from:to]}, nil
}

// createMergeRequest serves POST /projects/:id/merge_requests.
func (s *Server) createMergeRequest(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	if err := s.need(c, p, gitlab.DeveloperPermissions); err != nil {
		return reply{}, err
	}
	var opt gitlab.CreateMergeRequestOptions
	if err := decodeBody(c, &opt); err != nil {
		return reply{}, err
	}
	switch {
	case deref(opt.SourceBranch) == "":
		return reply{}, invalidParam("source_branch is missing")
	case deref(opt.TargetBranch) == "":
		return reply{}, invalidParam("target_branch is missing")
	case deref(opt.Title) == "":
		return reply{}, invalidParam("title is missing")
	}
	mr, err := s.openMR(p, c.user, *opt.SourceBranch, *opt.TargetBranch, *opt.Title, deref(opt.Description), deref(opt.RemoveSourceBranch))
	if err != nil {
		return reply{}, err
	}
	s.queue(s.mrHook(p, mr, c.user, "open", hookChanges{}))
	return reply{status: http.StatusCreated, value: s.fullMR(p, mr)}, nil
}

// labelEvents serves GET /projects/:id/merge_requests/:iid/resource_label_events, oldest first.
func (s *Server) labelEvents(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	mr, err := s.findMR(c, p)
	if err != nil {
		return reply{}, err
	}
	list := make([]*gitlab.LabelEvent, 0, len(mr.labelEvents))
	for _, e := range mr.labelEvents {
		at := e.at
		list = append(list, &gitlab.LabelEvent{
			ID: e.id, Action: e.action, CreatedAt: &at, ResourceType: "MergeRequest", ResourceID: mr.id,
			User:  *s.basicUser(e.user),
			Label: gitlab.LabelEventLabel{ID: labelID(e.label), Name: e.label, Color: "#428BCA", TextColor: "#FFFFFF"},
		})
	}
	from, to := paginate(c, len(list))
	return reply{status: http.StatusOK, value: list[from:to]}, nil
}

// labelID is a stable id for a label name.
func labelID(name string) int64 {
	var h int64 = 7
	for _, r := range strings.ToLower(name) {
		h = h*31 + int64(r)
	}
	if h < 0 {
		h = -h
	}
	return h%100000 + 1
}

func (s *Server) basicMR(p *project, mr *mergeRequest) *gitlab.BasicMergeRequest {
	created, updated := mr.created, mr.updated
	labels := append(gitlab.Labels{}, mr.labels...)
	sort.Strings(labels) // GitLab lists an MR's labels by title
	out := &gitlab.BasicMergeRequest{
		ID: mr.id, IID: mr.iid, TargetBranch: mr.target, SourceBranch: mr.source, ProjectID: p.id,
		Title: mr.title, Description: mr.desc, State: mr.state, CreatedAt: &created, UpdatedAt: &updated,
		Author: s.basicUser(mr.author), SourceProjectID: p.id, TargetProjectID: p.id, Labels: labels,
		MergedAt: mr.mergedAt, SHA: mr.head, MergeCommitSHA: mr.mergeCommit, SquashCommitSHA: mr.squashCommit,
		ShouldRemoveSourceBranch: mr.removeSource, DetailedMergeStatus: "mergeable",
		WebURL: s.URL + "/" + p.path + "/-/merge_requests/" + strconv.FormatInt(mr.iid, 10),
		References: &gitlab.IssueReferences{Short: "!" + strconv.FormatInt(mr.iid, 10), Relative: "!" + strconv.FormatInt(mr.iid, 10),
			Full: p.path + "!" + strconv.FormatInt(mr.iid, 10)},
	}
	if mr.state == "merged" && mr.mergedBy != nil {
		out.MergeUser = s.basicUser(mr.mergedBy)
	}
	return out
}

func (s *Server) fullMR(p *project, mr *mergeRequest) *gitlab.MergeRequest {
	out := &gitlab.MergeRequest{BasicMergeRequest: *s.basicMR(p, mr)}
	out.ChangesCount = strconv.Itoa(len(mr.commits))
	out.DiffRefs = gitlab.MergeRequestDiffRefs{HeadSha: mr.head, BaseSha: p.repo.branches[mr.target], StartSha: p.repo.branches[mr.target]}
	return out
}
