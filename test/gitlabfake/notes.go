package gitlabfake

import (
	"net/http"
	"sort"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// note is a note (comment) on a merge request.
type note struct {
	id      int64
	author  *user
	body    string
	system  bool
	created time.Time
	updated time.Time
	edits   int
}

// Note is a note on a merge request as the fake stores it.
type Note struct {
	// ID is the note's id.
	ID int64
	// Author is the username of who wrote it.
	Author string
	// Body is its text.
	Body string
	// System marks a note GitLab writes itself (a label added, a push).
	System bool
	// Edits counts how often it was edited.
	Edits int
}

// Notes returns the notes of a merge request, oldest first.
func (s *Server) Notes(projectPath string, iid int64) []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Note
	for _, n := range s.mustMR(s.mustProject(projectPath), iid).notes {
		out = append(out, Note{ID: n.id, Author: n.author.username, Body: n.body, System: n.system, Edits: n.edits})
	}
	return out
}

// AddSystemNote records a note GitLab writes itself on a merge request (as when a label is
// added): the notes API lists it with system true.
func (s *Server) AddSystemNote(projectPath string, iid int64, username, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.addNote(s.mustMR(s.mustProject(projectPath), iid), s.mustUser(username), body)
	n.system = true
}

func (s *Server) addNote(mr *mergeRequest, u *user, body string) *note {
	now := s.now()
	n := &note{id: s.newID(), author: u, body: body, created: now, updated: now}
	mr.notes = append(mr.notes, n)
	return n
}

func (s *Server) noteValue(mr *mergeRequest, n *note) *gitlab.Note {
	created, updated := n.created, n.updated
	return &gitlab.Note{
		ID: n.id, Body: n.body, System: n.system, NoteableID: mr.id, NoteableIID: mr.iid, NoteableType: "MergeRequest",
		Author: gitlab.NoteAuthor{ID: n.author.id, Username: n.author.username, Name: n.author.name, State: n.author.state,
			WebURL: s.URL + "/" + n.author.username},
		CreatedAt: &created, UpdatedAt: &updated,
	}
}

// currentUser serves GET /user: the token's user.
func (s *Server) currentUser(c *call) (reply, error) {
	u := c.user
	return reply{status: http.StatusOK, value: &gitlab.User{ID: u.id, Username: u.username, Name: u.name, State: u.state,
		Email: u.email, WebURL: s.URL + "/" + u.username}}, nil
}

// notesTarget finds the merge request of a notes call; commenting needs at least Guest access
// (any member may comment; the fake has no public commenting).
func (s *Server) notesTarget(c *call) (*mergeRequest, error) {
	p, err := s.findProject(c)
	if err != nil {
		return nil, err
	}
	return s.findMR(c, p)
}

// listNotes serves GET /projects/:id/merge_requests/:iid/notes, ordered by order_by
// (created_at, the default, or updated_at) and sort (desc, the default, or asc), as GitLab does.
func (s *Server) listNotes(c *call) (reply, error) {
	mr, err := s.notesTarget(c)
	if err != nil {
		return reply{}, err
	}
	list := make([]*gitlab.Note, 0, len(mr.notes))
	for _, n := range mr.notes {
		list = append(list, s.noteValue(mr, n))
	}
	byUpdated := c.query.Get("order_by") == "updated_at"
	asc := strings.EqualFold(c.query.Get("sort"), "asc")
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i].CreatedAt, list[j].CreatedAt
		if byUpdated {
			a, b = list[i].UpdatedAt, list[j].UpdatedAt
		}
		if a.Equal(*b) {
			if asc {
				return list[i].ID < list[j].ID
			}
			return list[i].ID > list[j].ID
		}
		if asc {
			return a.Before(*b)
		}
		return a.After(*b)
	})
	from, to := paginate(c, len(list))
	return reply{status: http.StatusOK, value: list[from:to]}, nil
}

// createNote serves POST /projects/:id/merge_requests/:iid/notes as the token's user.
func (s *Server) createNote(c *call) (reply, error) {
	mr, err := s.notesTarget(c)
	if err != nil {
		return reply{}, err
	}
	var in gitlab.CreateMergeRequestNoteOptions
	if err := decodeBody(c, &in); err != nil {
		return reply{}, err
	}
	if in.Body == nil || strings.TrimSpace(*in.Body) == "" {
		return reply{}, invalidParam("body is missing")
	}
	return reply{status: http.StatusCreated, value: s.noteValue(mr, s.addNote(mr, c.user, *in.Body))}, nil
}

// updateNote serves PUT /projects/:id/merge_requests/:iid/notes/:note_id: only its author may
// edit a note (GitLab answers others 403).
func (s *Server) updateNote(c *call) (reply, error) {
	mr, err := s.notesTarget(c)
	if err != nil {
		return reply{}, err
	}
	var in gitlab.UpdateMergeRequestNoteOptions
	if err := decodeBody(c, &in); err != nil {
		return reply{}, err
	}
	id, _ := parseInt(c.params["note_id"])
	for _, n := range mr.notes {
		if n.id != id {
			continue
		}
		if n.author.id != c.user.id || n.system {
			return reply{}, fail(http.StatusForbidden, "403 Forbidden")
		}
		if in.Body != nil {
			n.body = *in.Body
		}
		n.updated = s.now()
		n.edits++
		return reply{status: http.StatusOK, value: s.noteValue(mr, n)}, nil
	}
	return reply{}, notFound("Note")
}
