package gitops

import (
	"time"

	"github.com/sluice-dev/sluice/gitops/scm"
)

// rolloutWorkers bounds how many bound Rollouts of one gate are reconciled
// at once. The SCM requests they make go through the reconcile's memo, so
// Rollouts of the same commit still ask each question once; the bound
// keeps the concurrent requests to the host well inside what GitHub
// allows (it refuses over 100 at once per user).
const rolloutWorkers = 24

// The scope's shared state: what the concurrently reconciled Rollouts note
// for the gate as a whole.

// noteSCM remembers a rate limit.
func (s *scope) noteSCM(err error) {
	at, ok := scm.RetryAt(err)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if at.After(s.retryAt) {
		s.retryAt = at
	}
}

// rateLimited reports whether the SCM asked to wait past now, and until
// when.
func (s *scope) rateLimited(now time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retryAt, now.Before(s.retryAt)
}

// noteApplying records that a GitOps tool was applying a revision.
func (s *scope) noteApplying() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applying = true
}

// noteWake records a time at which a decision changes by time alone; the
// earliest is kept.
func (s *scope) noteWake(at time.Time) {
	if at.IsZero() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wakeAt.IsZero() || at.Before(s.wakeAt) {
		s.wakeAt = at
	}
}

// teamsOf returns the allowed teams user was found a member of in this
// reconcile, if asked already.
func (s *scope) teamsOf(user string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	teams, ok := s.teams[user]
	return teams, ok
}

// setTeams records the allowed teams user is a member of.
func (s *scope) setTeams(user string, teams []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.teams[user] = teams
}
