package githubfake

import (
	"crypto/rsa"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Roles a collaborator can have, as GitHub names them in role_name.
const (
	RoleAdmin    = "admin"
	RoleMaintain = "maintain"
	RoleWrite    = "write"
	RoleTriage   = "triage"
	RoleRead     = "read"
)

// repository is one repository's state.
type repository struct {
	id            int64
	owner, name   string
	defaultBranch string
	blobs         map[string][]byte
	trees         map[string]tree
	commits       map[string]*commit
	refs          map[string]string // "refs/heads/main" -> sha
	pulls         map[int]*pullRequest
	events        map[int][]*issueEvent
	statuses      map[string][]*status // sha -> oldest first
	roles         map[string]string    // login -> role
	nextNumber    int
	comments      map[int][]*issueComment // issue or pull request number -> oldest first
	checkRuns     []*checkRun             // oldest first
}

// pullRequest is a pull request's state.
type pullRequest struct {
	id          int64
	number      int
	title, body string
	state       string
	user        string
	head, base  string
	headSHA     string
	forkPoint   string
	labels      []string
	merged      bool
	mergeCommit string
	mergedBy    string
	createdAt   time.Time
	updatedAt   time.Time
	mergedAt    time.Time
}

// issueEvent is an event of an issue or pull request's history.
type issueEvent struct {
	id        int64
	event     string
	actor     string
	label     string
	createdAt time.Time
}

// status is a commit status.
type status struct {
	id                            int64
	state, description, targetURL string
	context, creator              string
	createdAt                     time.Time
}

// app is a GitHub App with one installation.
type app struct {
	id             int64
	clientID       string
	installationID int64
	key            *rsa.PublicKey
	tokenTTL       time.Duration
}

// Status is a commit status as the fake stores it.
type Status struct {
	// State is pending, success, failure or error.
	State string
	// Description is the status's text.
	Description string
	// TargetURL is the status's link.
	TargetURL string
	// Context names the status.
	Context string
	// Creator is the login of who posted it.
	Creator string
}

func (s *Server) repo(owner, name string) (*repository, error) {
	r := s.repos[strings.ToLower(owner+"/"+name)]
	if r == nil {
		return nil, fmt.Errorf("repository %s/%s does not exist", owner, name)
	}
	return r, nil
}

func (s *Server) mustRepo(fullName string) *repository {
	owner, name, _ := strings.Cut(fullName, "/")
	r, err := s.repo(owner, name)
	if err != nil {
		panic(err)
	}
	return r
}

// CreateRepo creates an empty repository "owner/name" whose default branch is branch, with a
// first commit holding files.
func (s *Server) CreateRepo(fullName, branch string, files map[string]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok {
		panic("githubfake: repository name must be owner/name")
	}
	s.nextID++
	r := &repository{
		id: s.nextID, owner: owner, name: name, defaultBranch: branch,
		blobs: map[string][]byte{}, trees: map[string]tree{}, commits: map[string]*commit{},
		refs: map[string]string{}, pulls: map[int]*pullRequest{}, events: map[int][]*issueEvent{},
		statuses: map[string][]*status{}, roles: map[string]string{owner: RoleAdmin},
	}
	s.repos[strings.ToLower(fullName)] = r
	return s.commitFiles(r, branch, "Initial commit", files, nil, Signature{Name: owner, Email: owner + "@users.invalid"})
}

// Commit commits files (path -> content; an empty content removes the path) on branch, which is
// created from from if it does not exist yet. It returns the new commit's sha.
func (s *Server) Commit(fullName, branch, from, message string, files map[string]string, author Signature) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(fullName)
	if _, ok := r.refs["refs/heads/"+branch]; !ok {
		r.refs["refs/heads/"+branch] = r.refs["refs/heads/"+from]
	}
	return s.commitFiles(r, branch, message, files, nil, author)
}

// commitFiles writes a commit on branch with files changed; extraParents follow the branch head.
func (s *Server) commitFiles(r *repository, branch, message string, files map[string]string, extraParents []string, author Signature) string {
	if author.When.IsZero() {
		author.When = s.clock()
	}
	base := tree{}
	var parents []string
	if head, ok := r.refs["refs/heads/"+branch]; ok && head != "" {
		parents = append(parents, head)
		base = r.trees[r.commits[head].Tree]
	}
	parents = append(parents, extraParents...)
	set := map[string]entry{}
	var removed []string
	for path, content := range files {
		if content == "" {
			removed = append(removed, path)
			continue
		}
		sha := objectID("blob", []byte(content))
		r.blobs[sha] = []byte(content)
		set[path] = entry{SHA: sha, Mode: "100644", Type: "blob"}
	}
	sort.Strings(removed)
	t := base.apply(set, removed)
	return s.storeCommit(r, branch, t, parents, message, author)
}

func (s *Server) storeCommit(r *repository, branch string, t tree, parents []string, message string, author Signature) string {
	treeSHA := treeID(t)
	r.trees[treeSHA] = t
	c := &commit{Tree: treeSHA, Parents: parents, Message: message, Author: author, Committer: author}
	c.SHA = commitID(c)
	r.commits[c.SHA] = c
	if branch != "" {
		r.refs["refs/heads/"+branch] = c.SHA
	}
	return c.SHA
}

// OpenPullRequest opens a pull request of head into base and returns its number.
func (s *Server) OpenPullRequest(fullName, head, base, title, author string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.openPull(s.mustRepo(fullName), head, base, title, "", author)
}

