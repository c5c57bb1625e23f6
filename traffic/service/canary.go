package service

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sluice-dev/sluice/traffic"
)

// Canary builds the canary Service of stable: a copy of its labels,
// annotations (without those of kubectl and GitOps tools) and spec, whose
// selector is the stable Service's own selector sel plus label=revision.
// Everything the API server allocates per Service is left out, so the
// copy never conflicts with the original: cluster IPs (a headless Service
// stays headless), external and load-balancer IPs, node ports and the
// health-check node port are allocated afresh.
func Canary(stable *corev1.Service, sel map[string]string, label, revision string) *corev1.Service {
	spec := stable.Spec.DeepCopy()
	out := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   stable.Namespace,
			Name:        traffic.CanaryServiceName(stable.Name),
			Labels:      traffic.CopyableLabels(stable.Labels),
			Annotations: traffic.CopyableAnnotations(stable.Annotations),
		},
		Spec: corev1.ServiceSpec{
			Type:                          spec.Type,
			Ports:                         spec.Ports,
			Selector:                      Narrowed(sel, label, revision),
			SessionAffinity:               spec.SessionAffinity,
			SessionAffinityConfig:         spec.SessionAffinityConfig,
			PublishNotReadyAddresses:      spec.PublishNotReadyAddresses,
			IPFamilies:                    spec.IPFamilies,
			IPFamilyPolicy:                spec.IPFamilyPolicy,
			InternalTrafficPolicy:         spec.InternalTrafficPolicy,
			ExternalTrafficPolicy:         spec.ExternalTrafficPolicy,
			AllocateLoadBalancerNodePorts: spec.AllocateLoadBalancerNodePorts,
			LoadBalancerClass:             spec.LoadBalancerClass,
			LoadBalancerSourceRanges:      spec.LoadBalancerSourceRanges,
			TrafficDistribution:           spec.TrafficDistribution,
		},
	}
	if spec.ClusterIP == corev1.ClusterIPNone {
		out.Spec.ClusterIP = corev1.ClusterIPNone
	}
	for i := range out.Spec.Ports {
		out.Spec.Ports[i].NodePort = 0
	}
	return out
}
