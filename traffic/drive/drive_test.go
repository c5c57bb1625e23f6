package drive

import (
	"context"
	"errors"
	"testing"
	"time"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
)

func TestGrace(t *testing.T) {
	tests := []struct {
		name  string
		refs  []rolloutsv1beta1.TrafficRoutingRef
		grace time.Duration
	}{
		{name: "no entry", grace: DefaultGrace},
		{name: "an entry without one", refs: []rolloutsv1beta1.TrafficRoutingRef{{}}, grace: DefaultGrace},
		{name: "the longest", refs: []rolloutsv1beta1.TrafficRoutingRef{{GracePeriodSeconds: 1}, {GracePeriodSeconds: 10}, {}}, grace: 10 * time.Second},
		{name: "shorter than the default", refs: []rolloutsv1beta1.TrafficRoutingRef{{GracePeriodSeconds: 1}}, grace: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Grace(tt.refs); got != tt.grace {
				t.Errorf("Grace() = %v, want %v", got, tt.grace)
			}
		})
	}
}

// provider reports ok and err, and counts its calls.
type provider struct {
	ok    bool
	err   error
	calls *int
	got   *traffic.Desired
}

func (p provider) EnsureRoutes(_ context.Context, d traffic.Desired) (bool, error) {
	*p.calls++
	*p.got = d
	return p.ok, p.err
}

func (p provider) Finalize(context.Context) (bool, error) {
	*p.calls++
	return p.ok, p.err
}

func TestEnsureAndFinalize(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		results []provider
		ok      bool
		err     error
		calls   int
	}{
		{name: "none", ok: true},
		{name: "all converged", results: []provider{{ok: true}, {ok: true}}, ok: true, calls: 2},
		{name: "one changed: every one is still driven", results: []provider{{ok: false}, {ok: true}}, ok: false, calls: 2},
		{name: "an error stops there", results: []provider{{err: boom}, {ok: true}}, err: boom, calls: 1},
	}
	for _, tt := range tests {
		for _, op := range []string{"Ensure", "Finalize"} {
			t.Run(op+" "+tt.name, func(t *testing.T) {
				calls := 0
				var got traffic.Desired
				ps := make([]traffic.Provider, 0, len(tt.results))
				for _, p := range tt.results {
					p.calls, p.got = &calls, &got
					ps = append(ps, p)
				}
				weight := int32(20)
				d := Desired(traffic.Target{Ref: rolloutsv1beta1.TrafficRoutingRef{Service: "web"}}, &weight, nil, nil)
				var ok bool
				var err error
				if op == "Ensure" {
					ok, err = Ensure(context.Background(), ps, d)
				} else {
					ok, err = Finalize(context.Background(), ps)
				}
				if ok != tt.ok || !errors.Is(err, tt.err) || calls != tt.calls {
					t.Fatalf("%s() = %v, %v after %d calls, want %v, %v after %d", op, ok, err, calls, tt.ok, tt.err, tt.calls)
				}
				if op == "Ensure" && calls > 0 && (got.StableService != "web" || got.CanaryService != "web-canary" || *got.Weight != 20) {
					t.Errorf("providers got %+v, want web to web-canary at 20", got)
				}
			})
		}
	}
}
