package scm

import (
	"strings"
	"sync"
)

// StatusMemory remembers the last status a CommitStatusWriter posted or saw per (commit,
// context), at most a fixed number of them, forgetting the oldest first. It is what lets a
// writer post only on change without listing a commit's statuses every time. It is safe for
// concurrent use.
type StatusMemory struct {
	mu    sync.Mutex
	size  int
	byKey map[string]CommitStatus
	order []string
}

// NewStatusMemory returns a StatusMemory of at most size entries (at least one).
func NewStatusMemory(size int) *StatusMemory {
	return &StatusMemory{size: max(size, 1), byKey: map[string]CommitStatus{}}
}

// statusKey is the key of a (commit, context); contexts compare case-insensitively.
func statusKey(sha, statusContext string) string {
	return sha + "\x00" + strings.ToLower(statusContext)
}

// Get returns the status remembered for the context of the commit sha.
func (m *StatusMemory) Get(sha, statusContext string) (CommitStatus, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byKey[statusKey(sha, statusContext)]
	return s, ok
}

// Put remembers s as the status of its context on the commit sha.
func (m *StatusMemory) Put(sha string, s CommitStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := statusKey(sha, s.Context)
	if _, ok := m.byKey[key]; !ok {
		m.order = append(m.order, key)
	}
	m.byKey[key] = s
	for len(m.order) > m.size {
		delete(m.byKey, m.order[0])
		m.order = m.order[1:]
	}
}

// Forget drops what is remembered for the context of the commit sha (after a failed post,
// which may or may not have been applied).
func (m *StatusMemory) Forget(sha, statusContext string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := statusKey(sha, statusContext)
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
