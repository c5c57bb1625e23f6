package gitlabfake

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// pipeline is the external pipeline GitLab creates for commit statuses of a (commit, ref).
type pipeline struct {
	id  int64
	sha string
	ref string
}

// commitStatus is a generic commit status (an external job of a pipeline).
type commitStatus struct {
	id          int64
	pipeline    *pipeline
	name        string
	state       gitlab.BuildStateValue
	description string
	targetURL   string
	author      *user
	created     time.Time
	started     *time.Time
	finished    *time.Time
}

// transitions is GitLab's commit-status state machine (app/models/commit_status.rb), reduced to
// the states a generic commit status can be in: each event and the states it leaves from.
var transitions = map[string]struct {
	from []gitlab.BuildStateValue
	to   gitlab.BuildStateValue
}{
	"enqueue": {from: []gitlab.BuildStateValue{gitlab.Created, gitlab.Skipped, gitlab.Manual, gitlab.Scheduled}, to: gitlab.Pending},
	"run":     {from: []gitlab.BuildStateValue{gitlab.Pending}, to: gitlab.Running},
	"skip":    {from: []gitlab.BuildStateValue{gitlab.Created, gitlab.WaitingForResource, gitlab.Preparing, gitlab.Pending}, to: gitlab.Skipped},
	"drop": {from: []gitlab.BuildStateValue{gitlab.Created, gitlab.WaitingForResource, gitlab.Preparing, gitlab.Pending, gitlab.Running,
		gitlab.Manual, gitlab.Scheduled}, to: gitlab.Failed},
	"success": {from: []gitlab.BuildStateValue{gitlab.Created, gitlab.WaitingForResource, gitlab.Preparing, gitlab.Pending, gitlab.Running}, to: gitlab.Success},
	"cancel": {from: []gitlab.BuildStateValue{gitlab.Created, gitlab.WaitingForResource, gitlab.Preparing, gitlab.Pending, gitlab.Running,
		gitlab.Scheduled, gitlab.Manual}, to: gitlab.Canceled},
}

// fire applies an event; strict is GitLab's bang form (event!), which fails on a transition the
// state machine does not have, where the plain form leaves the state as it is.
func (st *commitStatus) fire(event string, strict bool, now time.Time) error {
	t := transitions[event]
	for _, from := range t.from {
		if st.state == from {
			st.state = t.to
			switch t.to {
			case gitlab.Running:
				st.started = &now
			case gitlab.Success, gitlab.Failed, gitlab.Canceled:
				st.finished = &now
			}
			return nil
		}
	}
	if !strict {
		return nil
	}
	return fail(http.StatusBadRequest, "Cannot transition status via :%s from :%s (Reason(s): Status cannot transition via \"%s\")", event, st.state, event)
}

// apply is Ci::CreateCommitStatusService#apply_job_state!: the events a posted state fires.
func (st *commitStatus) apply(state gitlab.BuildStateValue, now time.Time) error {
	switch state {
	case gitlab.Pending:
		return st.fire("enqueue", true, now)
	case gitlab.Running:
		_ = st.fire("enqueue", false, now)
		return st.fire("run", true, now)
	case gitlab.Success:
		return st.fire("success", true, now)
	case gitlab.Failed:
		return st.fire("drop", true, now)
	case gitlab.Canceled:
		return st.fire("cancel", true, now)
	case gitlab.Skipped:
		return st.fire("skip", true, now)
	}
	return invalidParam("state does not have a valid value")
}

// setStatus serves POST /projects/:id/statuses/:sha.
func (s *Server) setStatus(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	if err := s.need(c, p, gitlab.DeveloperPermissions); err != nil {
		return reply{}, err
	}
	var opt gitlab.SetCommitStatusOptions
	if err := decodeBody(c, &opt); err != nil {
		return reply{}, err
	}
	sha := c.params["sha"]
	if p.repo.commits[sha] == nil {
		return reply{}, notFound("Commit")
	}
	if opt.State == "" {
		return reply{}, invalidParam("state is missing")
	}
	ref := deref(opt.Ref)
	var pl *pipeline
	if opt.PipelineID != nil {
		// Only a pipeline of this commit (and ref, if given) may be named.
		for _, cand := range p.pipelines {
			if cand.id == *opt.PipelineID && cand.sha == sha && (ref == "" || cand.ref == ref) {
				pl = cand
			}
		}
		if pl == nil {
			return reply{}, notFound("Pipeline for pipeline_id, sha and ref")
		}
		ref = pl.ref
	}
	if ref == "" {
		if newest := s.newestPipeline(p, sha, ""); newest != nil {
			ref = newest.ref
		} else if branches := p.repo.branchesContaining(sha); len(branches) > 0 {
			ref = branches[0]
		}
	}
	if ref == "" {
		return reply{}, notFound("References for commit")
	}
	name := deref(opt.Name)
	if name == "" {
		name = deref(opt.Context)
	}
	if name == "" {
		name = "default"
	}
	if pl == nil {
		pl = s.newestPipeline(p, sha, ref)
	}
	if pl == nil {
		pl = &pipeline{id: s.newID(), sha: sha, ref: ref}
		p.pipelines = append(p.pipelines, pl)
	}
	now := s.now()
	// The status this post updates: the context's in this pipeline that is still pending or
	// running and was posted by the same user; otherwise a new one.
	var st *commitStatus
	for _, cand := range p.statuses {
		if cand.pipeline == pl && cand.name == name && cand.author == c.user &&
			(cand.state == gitlab.Pending || cand.state == gitlab.Running) {
			st = cand
		}
	}
	fresh := st == nil
	if fresh {
		st = &commitStatus{pipeline: pl, name: name, state: gitlab.Created, author: c.user, created: now}
	}
	next := *st
	if opt.Description != nil {
		next.description = *opt.Description
	}
	if opt.TargetURL != nil {
		next.targetURL = *opt.TargetURL
	}
	if err := next.apply(opt.State, now); err != nil {
		return reply{}, err
	}
	*st = next
	if fresh {
		st.id = s.newID()
		p.statuses = append(p.statuses, st)
	}
	return reply{status: http.StatusCreated, value: s.statusValue(st)}, nil
}

