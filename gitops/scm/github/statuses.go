package github

import (
	"context"
	"strings"

	gh "github.com/google/go-github/v56/github"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// maxStatusPages bounds the listing of a commit's statuses: GitHub keeps at most 1000 per
// (commit, context), and the newest come first.
const maxStatusPages = 10

// SetStatus implements scm.CommitStatusWriter. Calls are serialised, so two callers never post
// the same status twice. A failed post is forgotten: the next call for that (sha, context) lists
// the commit's statuses again before posting, in case the failed post was applied after all.
func (c *Client) SetStatus(ctx context.Context, sha string, status scm.CommitStatus) (bool, error) {
	status, err := status.Validate()
	if err != nil {
		return false, err
	}
	key := sha + "\x00" + strings.ToLower(status.Context)
	c.statusMu.Lock()
	defer c.statusMu.Unlock()
	last, known := c.statuses.get(key)
	if !known {
		if last, known, err = c.latestStatus(ctx, sha, status.Context); err != nil {
			return false, err
		}
		if known {
			c.statuses.put(key, last)
		}
	}
	if known && last.Same(status) {
		return false, nil
	}
	_, resp, err := c.gh.Repositories.CreateStatus(ctx, c.owner, c.repo, sha, &gh.RepoStatus{
		State:       gh.String(string(status.State)),
		Description: gh.String(status.Description),
		TargetURL:   optional(status.TargetURL),
		Context:     gh.String(status.Context),
	})
	if err != nil {
		c.statuses.forget(key)
		return false, mapError(err, resp, "creating the status of commit "+sha, c.now())
	}
	c.statuses.put(key, status)
	return true, nil
}

// latestStatus finds the newest status of statusContext on sha.
func (c *Client) latestStatus(ctx context.Context, sha, statusContext string) (scm.CommitStatus, bool, error) {
	opts := &gh.ListOptions{PerPage: 100}
	for page := 0; page < maxStatusPages; page++ {
		list, resp, err := c.gh.Repositories.ListStatuses(ctx, c.owner, c.repo, sha, opts)
		if err != nil {
			return scm.CommitStatus{}, false, mapError(err, resp, "listing the statuses of commit "+sha, c.now())
		}
		for _, s := range list {
			if strings.EqualFold(s.GetContext(), statusContext) {
				return scm.CommitStatus{
					Context:     s.GetContext(),
					State:       scm.CommitState(s.GetState()),
					Description: s.GetDescription(),
					TargetURL:   s.GetTargetURL(),
				}, true, nil
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return scm.CommitStatus{}, false, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// statusMemory remembers the last status posted or seen per (sha, context), at most size of
// them; the oldest is forgotten first.
type statusMemory struct {
	size  int
	byKey map[string]scm.CommitStatus
	order []string
}

func newStatusMemory(size int) *statusMemory {
	return &statusMemory{size: size, byKey: map[string]scm.CommitStatus{}}
}

func (m *statusMemory) get(key string) (scm.CommitStatus, bool) {
	s, ok := m.byKey[key]
	return s, ok
}

func (m *statusMemory) put(key string, s scm.CommitStatus) {
	if _, ok := m.byKey[key]; !ok {
		m.order = append(m.order, key)
	}
	m.byKey[key] = s
	for len(m.order) > m.size {
		delete(m.byKey, m.order[0])
		m.order = m.order[1:]
	}
}

func (m *statusMemory) forget(key string) {
	if _, ok := m.byKey[key]; !ok {
		return
	}
	delete(m.byKey, key)
	for i, k := range m.order {
		if k == key {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
}
