package poll

import "testing"

func TestUntil_returnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	Until(t, "three calls", func() (bool, string) {
		calls++
		return calls == 3, "not yet"
	})
	if calls != 3 {
		t.Fatalf("condition called %d times, want 3", calls)
	}
}

func TestContext_endsWithTheTest(t *testing.T) {
	var ctx interface{ Err() error }
	t.Run("inner", func(t *testing.T) { ctx = Context(t) })
	if ctx.Err() == nil {
		t.Fatal("the context of a finished test is still live")
	}
}

func TestLogger_discardsWithoutTheVariable(t *testing.T) {
	t.Setenv("SLUICE_TEST_LOG", "")
	if Logger().GetSink() != nil {
		t.Fatal("a logger that writes without SLUICE_TEST_LOG")
	}
}