// newestPipeline is the newest pipeline of sha (for ref, unless empty).
func (s *Server) newestPipeline(p *project, sha, ref string) *pipeline {
	var out *pipeline
	for _, pl := range p.pipelines {
		if pl.sha == sha && (ref == "" || pl.ref == ref) {
			out = pl
		}
	}
	return out
}

// listStatuses serves GET /projects/:id/repository/commits/:sha/statuses: the latest status of
// each name in each pipeline of the commit (every status with all=true), oldest first.
func (s *Server) listStatuses(c *call) (reply, error) {
	p, err := s.findProject(c)
	if err != nil {
		return reply{}, err
	}
	if err := s.need(c, p, gitlab.ReporterPermissions); err != nil {
		return reply{}, err
	}
	sha := c.params["sha"]
	if p.repo.commits[sha] == nil {
		return reply{}, notFound("Commit")
	}
	all := c.query.Get("all") == "true"
	latest := map[string]int64{} // "pipeline\x00name" -> highest id
	for _, st := range p.statuses {
		key := strconv.FormatInt(st.pipeline.id, 10) + "\x00" + st.name
		latest[key] = max(latest[key], st.id)
	}
	var list []*gitlab.CommitStatus
	for _, st := range p.statuses {
		if st.pipeline.sha != sha {
			continue
		}
		if !all && latest[strconv.FormatInt(st.pipeline.id, 10)+"\x00"+st.name] != st.id {
			continue
		}
		if ref := c.query.Get("ref"); ref != "" && st.pipeline.ref != ref {
			continue
		}
		if name := c.query.Get("name"); name != "" && st.name != name {
			continue
		}
		if stage := c.query.Get("stage"); stage != "" && stage != "external" {
			continue
		}
		if id := c.query.Get("pipeline_id"); id != "" && id != strconv.FormatInt(st.pipeline.id, 10) {
			continue
		}
		list = append(list, s.statusValue(st))
	}
	from, to := paginate(c, len(list))
	return reply{status: http.StatusOK, value: list[from:to]}, nil
}

func (s *Server) statusValue(st *commitStatus) *gitlab.CommitStatus {
	created := st.created
	return &gitlab.CommitStatus{
		ID: st.id, SHA: st.pipeline.sha, Ref: st.pipeline.ref, Status: string(st.state), Name: st.name,
		Description: st.description, TargetURL: st.targetURL, CreatedAt: &created, StartedAt: st.started, FinishedAt: st.finished,
		PipelineID: st.pipeline.id,
		Author: gitlab.Author{ID: st.author.id, Username: st.author.username, Name: st.author.name, State: st.author.state,
			Email: st.author.email},
	}
}

// Status is a commit status as the fake holds it, for assertions.
type Status struct {
	// ID is the status's id.
	ID int64
	// Name is its context.
	Name string
	// State is GitLab's state: created, pending, running, success, failed, canceled, skipped.
	State string
	// Description and TargetURL as posted.
	Description, TargetURL string
	// Ref is the branch the status's pipeline runs for.
	Ref string
	// Author is the username of the poster.
	Author string
	// Started tells whether it went through running.
	Started bool
}

// Statuses lists every status of the commit sha in project, oldest first (retried ones
// included).
func (s *Server) Statuses(projectPath, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	for _, st := range s.mustProject(projectPath).statuses {
		if st.pipeline.sha == sha {
			out = append(out, Status{ID: st.id, Name: st.name, State: string(st.state), Description: st.description,
				TargetURL: st.targetURL, Ref: st.pipeline.ref, Author: st.author.username, Started: st.started != nil})
		}
	}
	return out
}

// paginate applies GitLab's offset pagination (page, per_page: default 20, at most 100) to n
// items, setting the X-Page, X-Per-Page, X-Total, X-Total-Pages and X-Next-Page headers, and
// returns the slice bounds of the page.
func paginate(c *call, n int) (int, int) {
	perPage := 20
	if v, ok := parseInt(c.query.Get("per_page")); ok && v > 0 {
		perPage = int(min(v, 100))
	}
	page := 1
	if v, ok := parseInt(c.query.Get("page")); ok && v > 0 {
		page = int(v)
	}
	pages := max((n+perPage-1)/perPage, 1)
	c.header.Set("X-Page", strconv.Itoa(page))
	c.header.Set("X-Per-Page", strconv.Itoa(perPage))
	c.header.Set("X-Total", strconv.Itoa(n))
	c.header.Set("X-Total-Pages", strconv.Itoa(pages))
	if page < pages {
		c.header.Set("X-Next-Page", strconv.Itoa(page+1))
	} else {
		c.header.Set("X-Next-Page", "")
	}
	from := min((page-1)*perPage, n)
	return from, min(from+perPage, n)
}

func parseInt(s string) (int64, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
