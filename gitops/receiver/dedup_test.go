package receiver

import (
	"fmt"
	"testing"
	"time"
)

func TestDeliveries_boundedAndForgetsAfterTTL(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	d := newDeliveries(3, time.Minute, func() time.Time { return now })
	steps := []struct {
		advance time.Duration
		id      string
		wantNew bool
		wantLen int
	}{
		{0, "a", true, 1},
		{0, "a", false, 1},
		{10 * time.Second, "b", true, 2},
		{10 * time.Second, "c", true, 3},
		{0, "b", false, 3},
		// Full: the oldest (a) makes room for d.
		{10 * time.Second, "d", true, 3},
		{0, "a", true, 3}, // a was forgotten, and now evicts b
		{0, "c", false, 3},
		// 60 s after c was added, c has expired: only d and a remain, then c comes back.
		{50 * time.Second, "c", true, 3},
		{0, "d", false, 3},
		// Much later every id has expired.
		{time.Hour, "e", true, 1},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if got := d.add(s.id); got != s.wantNew {
			t.Fatalf("step %d: add(%q) = %v, want %v", i, s.id, got, s.wantNew)
		}
		if got := d.len(); got != s.wantLen {
			t.Fatalf("step %d: %d ids remembered, want %d", i, got, s.wantLen)
		}
	}
}

func TestDeliveries_neverGrowsPastCapacity(t *testing.T) {
	d := newDeliveries(100, time.Hour, time.Now)
	for i := 0; i < 1000; i++ {
		if !d.add(fmt.Sprint(i)) {
			t.Fatalf("id %d reported as seen", i)
		}
	}
	if d.len() != 100 {
		t.Errorf("%d ids remembered, want 100", d.len())
	}
	if d.add("999") || !d.add("0") {
		t.Error("the newest id must be remembered and the oldest forgotten")
	}
}
