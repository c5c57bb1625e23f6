package lua

import (
	"context"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
)

var (
	virtualService  = schema.GroupKind{Group: "networking.istio.io", Kind: "VirtualService"}
	destinationRule = schema.GroupKind{Group: "networking.istio.io", Kind: "DestinationRule"}
)

// specOf parses a spec written in YAML.
func specOf(t *testing.T, y string) map[string]any {
	t.Helper()
	out := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &out); err != nil {
		t.Fatalf("parsing %s: %v", y, err)
	}
	return out
}

func headerMatch(name, value string, typ rolloutsv1beta1.MatchType) rolloutsv1beta1.HTTPHeaderMatch {
	return rolloutsv1beta1.HTTPHeaderMatch{Name: name, Value: value, Type: &typ}
}

const reviewsVS = `
hosts: [reviews]
http:
- route:
  - destination: {host: reviews, port: {number: 80}}
`

func TestBuiltinScripts(t *testing.T) {
	regex := rolloutsv1beta1.MatchRegularExpression
	tests := []struct {
		name    string
		kind    schema.GroupKind
		spec    string
		desired traffic.Desired
		want    string
	}{{
		name:    "VirtualService: a weight splits the single stable destination",
		kind:    virtualService,
		spec:    reviewsVS,
		desired: traffic.Desired{StableService: "reviews", CanaryService: "reviews-canary", Weight: ptr.To[int32](20)},
		want: `
hosts: [reviews]
http:
- route:
  - destination: {host: reviews, port: {number: 80}}
    weight: 80
  - destination: {host: reviews-canary, port: {number: 80}}
    weight: 20
`,
	}, {
		name: "VirtualService: a weight takes its share of the stable destinations only, keeping the namespace suffix",
		kind: virtualService,
		spec: `
hosts: [shop]
http:
- match: [{uri: {prefix: /api}}]
  route:
  - destination: {host: reviews.default.svc.cluster.local}
    weight: 60
  - destination: {host: ratings}
    weight: 40
- route:
  - destination: {host: ratings}
tcp:
- route:
  - destination: {host: reviews, port: {number: 9000}}
`,
		desired: traffic.Desired{StableService: "reviews", CanaryService: "reviews-canary", Weight: ptr.To[int32](50)},
		want: `
hosts: [shop]
http:
- match: [{uri: {prefix: /api}}]
  route:
  - destination: {host: reviews.default.svc.cluster.local}
    weight: 30
  - destination: {host: ratings}
    weight: 40
  - destination: {host: reviews-canary.default.svc.cluster.local}
    weight: 30
- route:
  - destination: {host: ratings}
tcp:
- route:
  - destination: {host: reviews, port: {number: 9000}}
    weight: 50
  - destination: {host: reviews-canary, port: {number: 9000}}
    weight: 50
`,
	}, {
		name:    "VirtualService: 100% leaves the stable destination at 0",
		kind:    virtualService,
		spec:    reviewsVS,
		desired: traffic.Desired{StableService: "reviews", CanaryService: "reviews-canary", Weight: ptr.To[int32](100)},
		want: `
hosts: [reviews]
http:
- route:
  - destination: {host: reviews, port: {number: 80}}
    weight: 0
  - destination: {host: reviews-canary, port: {number: 80}}
    weight: 100
`,
	}, {
		name: "VirtualService: matches become routes in front, with the header modifier",
		kind: virtualService,
		spec: reviewsVS,
		desired: traffic.Desired{StableService: "reviews", CanaryService: "reviews-canary",
			Matches: []rolloutsv1beta1.HttpRouteMatch{
				{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "X-User", Value: "tester"}, headerMatch("x-env", "^beta", regex)}},
				{Path: &rolloutsv1beta1.HTTPPathMatch{Value: ptr.To("/beta")},
					QueryParams: []rolloutsv1beta1.HTTPQueryParamMatch{{Name: "canary", Value: "yes"}}},
			},
			RequestHeaderModifier: &rolloutsv1beta1.HTTPHeaderFilter{
				Set: []rolloutsv1beta1.HTTPHeader{{Name: "x-canary", Value: "1"}}, Remove: []string{"x-debug"}},
		},
		want: `
hosts: [reviews]
http:
- match: [{headers: {x-user: {exact: tester}, x-env: {regex: ^beta}}}]
  route: [{destination: {host: reviews-canary, port: {number: 80}}}]
  headers: {request: {set: {x-canary: "1"}, remove: [x-debug]}}
- match: [{uri: {prefix: /beta}, queryParams: {canary: {exact: "yes"}}}]
  route: [{destination: {host: reviews-canary, port: {number: 80}}}]
  headers: {request: {set: {x-canary: "1"}, remove: [x-debug]}}
- route:
  - destination: {host: reviews, port: {number: 80}}
`,
	}, {
		name: "VirtualService: without a canary Service the canary is the subset canary",
		kind: virtualService,
		spec: reviewsVS,
		desired: traffic.Desired{StableService: "reviews", CanaryService: "reviews", Weight: ptr.To[int32](10),
			Matches: []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "user", Value: "a"}}}}},
		want: `
hosts: [reviews]
http:
- match: [{headers: {user: {exact: a}}}]
  route: [{destination: {host: reviews, subset: canary, port: {number: 80}}}]
- route:
  - destination: {host: reviews, port: {number: 80}}
    weight: 90
  - destination: {host: reviews, subset: canary, port: {number: 80}}
    weight: 10
`,
	}, {
		name:    "VirtualService: no weight and no matches change nothing",
		kind:    virtualService,
		spec:    reviewsVS,
		desired: traffic.Desired{StableService: "reviews", CanaryService: "reviews-canary"},
		want:    reviewsVS,
	}, {
		name:    "DestinationRule: the canary subset is added",
		kind:    destinationRule,
		spec:    "host: reviews\nsubsets: [{name: v1, labels: {version: v1}}]",
		desired: traffic.Desired{StableService: "reviews", CanaryService: "reviews", Weight: ptr.To[int32](10)},
		want:    "host: reviews\nsubsets: [{name: v1, labels: {version: v1}}, {name: canary, labels: {istio.service.tag: gray}}]",
	}, {
		name:    "DestinationRule: an existing canary subset is replaced",
		kind:    destinationRule,
		spec:    "host: reviews\nsubsets: [{name: canary, labels: {old: x}}]",
		desired: traffic.Desired{StableService: "reviews", CanaryService: "reviews"},
		want:    "host: reviews\nsubsets: [{name: canary, labels: {istio.service.tag: gray}}]",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script, ok := Builtin(tt.kind)
			if !ok {
				t.Fatalf("no built-in script for %s", tt.kind)
			}
			original := Data{Spec: specOf(t, tt.spec), Labels: map[string]string{"app": "reviews"}}
			got, err := Evaluate(context.Background(), script, original, tt.desired, DefaultLimits())
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			same, err := sameJSON(got.Spec, specOf(t, tt.want))
			if err != nil {
				t.Fatal(err)
			}
			if !same {
				b, _ := json.MarshalIndent(got.Spec, "", "  ")
				t.Errorf("spec:\n%s\nwant:\n%s", b, tt.want)
			}
			if got.Labels["app"] != "reviews" {
				t.Errorf("labels = %v, want those of the original", got.Labels)
			}
			// The script is a pure function of the original: the input is
			// left as it was.
			if same, _ := sameJSON(original.Spec, specOf(t, tt.spec)); !same {
				t.Errorf("the original spec was changed")
			}
		})
	}
}

func TestBuiltin_unknownKind(t *testing.T) {
	if _, ok := Builtin(schema.GroupKind{Group: "example.com", Kind: "Route"}); ok {
		t.Fatal("a built-in script for example.com/Route")
	}
	if _, ok := Builtin(schema.GroupKind{Group: "networking.istio.io", Kind: "../networking.istio.io/VirtualService"}); ok {
		t.Fatal("a kind reaches outside its group's directory")
	}
}