func (s *Server) openPull(r *repository, head, base, title, body, author string) int {
	r.nextNumber++
	s.nextID++
	now := s.clock()
	pr := &pullRequest{
		id: s.nextID, number: r.nextNumber, title: title, body: body, state: "open", user: author,
		head: head, base: base, headSHA: r.refs["refs/heads/"+head], forkPoint: r.refs["refs/heads/"+base],
		createdAt: now, updatedAt: now,
	}
	r.pulls[pr.number] = pr
	return pr.number
}

// MergePullRequest merges a pull request with a merge commit (two parents: the base's head and
// the pull request's head) and returns the merge commit's sha.
func (s *Server) MergePullRequest(fullName string, number int, by string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(fullName)
	pr := r.pulls[number]
	head := r.refs["refs/heads/"+pr.head]
	set, removed := changes(r.trees[r.commits[pr.forkPoint].Tree], r.trees[r.commits[head].Tree])
	baseTree := r.trees[r.commits[r.refs["refs/heads/"+pr.base]].Tree]
	t := baseTree.apply(set, removed)
	sha := s.storeCommit(r, pr.base, t, []string{r.refs["refs/heads/"+pr.base], head},
		fmt.Sprintf("Merge pull request #%d from %s/%s\n\n%s", number, r.owner, pr.head, pr.title),
		Signature{Name: by, Email: by + "@users.invalid", When: s.clock()})
	now := s.clock()
	pr.state, pr.merged, pr.mergeCommit, pr.mergedBy, pr.mergedAt, pr.updatedAt, pr.headSHA = "closed", true, sha, by, now, now, head
	return sha
}

// AddLabel adds a label to a pull request as actor, recording a "labeled" event.
func (s *Server) AddLabel(fullName string, number int, label, actor string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLabel(s.mustRepo(fullName), number, label, actor)
}

// addLabel adds a label to a pull request as actor, recording a "labeled" event, and reports
// whether it was not there yet.
func (s *Server) addLabel(r *repository, number int, label, actor string) bool {
	pr := r.pulls[number]
	for _, l := range pr.labels {
		if strings.EqualFold(l, label) {
			return false
		}
	}
	pr.labels = append(pr.labels, label)
	s.recordEvent(r, number, "labeled", actor, label)
	return true
}

// RemoveLabel removes a label from a pull request as actor, recording an "unlabeled" event.
func (s *Server) RemoveLabel(fullName string, number int, label, actor string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLabelOf(s.mustRepo(fullName), number, label, actor)
}

// removeLabelOf removes a label from a pull request as actor, recording an "unlabeled" event,
// and returns the label's name as it was spelled, "" when the pull request did not have it.
func (s *Server) removeLabelOf(r *repository, number int, label, actor string) string {
	pr := r.pulls[number]
	for i, l := range pr.labels {
		if strings.EqualFold(l, label) {
			pr.labels = append(pr.labels[:i], pr.labels[i+1:]...)
			s.recordEvent(r, number, "unlabeled", actor, l)
			return l
		}
	}
	return ""
}

// DeleteLabelSilently takes a label off a pull request without recording an event, as GitHub
// does when the label is deleted from the repository.
func (s *Server) DeleteLabelSilently(fullName string, number int, label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.mustRepo(fullName).pulls[number]
	for i, l := range pr.labels {
		if strings.EqualFold(l, label) {
			pr.labels = append(pr.labels[:i], pr.labels[i+1:]...)
			return
		}
	}
}

func (s *Server) recordEvent(r *repository, number int, event, actor, label string) {
	s.nextID++
	now := s.clock()
	r.events[number] = append(r.events[number], &issueEvent{id: s.nextID, event: event, actor: actor, label: label, createdAt: now})
	r.pulls[number].updatedAt = now
}

// SetRole gives user a role on the repository ("" removes it).
func (s *Server) SetRole(fullName, user, role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(fullName)
	if role == "" {
		delete(r.roles, user)
		return
	}
	r.roles[user] = role
}

// Statuses returns the statuses of a commit, newest first.
func (s *Server) Statuses(fullName, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.mustRepo(fullName).statuses[sha]
	out := make([]Status, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		st := list[i]
		out = append(out, Status{State: st.state, Description: st.description, TargetURL: st.targetURL, Context: st.context, Creator: st.creator})
	}
	return out
}

// Branch returns the sha a branch points at ("" if it does not exist).
func (s *Server) Branch(fullName, branch string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mustRepo(fullName).refs["refs/heads/"+branch]
}

// Files returns the files of a commit, path -> content.
func (s *Server) Files(fullName, sha string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(fullName)
	c := r.commits[sha]
	if c == nil {
		return nil
	}
	out := map[string]string{}
	for p, e := range r.trees[c.Tree] {
		out[p] = string(r.blobs[e.SHA])
	}
	return out
}

// CommitInfo returns a commit's message and parents.
func (s *Server) CommitInfo(fullName, sha string) (message string, parents []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.mustRepo(fullName).commits[sha]
	if c == nil {
		return "", nil
	}
	return c.Message, append([]string(nil), c.Parents...)
}

// PullRequestInfo describes a pull request as the fake stores it.
type PullRequestInfo struct {
	// Title of the pull request.
	Title string
	// Body of the pull request.
	Body string
	// State is open or closed.
	State string
	// Head and Base are the branches.
	Head, Base string
	// User opened it.
	User string
}

// PullRequests returns the repository's pull requests by number.
func (s *Server) PullRequests(fullName string) map[int]PullRequestInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]PullRequestInfo{}
	for n, pr := range s.mustRepo(fullName).pulls {
		out[n] = PullRequestInfo{Title: pr.title, Body: pr.body, State: pr.state, Head: pr.head, Base: pr.base, User: pr.user}
	}
	return out
}
