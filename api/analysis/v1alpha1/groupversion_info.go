// Package v1alpha1 contains the analysis.sluice.dev/v1alpha1 API: MetricGate,
// which binds Rollouts to metrics (Prometheus queries, HTTP endpoints, Jobs)
// measured during given steps of their releases or in the background, and
// reports for each (Rollout, revision, step) the measurements taken and the
// verdict a step waits for: Running, Passed, Failed or Inconclusive.
//
// +kubebuilder:object:generate=true
// +groupName=analysis.sluice.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the group and version of this API.
var GroupVersion = schema.GroupVersion{Group: "analysis.sluice.dev", Version: "v1alpha1"}

// AddToScheme registers the kinds of this API with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &MetricGate{}, &MetricGateList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
