package conversion

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// v1beta1Fields is what a stored v1beta1 Rollout says that its v1alpha1 form
// cannot; it rides on the v1alpha1 object in V1beta1FieldsAnnotation.
type v1beta1Fields struct {
	// BlueGreen is the blue-green strategy; v1alpha1 has none.
	BlueGreen *rolloutsv1beta1.BlueGreenStrategy `json:"blueGreen,omitempty"`
	// DisableGenerateCanaryService is the canary strategy's field.
	DisableGenerateCanaryService bool `json:"disableGenerateCanaryService,omitempty"`
	// Steps are the parts of canary steps v1alpha1 cannot say.
	Steps []keptStep `json:"steps,omitempty"`
	// Annotations are the stored values of the rolling-style and
	// trafficrouting annotations that the conversion rewrote to agree with
	// the spec, by annotation.
	Annotations map[string]rewrite `json:"annotations,omitempty"`
}

// keptStep is what v1alpha1 cannot say about one canary step.
type keptStep struct {
	// Index is the step's index in spec.strategy.canary.steps.
	Index int `json:"index"`
	// Traffic is a traffic that is not a whole percentage.
	Traffic *string `json:"traffic,omitempty"`
	// NoReplicas is a step with a traffic and without replicas.
	NoReplicas bool `json:"noReplicas,omitempty"`
	// Matches are the step's matches with a path or query parameters.
	Matches []keptMatch `json:"matches,omitempty"`
}

// keptMatch is a whole v1beta1 match.
type keptMatch struct {
	// Index is the match's index in the step's matches.
	Index int `json:"index"`
	// Match is the match.
	Match rolloutsv1beta1.HttpRouteMatch `json:"match"`
}

// rewrite records an annotation the conversion changed: From is its stored
// value, To the one the conversion wrote; nil is no annotation.
type rewrite struct {
	From *string `json:"from"`
	To   *string `json:"to"`
}

// v1alpha1Fields is what a v1alpha1 Rollout says that its stored v1beta1
// form cannot; it rides on the v1beta1 object in V1alpha1FieldsAnnotation.
type v1alpha1Fields struct {
	// RolloutID is the deprecated spec.rolloutID.
	RolloutID string `json:"rolloutID,omitempty"`
	// DerivedReplicas are the indices of the steps written without replicas,
	// whose v1beta1 replicas the conversion took from the weight.
	DerivedReplicas []int `json:"derivedReplicas,omitempty"`
}

// readFields decodes the annotation key; a missing or unreadable value
// (written by someone else) reads as nothing kept.
func readFields[T any](annotations map[string]string, key string) T {
	var v T
	if s, ok := annotations[key]; ok {
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			var zero T
			return zero
		}
	}
	return v
}

