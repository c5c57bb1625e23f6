package ingress

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/traffic"
)

func header(name, value string) rolloutsv1beta1.HttpRouteMatch {
	return rolloutsv1beta1.HttpRouteMatch{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: name, Value: value}}}
}

func regex(name, value string) rolloutsv1beta1.HttpRouteMatch {
	return rolloutsv1beta1.HttpRouteMatch{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: name, Value: value, Type: ptr.To(rolloutsv1beta1.MatchRegularExpression)}}}
}

func query(name, value string) rolloutsv1beta1.HttpRouteMatch {
	return rolloutsv1beta1.HttpRouteMatch{QueryParams: []rolloutsv1beta1.HTTPQueryParamMatch{{Name: name, Value: value}}}
}

func TestAnnotations(t *testing.T) {
	const n = "nginx.ingress.kubernetes.io/"
	modifier := &rolloutsv1beta1.HTTPHeaderFilter{
		Set:    []rolloutsv1beta1.HTTPHeader{{Name: "x-canary", Value: "true"}},
		Add:    []rolloutsv1beta1.HTTPHeader{{Name: "x-a", Value: "1"}, {Name: "x-b", Value: "2"}},
		Remove: []string{"x-old", "x-older"},
	}
	tests := []struct {
		name, class string
		d           traffic.Desired
		want        map[string]string
		wantErr     string
	}{
		{"nginx weight", "nginx", traffic.Desired{Weight: ptr.To[int32](20)},
			map[string]string{n + "canary": "true", n + "canary-weight": "20"}, ""},
		{"default class is nginx", "", traffic.Desired{Weight: ptr.To[int32](0)},
			map[string]string{n + "canary": "true", n + "canary-weight": "0"}, ""},
		{"nginx header value", "nginx", traffic.Desired{Matches: []rolloutsv1beta1.HttpRouteMatch{header("user-agent", "pc")}},
			map[string]string{n + "canary": "true", n + "canary-by-header": "user-agent", n + "canary-by-header-value": "pc"}, ""},
		{"nginx header pattern and cookie, weight 0 left out", "nginx", traffic.Desired{Weight: ptr.To[int32](0),
			Matches: []rolloutsv1beta1.HttpRouteMatch{regex("user-agent", "Android.*"), header("canary-by-cookie", "beta")}},
			map[string]string{n + "canary": "true", n + "canary-by-header": "user-agent", n + "canary-by-header-pattern": "Android.*", n + "canary-by-cookie": "beta"}, ""},
		{"nginx header and weight together", "nginx", traffic.Desired{Weight: ptr.To[int32](10), Matches: []rolloutsv1beta1.HttpRouteMatch{header("x-user", "a")}},
			map[string]string{n + "canary": "true", n + "canary-weight": "10", n + "canary-by-header": "x-user", n + "canary-by-header-value": "a"}, ""},
		{"nginx ignores a header modifier", "nginx", traffic.Desired{Weight: ptr.To[int32](5), RequestHeaderModifier: modifier},
			map[string]string{n + "canary": "true", n + "canary-weight": "5"}, ""},
		{"nginx two headers in one match", "nginx", traffic.Desired{Matches: []rolloutsv1beta1.HttpRouteMatch{{Headers: []rolloutsv1beta1.HTTPHeaderMatch{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}}}}},
			nil, "matches[0]: a canary Ingress matches one header"},
		{"nginx two header matches", "nginx", traffic.Desired{Matches: []rolloutsv1beta1.HttpRouteMatch{header("a", "1"), header("b", "2")}},
			nil, "matches[1]: only one header match"},
		{"nginx query parameter", "nginx", traffic.Desired{Matches: []rolloutsv1beta1.HttpRouteMatch{query("canary", "yes")}},
			nil, "cannot match query parameters"},
		{"nginx path", "nginx", traffic.Desired{Matches: []rolloutsv1beta1.HttpRouteMatch{{Path: &rolloutsv1beta1.HTTPPathMatch{Value: ptr.To("/beta")}}}},
			nil, "cannot match the path"},
		{"higress header modifier", "higress", traffic.Desired{Matches: []rolloutsv1beta1.HttpRouteMatch{header("user-agent", "pc")}, RequestHeaderModifier: modifier},
			map[string]string{n + "canary": "true", n + "canary-by-header": "user-agent", n + "canary-by-header-value": "pc",
				"higress.io/request-header-control-update": "x-canary true", "higress.io/request-header-control-add": "x-a 1\nx-b 2",
				"higress.io/request-header-control-remove": "x-old,x-older"}, ""},
		{"mse query parameter", "mse", traffic.Desired{Matches: []rolloutsv1beta1.HttpRouteMatch{query("canary", "yes")}},
			map[string]string{n + "canary": "true", "mse.ingress.kubernetes.io/canary-by-query": "canary", "mse.ingress.kubernetes.io/canary-by-query-value": "yes"}, ""},
		{"mse header by regular expression", "mse", traffic.Desired{Matches: []rolloutsv1beta1.HttpRouteMatch{regex("user-agent", "Android.*")}},
			nil, "exactly only"},
		{"aliyun-alb weight", "aliyun-alb", traffic.Desired{Weight: ptr.To[int32](30)},
			map[string]string{"alb.ingress.kubernetes.io/canary": "true", "alb.ingress.kubernetes.io/canary-weight": "30", "alb.ingress.kubernetes.io/order": "1"}, ""},
		{"aliyun-alb cookie", "aliyun-alb", traffic.Desired{Matches: []rolloutsv1beta1.HttpRouteMatch{header("canary-by-cookie", "beta")}},
			map[string]string{"alb.ingress.kubernetes.io/canary": "true", "alb.ingress.kubernetes.io/canary-by-cookie": "beta", "alb.ingress.kubernetes.io/order": "1"}, ""},
		{"aliyun-alb header with a weight", "aliyun-alb", traffic.Desired{Weight: ptr.To[int32](30), Matches: []rolloutsv1beta1.HttpRouteMatch{header("a", "1")}},
			nil, "cannot combine"},
		{"aliyun-alb two matches", "aliyun-alb", traffic.Desired{Matches: []rolloutsv1beta1.HttpRouteMatch{header("a", "1"), header("canary-by-cookie", "beta")}},
			nil, "not several"},
		{"unknown class", "traefik", traffic.Desired{Weight: ptr.To[int32](30)}, nil, "not built in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Annotations(tt.class, tt.d)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q (annotations %v)", err, tt.wantErr, got)
				}
				// Admission rejects the same steps.
				if cerr := Check(tt.class, rolloutsv1beta1.TrafficRoutingStrategy{Traffic: weightOf(tt.d), Matches: tt.d.Matches}); cerr == nil {
					t.Fatalf("Check accepts what Annotations rejects")
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) {
				t.Fatalf("Annotations = %v, %v\nwant %v", got, err, tt.want)
			}
			if cerr := Check(tt.class, rolloutsv1beta1.TrafficRoutingStrategy{Traffic: weightOf(tt.d), Matches: tt.d.Matches}); cerr != nil {
				t.Fatalf("Check rejects what Annotations expresses: %v", cerr)
			}
		})
	}
}

