package scm

import (
	"strings"

	"github.com/sluice-dev/sluice/internal/bounded"
)

// StatusMemory remembers the last status a CommitStatusWriter posted or saw per (commit,
// context), at most a fixed number of them, forgetting the oldest first. It is what lets a
// writer post only on change without listing a commit's statuses every time. It is safe for
// concurrent use.
type StatusMemory struct {
	m *bounded.Map[string, CommitStatus]
}

// NewStatusMemory returns a StatusMemory of at most size entries (at least one).
func NewStatusMemory(size int) *StatusMemory {
	return &StatusMemory{m: bounded.New[string, CommitStatus](size)}
}

// statusKey is the key of a (commit, context); contexts compare case-insensitively.
func statusKey(sha, statusContext string) string {
	return sha + "\x00" + strings.ToLower(statusContext)
}

// Get returns the status remembered for the context of the commit sha.
func (m *StatusMemory) Get(sha, statusContext string) (CommitStatus, bool) {
	return m.m.Get(statusKey(sha, statusContext))
}

// Put remembers s as the status of its context on the commit sha.
func (m *StatusMemory) Put(sha string, s CommitStatus) {
	m.m.Put(statusKey(sha, s.Context), s)
}

// Forget drops what is remembered for the context of the commit sha (after a failed post,
// which may or may not have been applied).
func (m *StatusMemory) Forget(sha, statusContext string) {
	m.m.Forget(statusKey(sha, statusContext))
}
