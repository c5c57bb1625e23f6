package scm

import "testing"

func TestStatusMemory_remembersPerCommitAndContext_andForgetsTheOldestFirst(t *testing.T) {
	m := NewStatusMemory(2)
	a := CommitStatus{Context: "sluice/prod/a", State: StatePending}
	b := CommitStatus{Context: "sluice/prod/b", State: StateSuccess}
	m.Put("sha1", a)
	m.Put("sha1", b)
	if got, ok := m.Get("sha1", "SLUICE/prod/A"); !ok || !got.Same(a) {
		t.Fatalf("Get a = %+v, %v; want a, contexts compared case-insensitively", got, ok)
	}
	if _, ok := m.Get("sha2", a.Context); ok {
		t.Fatal("a status of another commit was found")
	}
	// Updating an entry does not make room; a third one pushes out the oldest.
	m.Put("sha1", CommitStatus{Context: a.Context, State: StateSuccess})
	m.Put("sha2", a)
	if _, ok := m.Get("sha1", a.Context); ok {
		t.Fatal("the oldest entry was kept past the size")
	}
	if _, ok := m.Get("sha1", b.Context); !ok {
		t.Fatal("a newer entry was dropped")
	}
	m.Forget("sha1", b.Context)
	if _, ok := m.Get("sha1", b.Context); ok {
		t.Fatal("a forgotten entry was found")
	}
	m.Forget("sha1", "never-put")
}