func weightOf(d traffic.Desired) *string {
	if d.Weight == nil {
		return nil
	}
	return ptr.To(fmt.Sprintf("%d%%", *d.Weight))
}

func TestIgnores(t *testing.T) {
	m := &rolloutsv1beta1.HTTPHeaderFilter{Set: []rolloutsv1beta1.HTTPHeader{{Name: "x", Value: "1"}}}
	for class, want := range map[string]bool{"nginx": true, "aliyun-alb": true, "higress": false, "mse": false} {
		if got := Ignores(class, rolloutsv1beta1.TrafficRoutingStrategy{RequestHeaderModifier: m}) != ""; got != want {
			t.Errorf("Ignores(%s) = %v, want %v", class, got, want)
		}
	}
	if Ignores("nginx", rolloutsv1beta1.TrafficRoutingStrategy{}) != "" {
		t.Error("nginx ignores a step without a modifier")
	}
}

func TestCanary_copiesOnlyThePathsToTheStableService(t *testing.T) {
	prefix := networkingv1.PathTypePrefix
	backend := func(svc string) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}}}
	}
	stable := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web",
			Labels:      map[string]string{"app": "web", "app.kubernetes.io/instance": "argo-app"},
			Annotations: map[string]string{"kubernetes.io/ingress.class": "nginx", "nginx.ingress.kubernetes.io/rewrite-target": "/"}},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{"shop.example"}, SecretName: "tls"}},
			Rules: []networkingv1.IngressRule{
				{Host: "shop.example", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					{Path: "/", PathType: &prefix, Backend: backend("web")},
					{Path: "/static", PathType: &prefix, Backend: backend("assets")},
				}}}},
				{Host: "other.example", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					{Path: "/", PathType: &prefix, Backend: backend("assets")},
				}}}},
			},
		},
	}
	c, err := Canary(stable, "web", "web-canary", map[string]string{"nginx.ingress.kubernetes.io/canary": "true"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "web-canary" || len(c.Spec.Rules) != 1 || c.Spec.Rules[0].Host != "shop.example" || len(c.Spec.Rules[0].HTTP.Paths) != 1 ||
		c.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name != "web-canary" || c.Spec.Rules[0].HTTP.Paths[0].Path != "/" {
		t.Fatalf("canary rules %+v", c.Spec.Rules)
	}
	if *c.Spec.IngressClassName != "nginx" || len(c.Spec.TLS) != 1 {
		t.Fatalf("class %v, TLS %v", c.Spec.IngressClassName, c.Spec.TLS)
	}
	wantAnn := map[string]string{"nginx.ingress.kubernetes.io/canary": "true", "kubernetes.io/ingress.class": "nginx"}
	if !maps.Equal(c.Annotations, wantAnn) || !maps.Equal(c.Labels, map[string]string{"app": "web"}) {
		t.Fatalf("annotations %v, labels %v", c.Annotations, c.Labels)
	}
	if stable.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name != "web" {
		t.Fatal("the stable Ingress was changed")
	}
	if _, err := Canary(stable, "nothing", "nothing-canary", nil); err == nil {
		t.Fatal("no error for an Ingress without a path to the Service")
	}
}
