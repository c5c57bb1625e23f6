package bounded

import "testing"

func TestMap_forgetsTheOldestPastItsSize(t *testing.T) {
	m := New[string, int](2)
	m.Put("a", 1)
	m.Put("b", 2)
	m.Put("a", 10) // replaced in place: "a" is still the oldest
	m.Put("c", 3)
	if _, ok := m.Get("a"); ok {
		t.Fatal(`"a" kept past the size`)
	}
	if v, ok := m.Get("b"); !ok || v != 2 {
		t.Fatalf(`"b" = %d, %v`, v, ok)
	}
	if v, ok := m.Get("c"); !ok || v != 3 || m.Len() != 2 {
		t.Fatalf(`"c" = %d, %v; len %d`, v, ok, m.Len())
	}
	m.Forget("b")
	m.Forget("missing")
	m.Put("d", 4)
	if m.Len() != 2 {
		t.Fatalf("len %d after forgetting one and adding one, want 2", m.Len())
	}
	if m.PutIfAbsent("d", 40) {
		t.Fatal(`PutIfAbsent replaced "d"`)
	}
	if v, _ := m.Get("d"); v != 4 {
		t.Fatalf(`"d" = %d`, v)
	}
	if !m.PutIfAbsent("e", 5) {
		t.Fatal(`PutIfAbsent did not add "e"`)
	}
	if _, ok := m.Get("c"); ok {
		t.Fatal(`"c" kept past the size`)
	}
}

func TestNew_holdsAtLeastOne(t *testing.T) {
	m := New[int, int](0)
	m.Put(1, 1)
	if v, ok := m.Get(1); !ok || v != 1 {
		t.Fatal("a Map of size 0 holds nothing")
	}
}
