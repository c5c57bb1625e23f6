package partition

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// object is a workload read as unstructured, with the profile of its kind.
type object struct {
	p profile
	u *unstructured.Unstructured
}

// name is "<Kind> <namespace>/<name>", for messages.
func (o object) name() string {
	return fmt.Sprintf("%s %s/%s", o.p.gk.Kind, o.u.GetNamespace(), o.u.GetName())
}

// replicas is the number of pods the workload wants: spec.replicas
// (default 1), or for a DaemonSet the nodes it should run on.
func (o object) replicas() int32 {
	if o.p.nodes {
		n, _ := nestedInt(o.u.Object, "status", "desiredNumberScheduled")
		return int32(n) //nolint:gosec // a replica count
	}
	n, ok := nestedInt(o.u.Object, "spec", "replicas")
	if !ok {
		return 1
	}
	return int32(n) //nolint:gosec // a replica count
}

// partitionRaw returns the partition as stored (int64 or string).
func (o object) partitionRaw() (any, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(o.u.Object, o.p.partition...)
	if err != nil || !found || v == nil {
		return nil, false
	}
	return v, true
}

// partitionCount resolves the partition to the number of pods kept on the
// old revision (a percentage rounds up, as OpenKruise does); a missing
// partition keeps none.
func (o object) partitionCount(replicas int32) (int32, error) {
	raw, ok := o.partitionRaw()
	if !ok {
		return 0, nil
	}
	v, err := intOrString(raw)
	if err != nil {
		return 0, fmt.Errorf("%s of %s: %w", strings.Join(o.p.partition, "."), o.name(), err)
	}
	if v.Type == intstr.String && !o.p.percent {
		return 0, fmt.Errorf("%s of %s: %q is not a number", strings.Join(o.p.partition, "."), o.name(), v.StrVal)
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, int(replicas), true)
	if err != nil {
		return 0, fmt.Errorf("%s of %s: %w", strings.Join(o.p.partition, "."), o.name(), err)
	}
	return int32(max(n, 0)), nil //nolint:gosec // bounded by the API's int32 fields
}

// strategyType is spec.updateStrategy.type.
func (o object) strategyType() string {
	s, _, _ := unstructured.NestedString(o.u.Object, "spec", "updateStrategy", "type")
	return s
}

// selector is spec.selector.
func (o object) selector() (*metav1.LabelSelector, error) {
	raw, found, err := unstructured.NestedMap(o.u.Object, "spec", "selector")
	if err != nil || !found {
		return nil, fmt.Errorf("%s has no spec.selector", o.name())
	}
	sel := &metav1.LabelSelector{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, sel); err != nil {
		return nil, fmt.Errorf("spec.selector of %s: %w", o.name(), err)
	}
	return sel, nil
}

// maxUnavailable resolves the kind's maxUnavailable against replicas,
// rounding down and at least 1.
func (o object) maxUnavailable(replicas int32) int32 {
	v := o.p.defaultMaxUnavailable
	if raw, found, err := unstructured.NestedFieldNoCopy(o.u.Object, o.p.maxUnavailable...); err == nil && found && raw != nil {
		if parsed, err := intOrString(raw); err == nil {
			v = parsed
		}
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, int(replicas), false)
	if err != nil {
		return 1
	}
	return max(int32(n), 1) //nolint:gosec // bounded by replicas
}

// statusInt reads an integer status field; ok is false when it is absent.
func (o object) statusInt(path []string) (int32, bool) {
	if path == nil {
		return 0, false
	}
	n, ok := nestedInt(o.u.Object, path...)
	return int32(n), ok //nolint:gosec // a replica count
}

// revision reads a revision from the status, as a pod label value.
func (o object) revision(path []string) string {
	if path == nil {
		return ""
	}
	s, _, _ := unstructured.NestedString(o.u.Object, path...)
	return o.p.revisionValue(s)
}

// observedGeneration is status.observedGeneration.
func (o object) observedGeneration() int64 {
	n, _ := nestedInt(o.u.Object, "status", "observedGeneration")
	return n
}

// fresh reports whether the workload's controller has seen its latest spec.
func (o object) fresh() bool {
	return o.observedGeneration() >= o.u.GetGeneration()
}

// nestedInt reads an integer however the JSON decoder stored it.
func nestedInt(obj map[string]any, path ...string) (int64, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !found {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// intOrString reads an int-or-string field value.
func intOrString(v any) (intstr.IntOrString, error) {
	switch x := v.(type) {
	case string:
		return intstr.FromString(x), nil
	case int64, int, int32, float64, json.Number:
		n, _ := nestedInt(map[string]any{"v": x}, "v")
		return intstr.FromInt32(int32(n)), nil //nolint:gosec // partitions are int32 in every API
	}
	return intstr.IntOrString{}, fmt.Errorf("%v is neither a number nor a percentage", v)
}
