package rollout

import (
	"strings"
	"testing"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// routed is a canary Rollout of 1 then 100% replicas whose first step has
// the matches given, through the routings given.
func routed(matches []rolloutsv1beta1.HttpRouteMatch, routings ...rolloutsv1beta1.TrafficRoutingRef) *rolloutsv1beta1.Rollout {
	r := ro("t", "1", "100%")
	r.Spec.Strategy.Canary.Steps[0].Matches = matches
	r.Spec.Strategy.Canary.TrafficRoutings = routings
	return r
}

func nginx(name string) rolloutsv1beta1.TrafficRoutingRef {
	return rolloutsv1beta1.TrafficRoutingRef{Service: "web", Ingress: &rolloutsv1beta1.IngressTrafficRouting{Name: name}}
}

func httpRoute(name string) rolloutsv1beta1.TrafficRoutingRef {
	return rolloutsv1beta1.TrafficRoutingRef{Service: "web", Gateway: &rolloutsv1beta1.GatewayTrafficRouting{HTTPRouteName: ptr(name)}}
}

func TestValidateTraffic(t *testing.T) {
	h := func(name, value string) rolloutsv1beta1.HTTPHeaderMatch {
		return rolloutsv1beta1.HTTPHeaderMatch{Name: name, Value: value}
	}
	oneHeader := []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{h("user-agent", "pc")}}}
	twoHeaders := []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{h("user-agent", "pc"), h("x-user", "a")}}}
	cookie := []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{h("canary-by-cookie", "beta")}}}
	query := []rolloutsv1beta1.HttpRouteMatch{{QueryParams: []rolloutsv1beta1.HTTPQueryParamMatch{{Name: "beta", Value: "1"}}}}
	longService := nginx("web")
	longService.Service = strings.Repeat("s", 60)
	mse := nginx("web")
	mse.Ingress.ClassType = "mse"
	running := routed(oneHeader, nginx("web"))
	running.Status.Phase = rolloutsv1beta1.RolloutPhaseProgressing
	byRef := func(ref string) *rolloutsv1beta1.Rollout {
		ro := routed(oneHeader)
		ro.Spec.Strategy.Canary.TrafficRoutingRef = ref
		return ro
	}
	runningByRef := byRef("shared")
	runningByRef.Status.Phase = rolloutsv1beta1.RolloutPhaseProgressing

	tests := []struct {
		name    string
		ro      *rolloutsv1beta1.Rollout
		old     *rolloutsv1beta1.Rollout
		wantErr string
	}{
		{name: "nginx, one header", ro: routed(oneHeader, nginx("web"))},
		{name: "nginx, two headers in one match", ro: routed(twoHeaders, nginx("web")),
			wantErr: "spec.strategy.canary.steps[0].matches: Invalid value: \"1 match(es)\": cannot be expressed by trafficRoutings[0]: ingress web (class nginx): matches[0]"},
		{name: "nginx, a query parameter", ro: routed(query, nginx("web")), wantErr: "spec.strategy.canary.steps[0].matches"},
		{name: "mse, a query parameter", ro: routed(query, mse)},
		{name: "HTTPRoute, two headers", ro: routed(twoHeaders, httpRoute("web"))},
		{name: "HTTPRoute, a cookie", ro: routed(cookie, httpRoute("web")), wantErr: "cannot be expressed by trafficRoutings[0]: HTTPRoute web"},
		{name: "an Ingress and an HTTPRoute, each checked", ro: routed(twoHeaders, httpRoute("web"), nginx("web")),
			wantErr: "cannot be expressed by trafficRoutings[1]"},
		{name: "the same Ingress twice", ro: routed(nil, nginx("web"), nginx("web")), wantErr: "spec.strategy.canary.trafficRoutings[1].ingress.name: Duplicate value"},
		{name: "the same HTTPRoute twice", ro: routed(nil, httpRoute("web"), httpRoute("web")), wantErr: "trafficRoutings[1].gateway.httpRouteName: Duplicate value"},
		{name: "two Ingresses", ro: routed(oneHeader, nginx("public"), nginx("internal"))},
		{name: "a canary Service name too long", ro: routed(nil, longService), wantErr: "spec.strategy.canary.trafficRoutings[0].service"},
		{name: "routings changed mid-release", ro: routed(oneHeader, nginx("other")), old: running,
			wantErr: "spec.strategy.canary.trafficRoutings: Forbidden"},
		{name: "steps changed mid-release, same routings", ro: routed(oneHeader, nginx("web")), old: running},
		{name: "trafficRoutingRef changed mid-release", ro: byRef("other"), old: runningByRef,
			wantErr: "spec.strategy.canary.trafficRoutingRef: Forbidden: cannot change while a release is in progress (\"shared\" -> \"other\")"},
		{name: "trafficRoutingRef kept mid-release", ro: byRef("shared"), old: runningByRef},
		{name: "trafficRoutingRef changed while idle", ro: byRef("other"), old: byRef("shared")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := validate(tt.ro, tt.old, nil).ToAggregate()
			switch {
			case tt.wantErr == "" && got != nil:
				t.Fatalf("unexpected error: %v", got)
			case tt.wantErr != "" && (got == nil || !strings.Contains(got.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", got, tt.wantErr)
			}
		})
	}
}