// writeFields sets the annotation key to v as JSON, or removes it when v is
// empty.
func writeFields[T any](meta *metav1.ObjectMeta, key string, v T) {
	var zero T
	if equality.Semantic.DeepEqual(v, zero) {
		delete(meta.Annotations, key)
		return
	}
	b, err := json.Marshal(v)
	if err != nil { // plain data: cannot happen
		return
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = string(b)
}

// restore puts back into out (converted from in) what was kept of an
// earlier v1beta1 form, where in still says the same.
func (k *v1beta1Fields) restore(out *rolloutsv1beta1.RolloutSpec, in *rolloutsv1alpha1.RolloutSpec) {
	if in.Strategy.Canary == nil {
		out.Strategy.BlueGreen = k.BlueGreen
		return
	}
	c := out.Strategy.Canary
	c.DisableGenerateCanaryService = k.DisableGenerateCanaryService
	for _, ks := range k.Steps {
		if ks.Index < 0 || ks.Index >= len(c.Steps) {
			continue
		}
		st, a := &c.Steps[ks.Index], in.Strategy.Canary.Steps[ks.Index]
		if ks.Traffic != nil && a.Weight == nil {
			st.Traffic = ks.Traffic
		}
		if ks.NoReplicas && a.Replicas == nil {
			st.Replicas = nil
		}
		for _, km := range ks.Matches {
			if km.Index >= 0 && km.Index < len(st.Matches) && equality.Semantic.DeepEqual(st.Matches[km.Index].Headers, km.Match.Headers) {
				st.Matches[km.Index] = km.Match
			}
		}
	}
}

// restoreAnnotations puts back the stored values of the annotations the
// conversion to v1alpha1 rewrote, where they still have the value it wrote.
func (k *v1beta1Fields) restoreAnnotations(meta *metav1.ObjectMeta) {
	for _, key := range []string{rolloutsv1beta1.RollingStyleAnnotation, rolloutsv1beta1.TrafficRoutingAnnotation} {
		rw, ok := k.Annotations[key]
		if !ok || !equality.Semantic.DeepEqual(annotation(meta, key), rw.To) {
			continue
		}
		setAnnotation(meta, key, rw.From)
	}
}

// agreeAnnotations makes the rolling-style and trafficrouting annotations of
// the v1alpha1 form say what the v1beta1 spec says, and returns what it
// rewrote.
func agreeAnnotations(meta *metav1.ObjectMeta, spec *rolloutsv1beta1.RolloutSpec) map[string]rewrite {
	c := spec.Strategy.Canary
	if c == nil {
		return nil
	}
	out := map[string]rewrite{}
	style := annotation(meta, rolloutsv1beta1.RollingStyleAnnotation)
	if extraWorkload(deref(style), spec.WorkloadRef) != c.EnableExtraWorkloadForCanary {
		to := rollingStyle(c.EnableExtraWorkloadForCanary)
		out[rolloutsv1beta1.RollingStyleAnnotation] = rewrite{From: style, To: &to}
		setAnnotation(meta, rolloutsv1beta1.RollingStyleAnnotation, &to)
	}
	tr := annotation(meta, rolloutsv1beta1.TrafficRoutingAnnotation)
	if deref(tr) != c.TrafficRoutingRef {
		var to *string
		if c.TrafficRoutingRef != "" {
			to = &c.TrafficRoutingRef
		}
		out[rolloutsv1beta1.TrafficRoutingAnnotation] = rewrite{From: tr, To: to}
		setAnnotation(meta, rolloutsv1beta1.TrafficRoutingAnnotation, to)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// restore puts back into out (converted from in) the v1alpha1 settings kept
// in the stored form, where in still says the same.
func (f *v1alpha1Fields) restore(out *rolloutsv1alpha1.RolloutSpec, in *rolloutsv1beta1.RolloutSpec) {
	out.RolloutID = f.RolloutID
	if in.Strategy.Canary == nil || out.Strategy.Canary == nil {
		return
	}
	steps := in.Strategy.Canary.Steps
	for _, i := range f.DerivedReplicas {
		if i < 0 || i >= len(steps) {
			continue
		}
		st := steps[i]
		if st.Replicas != nil && st.Replicas.Type == intstr.String && st.Traffic != nil && *st.Traffic == st.Replicas.StrVal &&
			out.Strategy.Canary.Steps[i].Weight != nil {
			out.Strategy.Canary.Steps[i].Replicas = nil
		}
	}
}

// alphaOnly is what the v1alpha1 spec in says that out, its v1beta1 form,
// cannot.
func alphaOnly(in *rolloutsv1alpha1.RolloutSpec, out *rolloutsv1beta1.RolloutSpec) v1alpha1Fields {
	f := v1alpha1Fields{RolloutID: in.RolloutID}
	if in.Strategy.Canary == nil || out.Strategy.Canary == nil {
		return f
	}
	for i, st := range in.Strategy.Canary.Steps {
		if st.Replicas == nil && out.Strategy.Canary.Steps[i].Replicas != nil {
			f.DerivedReplicas = append(f.DerivedReplicas, i)
		}
	}
	return f
}

func annotation(meta *metav1.ObjectMeta, key string) *string {
	v, ok := meta.Annotations[key]
	if !ok {
		return nil
	}
	return &v
}

func setAnnotation(meta *metav1.ObjectMeta, key string, v *string) {
	if v == nil {
		delete(meta.Annotations, key)
		return
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = *v
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
