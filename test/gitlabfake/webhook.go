package gitlabfake

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// The X-Gitlab-Event names of the events the fake delivers.
const (
	EventMergeRequest = "Merge Request Hook"
	EventPush         = "Push Hook"
	EventNote         = "Note Hook"
)

// hook is a project webhook.
type hook struct {
	uuid    string
	project *project
	url     string
	token   string
}

// outgoing is a delivery to send once the fake's lock is released.
type outgoing struct {
	hook  *hook
	event string
	uuid  string // X-Gitlab-Event-UUID
	body  []byte
}

// Delivery is a webhook delivery the fake sent.
type Delivery struct {
	// Event is the X-Gitlab-Event header, e.g. "Merge Request Hook".
	Event string
	// UUID is the X-Gitlab-Event-UUID header.
	UUID string
	// Token is the X-Gitlab-Token header (the hook's secret token).
	Token string
	// Body is the exact payload sent.
	Body []byte
	// Status is the receiver's HTTP answer (0 when the request failed).
	Status int
}

// AddHook registers a webhook of project delivering every event the fake produces to url with
// token as its secret token (X-Gitlab-Token; empty sends none).
func (s *Server) AddHook(projectPath, url, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, &hook{uuid: newUUID(), project: s.mustProject(projectPath), url: url, token: token})
}

// Deliveries returns the deliveries sent so far, oldest first.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.sent...)
}

// Redeliver sends a delivery again with the same headers and body (GitLab's "Resend request"),
// returning the receiver's answer.
func (s *Server) Redeliver(d Delivery) int {
	s.mu.Lock()
	var target *hook
	for _, h := range s.hooks {
		if h.token == d.Token {
			target = h
		}
	}
	s.mu.Unlock()
	if target == nil {
		return 0
	}
	s.deliver([]outgoing{{hook: target, event: d.Event, uuid: d.UUID, body: d.Body}})
	sent := s.Deliveries()
	return sent[len(sent)-1].Status
}

// queue keeps deliveries made while serving a request, sent when the request is answered.
func (s *Server) queue(list []outgoing) {
	s.pending = append(s.pending, list...)
}

// takeQueued returns and forgets the queued deliveries; s.mu is held.
func (s *Server) takeQueued() []outgoing {
	list := s.pending
	s.pending = nil
	return list
}

// deliver sends deliveries in order; s.mu must not be held.
func (s *Server) deliver(list []outgoing) {
	client := &http.Client{Timeout: 30 * time.Second}
	for _, o := range list {
		d := Delivery{Event: o.event, UUID: o.uuid, Token: o.hook.token, Body: o.body}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, o.hook.url, bytes.NewReader(o.body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("User-Agent", "GitLab/18.6.0")
			req.Header.Set("X-Gitlab-Event", o.event)
			req.Header.Set("X-Gitlab-Event-UUID", o.uuid)
			req.Header.Set("X-Gitlab-Webhook-UUID", o.hook.uuid)
			req.Header.Set("X-Gitlab-Instance", s.URL)
			req.Header.Set("Idempotency-Key", o.uuid)
			if o.hook.token != "" {
				req.Header.Set("X-Gitlab-Token", o.hook.token)
			}
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				d.Status = resp.StatusCode
			}
		}
		s.mu.Lock()
		s.sent = append(s.sent, d)
		s.mu.Unlock()
	}
}

// payload marshals an event of a client-go webhook type, keeping in "changes" only the keys
// named (GitLab sends only what changed).
func payload(event any, changes map[string]any) []byte {
	raw, err := json.Marshal(event)
	if err != nil {
		panic(err)
	}
	if changes == nil {
		return raw
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		panic(err)
	}
	c, err := json.Marshal(changes)
	if err != nil {
		panic(err)
	}
	m["changes"] = c
	out, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return out
}

func (s *Server) hooksOf(p *project) []*hook {
	var out []*hook
	for _, h := range s.hooks {
		if h.project == p {
			out = append(out, h)
		}
	}
	return out
}

func (s *Server) fanOut(p *project, event string, body []byte) []outgoing {
	uuid := newUUID()
	var out []outgoing
	for _, h := range s.hooksOf(p) {
		out = append(out, outgoing{hook: h, event: event, uuid: uuid, body: body})
	}
	return out
}

func (s *Server) eventUser(u *user) *gitlab.EventUser {
	return &gitlab.EventUser{ID: u.id, Name: u.name, Username: u.username, Email: u.email}
}

func (s *Server) eventLabels(p *project, names []string) []*gitlab.EventLabel {
	out := []*gitlab.EventLabel{}
	for _, n := range names {
		out = append(out, &gitlab.EventLabel{ID: labelID(n), Title: n, Color: "#428BCA", ProjectID: p.id, Type: "ProjectLabel"})
	}
	return out
}

// pushHooks is the Push Hook of branch moving from before to after.
func (s *Server) pushHooks(p *project, u *user, branch, before, after string) []outgoing {
	if before == "" {
		before = strings.Repeat("0", 40)
	}
	var commits []*gitlab.PushEventCommit
	for _, sha := range p.repo.onlyIn(after, before) {
		c := p.repo.commits[sha]
		at := c.author.when
		commits = append(commits, &gitlab.PushEventCommit{ID: sha, Message: c.message, Title: c.title(), Timestamp: &at,
			URL: s.URL + "/" + p.path + "/-/commit/" + sha})
	}
	ev := gitlab.PushEvent{
		ObjectKind: "push", EventName: "push", Before: before, After: after, Ref: "refs/heads/" + branch, CheckoutSHA: after,
		UserID: u.id, UserName: u.name, UserUsername: u.username, UserEmail: u.email, ProjectID: p.id,
		Project: gitlab.PushEventProject{ID: p.id, Name: lastSegment(p.path), PathWithNamespace: p.path, DefaultBranch: p.repo.defaultBranch,
			WebURL: s.URL + "/" + p.path, Namespace: namespaceOf(p.path), Visibility: gitlab.PrivateVisibility},
		Commits: commits, TotalCommitsCount: int64(len(commits)),
	}
	return s.fanOut(p, EventPush, payload(ev, nil))
}

