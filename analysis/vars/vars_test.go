package vars

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestExpand(t *testing.T) {
	v := Values{"namespace": "shop", "rollout": "checkout", "canaryService": "checkout-canary", "step": "2"}
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr string
	}{
		{name: "no variables", in: `sum(rate(x[1m]))`, want: `sum(rate(x[1m]))`},
		{name: "variables", in: `rate(req{service="${canaryService}",namespace="${namespace}"}[1m]) # ${step}`,
			want: `rate(req{service="checkout-canary",namespace="shop"}[1m]) # 2`},
		{name: "literal", in: `echo $${HOME} ${rollout}`, want: `echo ${HOME} checkout`},
		{name: "a lone dollar", in: `cost $5`, want: `cost $5`},
		{name: "unknown variable", in: `${canary}`, wantErr: "unknown variable ${canary}; use one of canaryRevision, canaryService"},
		{name: "unterminated", in: `x ${rollout`, wantErr: "unterminated ${ at offset 2"},
		{name: "no value", in: `${stableService}`, wantErr: "variable ${stableService} has no value for this Rollout (it has no trafficRoutings)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Expand(tt.in, v)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Expand() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Expand() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	if err := Check(`${stableService} ${step} $${x}`); err != nil {
		t.Fatalf("Check() = %v", err)
	}
	if err := Check(`${nope}`); err == nil {
		t.Fatal("Check() accepted ${nope}")
	}
}

func TestOf(t *testing.T) {
	ro := &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout"},
		Spec: rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{
			TrafficRoutings: []rolloutsv1beta1.TrafficRoutingRef{{Service: "checkout"}},
		}}},
		Status: rolloutsv1beta1.RolloutStatus{CanaryStatus: &rolloutsv1beta1.CanaryStatus{
			CommonStatus:   rolloutsv1beta1.CommonStatus{StableRevision: "5d8f", PodTemplateHash: "7c9b"},
			CanaryRevision: "84f6",
		}},
	}
	got := Of(ro, 3)
	want := Values{"namespace": "shop", "rollout": "checkout", "step": "3", "canaryRevision": "7c9b",
		"stableRevision": "5d8f", "stableService": "checkout", "canaryService": "checkout-canary"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	ro.Spec.Strategy.Canary.DisableGenerateCanaryService = true
	if got := Of(ro, 3)["canaryService"]; got != "checkout" {
		t.Errorf("canaryService without a canary Service = %q, want the stable one", got)
	}
}

// FuzzExpand: expanding never panics, and a template that expands with
// every value given also passes the admission check.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"${rollout}", "$${x}", "a${", "${namespace}${step}", "${}", "$$$${rollout}"} {
		f.Add(s)
	}
	v := Values{"namespace": "shop", "rollout": "checkout", "step": "1", "canaryRevision": "a", "stableRevision": "b",
		"canaryService": "c", "stableService": "d"}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := Expand(s, v); err == nil && Check(s) != nil {
			t.Fatalf("Expand(%q) succeeded, Check failed", s)
		}
	})
}
