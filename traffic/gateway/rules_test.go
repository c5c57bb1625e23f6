package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
)

func ref(name string, weight *int32) gatewayv1.HTTPBackendRef {
	return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr.To[gatewayv1.PortNumber](80)},
		Weight:                 weight,
	}}
}

// brief renders rules compactly: per rule its matches and backend weights.
func brief(rules []gatewayv1.HTTPRouteRule) string {
	var out []string
	for _, r := range rules {
		var ms, bs []string
		for _, m := range r.Matches {
			s := *m.Path.Value
			for _, h := range m.Headers {
				s += " " + string(h.Name) + "=" + h.Value
			}
			for _, q := range m.QueryParams {
				s += " ?" + string(q.Name) + "=" + q.Value
			}
			ms = append(ms, s)
		}
		for _, b := range r.BackendRefs {
			bs = append(bs, string(b.Name)+":"+itoa(*b.Weight))
		}
		f := ""
		for _, fl := range r.Filters {
			if fl.RequestHeaderModifier != nil {
				b, _ := json.Marshal(fl.RequestHeaderModifier)
				f = " " + string(b)
			}
		}
		out = append(out, "["+strings.Join(ms, "|")+" -> "+strings.Join(bs, ",")+f+"]")
	}
	return strings.Join(out, " ")
}

func itoa(n int32) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestRules(t *testing.T) {
	plain := []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", nil)}}}
	other := gatewayv1.HTTPRouteRule{
		Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Value: ptr.To("/static")}}},
		BackendRefs: []gatewayv1.HTTPBackendRef{ref("assets", nil)},
	}
	shared := []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", ptr.To[int32](3)), ref("legacy", ptr.To[int32](1))}}}
	header := rolloutsv1beta1.HttpRouteMatch{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "user-agent", Value: "pc"}}}
	q := rolloutsv1beta1.HttpRouteMatch{QueryParams: []rolloutsv1beta1.HTTPQueryParamMatch{{Name: "beta", Value: "1"}}}
	path := rolloutsv1beta1.HttpRouteMatch{Path: &rolloutsv1beta1.HTTPPathMatch{Value: ptr.To("/v2")}}
	d := func(w *int32, m ...rolloutsv1beta1.HttpRouteMatch) traffic.Desired {
		return traffic.Desired{StableService: "web", CanaryService: "web-canary", Weight: w, Matches: m}
	}
	tests := []struct {
		name     string
		original []gatewayv1.HTTPRouteRule
		d        traffic.Desired
		want     string
		wantErr  string
	}{
		{"weight on the backendRefs", plain, d(ptr.To[int32](20)), "[/ -> web:80,web-canary:20]", ""},
		{"weight 0 keeps a zero-weight canary backend", plain, d(ptr.To[int32](0)), "[/ -> web:100,web-canary:0]", ""},
		{"rules without the stable Service untouched", append([]gatewayv1.HTTPRouteRule{other}, plain...), d(ptr.To[int32](50)),
			"[/static -> assets:1] [/ -> web:50,web-canary:50]", ""},
		{"other backends keep their share", shared, d(ptr.To[int32](20)), "[/ -> web:240,web-canary:60,legacy:100]", ""},
		{"a header match is a rule in front", plain, d(nil, header), "[/ user-agent=pc -> web-canary:1] [/ -> web:1]", ""},
		{"matches ORed, with a weight", plain, d(ptr.To[int32](10), header, q, path),
			"[/ user-agent=pc|/ ?beta=1|/v2 -> web-canary:1] [/ -> web:90,web-canary:10]", ""},
		{"no rule to the stable Service", []gatewayv1.HTTPRouteRule{other}, d(ptr.To[int32](10)), "", "no rule has a backendRef to Service web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Rules(tt.original, "shop", tt.d)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || brief(got) != tt.want {
				t.Fatalf("Rules = %s, %v\nwant     %s", brief(got), err, tt.want)
			}
			if brief(normalized(tt.original)) == brief(got) {
				t.Fatal("the original rules were changed in place")
			}
		})
	}
}

