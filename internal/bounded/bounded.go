// Package bounded holds Map, a map that keeps at most a fixed number of
// entries and forgets the oldest first: what the SCM clients remember of
// what they posted or read (commit statuses, check runs, sticky comments,
// ETags) and the GitOps controller of merge commits' pull requests, so
// that none of it grows without end in a long-running manager.
package bounded

import "sync"

// Map keeps at most its size of entries; putting a new key past that
// forgets the key put first. Putting a key it holds replaces the value and
// keeps the key's place. It is safe for concurrent use. The zero value is
// not usable; use New.
type Map[K comparable, V any] struct {
	mu    sync.Mutex
	size  int
	byKey map[K]V
	order []K
}

// New returns an empty Map of at most size entries (at least one).
func New[K comparable, V any](size int) *Map[K, V] {
	return &Map[K, V]{size: max(size, 1), byKey: map[K]V{}}
}

// Get returns the value of k and whether it is held.
func (m *Map[K, V]) Get(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.byKey[k]
	return v, ok
}

// Put sets the value of k, forgetting the oldest keys past the size.
func (m *Map[K, V]) Put(k K, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byKey[k]; !ok {
		m.order = append(m.order, k)
	}
	m.byKey[k] = v
	for len(m.order) > m.size {
		delete(m.byKey, m.order[0])
		m.order = m.order[1:]
	}
}

// PutIfAbsent sets the value of k unless k is held, and reports whether it
// did.
func (m *Map[K, V]) PutIfAbsent(k K, v V) bool {
	m.mu.Lock()
	held := false
	if _, ok := m.byKey[k]; ok {
		held = true
	}
	m.mu.Unlock()
	if held {
		return false
	}
	m.Put(k, v)
	return true
}

// Forget drops k.
func (m *Map[K, V]) Forget(k K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byKey[k]; !ok {
		return
	}
	delete(m.byKey, k)
	for i, o := range m.order {
		if o == k {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
}

// Len is how many entries it holds.
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byKey)
}
