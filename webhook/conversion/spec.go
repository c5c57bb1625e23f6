package conversion

import (
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// specToV1beta1 converts a v1alpha1 spec; annotations are the Rollout's, for
// the rolling style and the shared traffic routing. in is not shared with
// the result's callers afterwards (it is a deep copy).
func specToV1beta1(in *rolloutsv1alpha1.RolloutSpec, annotations map[string]string) rolloutsv1beta1.RolloutSpec {
	out := rolloutsv1beta1.RolloutSpec{
		Disabled: in.Disabled,
		Strategy: rolloutsv1beta1.RolloutStrategy{Paused: in.Strategy.Paused},
	}
	if r := in.ObjectRef.WorkloadRef; r != nil {
		out.WorkloadRef = rolloutsv1beta1.ObjectRef{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name}
	}
	c := in.Strategy.Canary
	if c == nil {
		return out
	}
	oc := &rolloutsv1beta1.CanaryStrategy{
		FailureThreshold:             c.FailureThreshold,
		PatchPodTemplateMetadata:     c.PatchPodTemplateMetadata,
		EnableExtraWorkloadForCanary: extraWorkload(annotations[rolloutsv1beta1.RollingStyleAnnotation], out.WorkloadRef),
		TrafficRoutingRef:            annotations[rolloutsv1beta1.TrafficRoutingAnnotation],
	}
	for _, st := range c.Steps {
		oc.Steps = append(oc.Steps, stepToV1beta1(st))
	}
	for _, r := range c.TrafficRoutings {
		oc.TrafficRoutings = append(oc.TrafficRoutings, r.V1beta1())
	}
	out.Strategy.Canary = oc
	return out
}

func stepToV1beta1(in rolloutsv1alpha1.CanaryStep) rolloutsv1beta1.CanaryStep {
	out := rolloutsv1beta1.CanaryStep{
		TrafficRoutingStrategy: rolloutsv1beta1.TrafficRoutingStrategy{RequestHeaderModifier: in.RequestHeaderModifier},
		Replicas:               in.Replicas,
		Pause:                  in.Pause,
	}
	if in.Weight != nil {
		traffic := trafficOf(*in.Weight)
		out.Traffic = &traffic
		if out.Replicas == nil {
			r := intstr.FromString(traffic)
			out.Replicas = &r
		}
	}
	for _, m := range in.Matches {
		out.Matches = append(out.Matches, rolloutsv1beta1.HttpRouteMatch{Headers: m.Headers})
	}
	return out
}

// specToV1alpha1 converts a v1beta1 spec, recording in kept what v1alpha1
// cannot say. in is a deep copy the result may share.
func specToV1alpha1(in *rolloutsv1beta1.RolloutSpec, kept *v1beta1Fields) rolloutsv1alpha1.RolloutSpec {
	r := in.WorkloadRef
	out := rolloutsv1alpha1.RolloutSpec{
		ObjectRef: rolloutsv1alpha1.ObjectRef{WorkloadRef: &rolloutsv1alpha1.WorkloadRef{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name}},
		Disabled:  in.Disabled,
		Strategy:  rolloutsv1alpha1.RolloutStrategy{Paused: in.Strategy.Paused},
	}
	kept.BlueGreen = in.Strategy.BlueGreen
	c := in.Strategy.Canary
	if c == nil {
		return out
	}
	kept.DisableGenerateCanaryService = c.DisableGenerateCanaryService
	oc := &rolloutsv1alpha1.CanaryStrategy{FailureThreshold: c.FailureThreshold, PatchPodTemplateMetadata: c.PatchPodTemplateMetadata}
	for i, st := range c.Steps {
		a, k := stepToV1alpha1(st)
		oc.Steps = append(oc.Steps, a)
		if k != nil {
			k.Index = i
			kept.Steps = append(kept.Steps, *k)
		}
	}
	for _, r := range c.TrafficRoutings {
		oc.TrafficRoutings = append(oc.TrafficRoutings, routingToV1alpha1(r))
	}
	out.Strategy.Canary = oc
	return out
}

// stepToV1alpha1 converts a step; the second result, when not nil, is what
// v1alpha1 cannot say about it.
func stepToV1alpha1(in rolloutsv1beta1.CanaryStep) (rolloutsv1alpha1.CanaryStep, *keptStep) {
	out := rolloutsv1alpha1.CanaryStep{
		TrafficRoutingStrategy: rolloutsv1alpha1.TrafficRoutingStrategy{RequestHeaderModifier: in.RequestHeaderModifier},
		Replicas:               in.Replicas,
		Pause:                  in.Pause,
	}
	var k keptStep
	if in.Traffic != nil {
		if w, ok := weightOf(*in.Traffic); ok {
			out.Weight = &w
		} else {
			k.Traffic = in.Traffic
		}
	}
	// Without replicas, v1alpha1 would release weight% of the pods.
	k.NoReplicas = in.Replicas == nil && out.Weight != nil
	for j, m := range in.Matches {
		out.Matches = append(out.Matches, rolloutsv1alpha1.HttpRouteMatch{Headers: m.Headers})
		if m.Path != nil || len(m.QueryParams) > 0 {
			k.Matches = append(k.Matches, keptMatch{Index: j, Match: m})
		}
	}
	if k.Traffic == nil && !k.NoReplicas && len(k.Matches) == 0 {
		return out, nil
	}
	return out, &k
}

func routingToV1alpha1(in rolloutsv1beta1.TrafficRoutingRef) rolloutsv1alpha1.TrafficRoutingRef {
	out := rolloutsv1alpha1.TrafficRoutingRef{
		Service: in.Service, GracePeriodSeconds: in.GracePeriodSeconds, Ingress: in.Ingress, Gateway: in.Gateway,
	}
	for _, r := range in.CustomNetworkRefs {
		out.CustomNetworkRefs = append(out.CustomNetworkRefs, rolloutsv1alpha1.CustomNetworkRef{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name})
	}
	return out
}

// extraWorkload is enableExtraWorkloadForCanary for a rolling-style
// annotation value: "canary" and "partition" (in any case) say it; any
// other value, or none, means OpenKruise's default, the canary style for an
// apps Deployment and in place for every other kind.
func extraWorkload(style string, ref rolloutsv1beta1.ObjectRef) bool {
	switch strings.ToLower(style) {
	case rolloutsv1alpha1.RollingStyleCanary:
		return true
	case rolloutsv1alpha1.RollingStylePartition:
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == "apps" && ref.Kind == "Deployment"
}

// rollingStyle is the rolling-style annotation value for
// enableExtraWorkloadForCanary.
func rollingStyle(extra bool) string {
	if extra {
		return rolloutsv1alpha1.RollingStyleCanary
	}
	return rolloutsv1alpha1.RollingStylePartition
}

// trafficOf is the v1beta1 traffic of a v1alpha1 weight.
func trafficOf(weight int32) string {
	return strconv.FormatInt(int64(weight), 10) + "%"
}

// weightOf is the v1alpha1 weight of a v1beta1 traffic, when it is a whole
// percentage written the way trafficOf writes it.
func weightOf(traffic string) (int32, bool) {
	w, ok := rolloutsv1beta1.Percent(traffic)
	if !ok || w < math.MinInt32 || w > math.MaxInt32 {
		return 0, false
	}
	return int32(w), true
}
