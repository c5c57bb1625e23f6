package spacing

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestWrites_spacesWritesOfOneObject(t *testing.T) {
	var p Writes
	web, api := types.NamespacedName{Namespace: "shop", Name: "web"}, types.NamespacedName{Namespace: "shop", Name: "api"}
	t0 := time.Unix(1000, 0)
	if d := p.Wait(web, t0); d != 0 {
		t.Fatalf("an object never written waits %s", d)
	}
	p.Wrote(web, t0)
	if d := p.Wait(web, t0.Add(300*time.Millisecond)); d != 700*time.Millisecond {
		t.Fatalf("300ms after a write: waits %s, want 700ms", d)
	}
	if d := p.Wait(api, t0.Add(300*time.Millisecond)); d != 0 {
		t.Fatalf("another object waits %s", d)
	}
	if d := p.Wait(web, t0.Add(Interval)); d != 0 {
		t.Fatalf("an interval after the write: waits %s", d)
	}
	p.Forget(web)
	if d := p.Wait(web, t0); d != 0 {
		t.Fatalf("a forgotten object waits %s", d)
	}
}