func TestRules_requestHeaderModifierOnCanaryOnly(t *testing.T) {
	original := []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", nil)}}}
	m := &rolloutsv1beta1.HTTPHeaderFilter{Set: []rolloutsv1beta1.HTTPHeader{{Name: "x-canary", Value: "true"}}, Remove: []string{"x-debug"}}
	got, err := Rules(original, "shop", traffic.Desired{StableService: "web", CanaryService: "web-canary", Weight: ptr.To[int32](30),
		Matches: []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "x-user", Value: "a"}}}}, RequestHeaderModifier: m})
	if err != nil {
		t.Fatal(err)
	}
	want := `[/ x-user=a -> web-canary:1 {"set":[{"name":"x-canary","value":"true"}],"remove":["x-debug"]}] [/ -> web:70,web-canary:30]`
	if brief(got) != want {
		t.Fatalf("rules %s\nwant  %s", brief(got), want)
	}
	// By weight, the modifier is a filter of the canary backendRef only.
	canary := got[1].BackendRefs[1]
	if len(got[1].Filters) != 0 || len(canary.Filters) != 1 || canary.Filters[0].RequestHeaderModifier.Set[0].Name != "x-canary" {
		t.Fatalf("weighted rule filters %+v, canary backend filters %+v", got[1].Filters, canary.Filters)
	}
	if len(got[1].BackendRefs[0].Filters) != 0 {
		t.Fatalf("stable backend filters %+v", got[1].BackendRefs[0].Filters)
	}
}

func TestRules_conflictingMatch(t *testing.T) {
	original := []gatewayv1.HTTPRouteRule{{
		Matches:     []gatewayv1.HTTPRouteMatch{{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "x-user", Value: "b"}}}},
		BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", nil)},
	}}
	_, err := Rules(original, "shop", traffic.Desired{StableService: "web", CanaryService: "web-canary",
		Matches: []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "x-user", Value: "a"}}}}})
	if err == nil || !strings.Contains(err.Error(), "matches[0]: header x-user") {
		t.Fatalf("error %v", err)
	}
}

func TestCheck(t *testing.T) {
	if err := Check(rolloutsv1beta1.TrafficRoutingStrategy{Matches: []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "canary-by-cookie", Value: "x"}}}}}); err == nil {
		t.Fatal("a cookie match accepted")
	}
	two := rolloutsv1beta1.HttpRouteMatch{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}}}
	if err := Check(rolloutsv1beta1.TrafficRoutingStrategy{Matches: []rolloutsv1beta1.HttpRouteMatch{two}}); err != nil {
		t.Fatalf("two headers rejected: %v", err)
	}
}

// A rule someone edited while it carried sluice's weights keeps the edit
// but loses what routes to the canary Service: its backendRef (whose
// weight goes back to the stable one) and a match rule of the canary
// alone.
func TestWithoutCanary(t *testing.T) {
	rules := []gatewayv1.HTTPRouteRule{
		{BackendRefs: []gatewayv1.HTTPBackendRef{ref("web-canary", ptr.To[int32](1))}},
		{BackendRefs: []gatewayv1.HTTPBackendRef{ref("web", ptr.To[int32](80)), ref("web-canary", ptr.To[int32](20))}},
		{BackendRefs: []gatewayv1.HTTPBackendRef{ref("api", nil)}},
	}
	got := withoutCanary(rules, "shop", "web", "web-canary")
	if len(got) != 2 || len(got[0].BackendRefs) != 1 || got[0].BackendRefs[0].Name != "web" || *got[0].BackendRefs[0].Weight != 100 || got[1].BackendRefs[0].Name != "api" {
		b, _ := json.Marshal(got)
		t.Fatalf("withoutCanary = %s", b)
	}
	if len(rules[1].BackendRefs) != 2 {
		t.Fatal("the input was changed")
	}
	if same := withoutCanary(rules, "shop", "web", "web"); len(same) != 3 {
		t.Fatal("rules were changed without a canary Service of its own")
	}
}