// hookChanges says what an "update" of a merge request changed.
type hookChanges struct {
	oldrev   string   // new commits: the previous head
	labels   bool     // the labels changed
	previous []string // the labels before
}

// mrHook is the Merge Request Hook of an action (open, update, merge, close) on mr by u.
func (s *Server) mrHook(p *project, mr *mergeRequest, u *user, action string, ch hookChanges) []outgoing {
	last := p.repo.commits[mr.head]
	at := last.author.when
	attrs := gitlab.MergeEventObjectAttributes{
		ID: mr.id, IID: mr.iid, TargetBranch: mr.target, SourceBranch: mr.source, SourceProjectID: p.id, TargetProjectID: p.id,
		AuthorID: mr.author.id, Title: mr.title, Description: mr.desc, State: mr.state, Action: action,
		CreatedAt: mr.created.Format("2006-01-02 15:04:05 UTC"), UpdatedAt: mr.updated.Format("2006-01-02 15:04:05 UTC"),
		MergeCommitSHA: mr.mergeCommit, OldRev: ch.oldrev, DetailedMergeStatus: "mergeable", MergeStatus: "can_be_merged",
		URL:        s.URL + "/" + p.path + "/-/merge_requests/" + strconv.FormatInt(mr.iid, 10),
		LastCommit: gitlab.EventMergeRequestLastCommit{ID: mr.head, Title: last.title(), Message: last.message, Timestamp: &at},
		Labels:     s.eventLabels(p, mr.labels),
	}
	ev := gitlab.MergeEvent{
		ObjectKind: "merge_request", EventType: "merge_request", User: s.eventUser(u),
		Project: gitlab.MergeEventProject{ID: p.id, Name: lastSegment(p.path), PathWithNamespace: p.path, DefaultBranch: p.repo.defaultBranch,
			WebURL: s.URL + "/" + p.path, Namespace: namespaceOf(p.path), Visibility: gitlab.PrivateVisibility},
		ObjectAttributes: attrs, Labels: s.eventLabels(p, mr.labels),
	}
	changes := map[string]any{}
	if ch.labels {
		changes["labels"] = gitlab.EventChangesLabels{Previous: s.eventLabels(p, ch.previous), Current: s.eventLabels(p, mr.labels)}
	}
	if action == "merge" || action == "close" {
		changes["state_id"] = gitlab.EventChangesStateID{Previous: gitlab.StateIDOpen, Current: stateID(mr.state)}
	}
	return s.fanOut(p, EventMergeRequest, payload(ev, changes))
}

func stateID(state string) gitlab.StateID {
	switch state {
	case "merged":
		return gitlab.StateIDMerged
	case "closed":
		return gitlab.StateIDClosed
	}
	return gitlab.StateIDOpen
}

// CommentOnMergeRequest has username comment body on a merge request: a note, and a Note Hook
// delivery. It returns the note's id.
func (s *Server) CommentOnMergeRequest(projectPath string, iid int64, username, body string) int64 {
	s.mu.Lock()
	p := s.mustProject(projectPath)
	u := s.mustUser(username)
	mr := s.mustMR(p, iid)
	n := s.addNote(mr, u, body)
	now := n.created.Format("2006-01-02 15:04:05 UTC")
	ev := gitlab.MergeCommentEvent{
		ObjectKind: "note", EventType: "note", User: s.eventUser(u), ProjectID: p.id,
		Project: gitlab.MergeCommentEventProject{ID: p.id, Name: lastSegment(p.path), PathWithNamespace: p.path,
			DefaultBranch: p.repo.defaultBranch, WebURL: s.URL + "/" + p.path, Namespace: namespaceOf(p.path)},
		ObjectAttributes: gitlab.MergeCommentEventObjectAttributes{ID: n.id, Note: body, NoteableType: "MergeRequest",
			NoteableID: mr.id, AuthorID: u.id, ProjectID: p.id, CreatedAt: now, UpdatedAt: now, Action: gitlab.CommentEventActionCreate,
			URL: fmt.Sprintf("%s/%s/-/merge_requests/%d#note_%d", s.URL, p.path, mr.iid, n.id)},
		MergeRequest: gitlab.MergeCommentEventMergeRequest{ID: mr.id, IID: mr.iid, TargetBranch: mr.target, SourceBranch: mr.source,
			SourceProjectID: p.id, TargetProjectID: p.id, AuthorID: mr.author.id, Title: mr.title, State: mr.state,
			LastCommit: gitlab.EventMergeRequestLastCommit{ID: mr.head}, Labels: s.eventLabels(p, mr.labels)},
	}
	deliveries := s.fanOut(p, EventNote, payload(ev, nil))
	s.mu.Unlock()
	s.deliver(deliveries)
	return n.id
}

func lastSegment(path string) string {
	return path[strings.LastIndex(path, "/")+1:]
}

func namespaceOf(path string) string {
	ns, _ := cutLast(path)
	return ns
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
