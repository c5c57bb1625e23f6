package coverage

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func withRouting(ref rolloutsv1beta1.TrafficRoutingRef, st rolloutsv1beta1.TrafficRoutingStrategy) *rolloutsv1beta1.Rollout {
	one := intstr.FromInt32(1)
	return &rolloutsv1beta1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: rolloutsv1beta1.RolloutSpec{
			WorkloadRef: rolloutsv1beta1.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{
				Steps:           []rolloutsv1beta1.CanaryStep{{Replicas: &one, TrafficRoutingStrategy: st}},
				TrafficRoutings: []rolloutsv1beta1.TrafficRoutingRef{ref},
			}},
		},
	}
}

func TestAnalyze_traffic(t *testing.T) {
	nginx := rolloutsv1beta1.TrafficRoutingRef{Service: "web", Ingress: &rolloutsv1beta1.IngressTrafficRouting{Name: "web"}}
	traefik := rolloutsv1beta1.TrafficRoutingRef{Service: "web", Ingress: &rolloutsv1beta1.IngressTrafficRouting{Name: "web", ClassType: "traefik"}}
	route := rolloutsv1beta1.TrafficRoutingRef{Service: "web", Gateway: &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: ptr("web")}}
	twenty := ptr("20%")
	modifier := &rolloutsv1beta1.HTTPHeaderFilter{Set: []rolloutsv1beta1.HTTPHeader{{Name: "x", Value: "1"}}}
	twoHeaders := []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}}}}
	withRef := withRouting(route, rolloutsv1beta1.TrafficRoutingStrategy{Traffic: twenty})
	withRef.Spec.Strategy.Canary.TrafficRoutingRef = "shared"

	tests := []struct {
		name                  string
		ro                    *rolloutsv1beta1.Rollout
		blocking, ignored     string
		noBlocking, noIgnored bool
	}{
		{name: "nginx weight: supported", ro: withRouting(nginx, rolloutsv1beta1.TrafficRoutingStrategy{Traffic: twenty}), noBlocking: true, noIgnored: true},
		{name: "HTTPRoute with a modifier: supported", ro: withRouting(route, rolloutsv1beta1.TrafficRoutingStrategy{Traffic: twenty, RequestHeaderModifier: modifier}), noBlocking: true, noIgnored: true},
		{name: "nginx with a modifier: named as without effect", ro: withRouting(nginx, rolloutsv1beta1.TrafficRoutingStrategy{Traffic: twenty, RequestHeaderModifier: modifier}),
			noBlocking: true, ignored: "spec.strategy.canary.steps[0] through spec.strategy.canary.trafficRoutings[0]: ingress web (class nginx): requestHeaderModifier"},
		{name: "nginx with two headers: blocks", ro: withRouting(nginx, rolloutsv1beta1.TrafficRoutingStrategy{Matches: twoHeaders}),
			blocking: "spec.strategy.canary.steps[0] cannot be expressed by spec.strategy.canary.trafficRoutings[0]: ingress web (class nginx)"},
		{name: "a class sluice cannot drive: blocks, naming the classes it drives", ro: withRouting(traefik, rolloutsv1beta1.TrafficRoutingStrategy{Traffic: twenty}),
			noIgnored: true, blocking: `spec.strategy.canary.trafficRoutings[0].ingress.classType "traefik": not an Ingress class sluice drives: use one of aliyun-alb, higress, mse, nginx`},
		{name: "trafficRoutingRef: supported", ro: withRef, noBlocking: true, noIgnored: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocking, ignored := Analyze(tt.ro)
			b, i := strings.Join(blocking, "; "), strings.Join(ignored, "; ")
			switch {
			case tt.noBlocking && b != "", tt.blocking != "" && !strings.Contains(b, tt.blocking):
				t.Fatalf("blocking %q, want %q", b, tt.blocking)
			case tt.noIgnored && i != "", tt.ignored != "" && !strings.Contains(i, tt.ignored):
				t.Fatalf("ignored %q, want %q", i, tt.ignored)
			}
			if !Active(tt.ro) {
				t.Fatalf("Active = false with blocking %q: a blocked Rollout keeps holding its workload", b)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestFit(t *testing.T) {
	steps := func(replicas ...string) *rolloutsv1beta1.Rollout {
		ro := &rolloutsv1beta1.Rollout{Spec: rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{}}}}
		for _, r := range replicas {
			v := intstr.Parse(r)
			ro.Spec.Strategy.Canary.Steps = append(ro.Spec.Strategy.Canary.Steps, rolloutsv1beta1.CanaryStep{Replicas: &v})
		}
		return ro
	}
	tests := []struct {
		name     string
		ro       *rolloutsv1beta1.Rollout
		replicas int32
		want     string
	}{
		{name: "fits 10 replicas", ro: steps("3", "50%", "100%"), replicas: 10},
		{name: "does not fit 4 replicas", ro: steps("3", "50%", "100%"), replicas: 4,
			want: "spec.strategy.canary.steps[1].replicas 50% is 2 of the workload's 4 replicas, fewer than the 3 of steps[0].replicas 3"},
		{name: "compared with the largest step before", ro: steps("3", "25%", "50%"), replicas: 4,
			want: "spec.strategy.canary.steps[2].replicas 50% is 2 of the workload's 4 replicas, fewer than the 3 of steps[0].replicas 3"},
		{name: "equal steps fit", ro: steps("2", "50%"), replicas: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(Fit(tt.ro, tt.replicas), "; ")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Fatalf("Fit = %q, want %q", got, tt.want)
			}
		})
	}
}
