package service

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestCanary(t *testing.T) {
	local := corev1.ServiceExternalTrafficPolicyLocal
	tests := []struct {
		name string
		spec corev1.ServiceSpec
		// check inspects the canary's spec.
		check func(t *testing.T, s corev1.ServiceSpec)
	}{
		{"ClusterIP: addresses allocated afresh", corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.7", ClusterIPs: []string{"10.0.0.7"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		}, func(t *testing.T, s corev1.ServiceSpec) {
			if s.ClusterIP != "" || s.ClusterIPs != nil || s.Ports[0].Port != 80 || s.Ports[0].TargetPort.IntVal != 8080 {
				t.Fatalf("spec %+v", s)
			}
		}},
		{"headless stays headless", corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 80}}},
			func(t *testing.T, s corev1.ServiceSpec) {
				if s.ClusterIP != corev1.ClusterIPNone {
					t.Fatalf("clusterIP %q", s.ClusterIP)
				}
			}},
		{"NodePort: node ports cleared", corev1.ServiceSpec{
			Type:  corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080}, {Name: "https", Port: 443, NodePort: 30443}},
		}, func(t *testing.T, s corev1.ServiceSpec) {
			if s.Type != corev1.ServiceTypeNodePort || s.Ports[0].NodePort != 0 || s.Ports[1].NodePort != 0 {
				t.Fatalf("spec %+v", s)
			}
		}},
		{"LoadBalancer: ports, health-check port and addresses cleared", corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: local, HealthCheckNodePort: 31000,
			LoadBalancerIP: "1.2.3.4", ExternalIPs: []string{"1.2.3.5"}, LoadBalancerSourceRanges: []string{"10.0.0.0/8"},
			Ports: []corev1.ServicePort{{Port: 443, NodePort: 30443}},
		}, func(t *testing.T, s corev1.ServiceSpec) {
			if s.Ports[0].NodePort != 0 || s.HealthCheckNodePort != 0 || s.LoadBalancerIP != "" || s.ExternalIPs != nil {
				t.Fatalf("spec %+v", s)
			}
			if s.ExternalTrafficPolicy != local || len(s.LoadBalancerSourceRanges) != 1 {
				t.Fatalf("policy not copied: %+v", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stable := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web",
					Labels:      map[string]string{"app": "web", "app.kubernetes.io/instance": "argo"},
					Annotations: map[string]string{"team": "a", "kubectl.kubernetes.io/last-applied-configuration": "{}", RecordAnnotation: "{}"}},
				Spec: tt.spec,
			}
			stable.Spec.Selector = map[string]string{"app": "web", "pod-template-hash": "v1"}
			c := Canary(stable, map[string]string{"app": "web"}, "pod-template-hash", "v2")
			if c.Name != "web-canary" || c.Namespace != "shop" {
				t.Fatalf("name %s/%s", c.Namespace, c.Name)
			}
			if !maps.Equal(c.Spec.Selector, map[string]string{"app": "web", "pod-template-hash": "v2"}) {
				t.Fatalf("selector %v", c.Spec.Selector)
			}
			if !maps.Equal(c.Labels, map[string]string{"app": "web"}) || !maps.Equal(c.Annotations, map[string]string{"team": "a"}) {
				t.Fatalf("labels %v annotations %v", c.Labels, c.Annotations)
			}
			tt.check(t, c.Spec)
			if len(stable.Spec.Ports) > 0 && stable.Spec.Type == corev1.ServiceTypeNodePort && stable.Spec.Ports[0].NodePort == 0 {
				t.Fatal("the stable Service's ports were changed")
			}
		})
	}
}

func TestNarrowed(t *testing.T) {
	sel := map[string]string{"app": "web"}
	got := Narrowed(sel, "pod-template-hash", "abc")
	if !maps.Equal(got, map[string]string{"app": "web", "pod-template-hash": "abc"}) || len(sel) != 1 {
		t.Fatalf("Narrowed = %v, input %v", got, sel)
	}
	if got := Narrowed(nil, "l", "v"); !maps.Equal(got, map[string]string{"l": "v"}) {
		t.Fatalf("Narrowed(nil) = %v", got)
	}
}
