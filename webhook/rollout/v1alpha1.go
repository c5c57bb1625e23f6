package rollout

import (
	"strconv"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// The Rollout webhooks see v1beta1 only: their rules name v1beta1 with
// matchPolicy Equivalent, so the API server converts a v1alpha1 request
// (through the conversion webhook) before calling them. The request still
// says which version the user wrote (RequestKind); the functions below add
// the checks OpenKruise makes on v1alpha1 only, and name fields the way the
// user wrote them.

// isV1alpha1 reports whether the user wrote the request in v1alpha1.
func isV1alpha1(req admission.Request) bool {
	return req.RequestKind != nil && req.RequestKind.Version == rolloutsv1alpha1.GroupVersion.Version
}

// validateV1alpha1 makes OpenKruise's v1alpha1-only checks for a request
// written in v1alpha1: the rolling-style annotation is canary, partition or
// empty, and step weights never decrease. ro is the request converted to
// v1beta1 (a weight is its traffic); on an update (old not nil) only what
// changed is checked.
func validateV1alpha1(req admission.Request, ro, old *rolloutsv1beta1.Rollout) field.ErrorList {
	if !isV1alpha1(req) {
		return nil
	}
	var errs field.ErrorList
	if v, ok := ro.Annotations[rolloutsv1beta1.RollingStyleAnnotation]; ok && (old == nil || v != old.Annotations[rolloutsv1beta1.RollingStyleAnnotation]) {
		switch strings.ToLower(v) {
		case "", rolloutsv1alpha1.RollingStyleCanary, rolloutsv1alpha1.RollingStylePartition:
		default:
			errs = append(errs, field.NotSupported(field.NewPath("metadata", "annotations").Key(rolloutsv1beta1.RollingStyleAnnotation),
				v, []string{rolloutsv1alpha1.RollingStyleCanary, rolloutsv1alpha1.RollingStylePartition}))
		}
	}
	if c := ro.Spec.Strategy.Canary; c != nil && (old == nil || old.Spec.Strategy.Canary == nil ||
		!apiequality.Semantic.DeepEqual(c.Steps, old.Spec.Strategy.Canary.Steps)) {
		last, lastAt := -1, 0
		for i, st := range c.Steps {
			if st.Traffic == nil {
				continue
			}
			w, ok := rolloutsv1beta1.Percent(*st.Traffic)
			if !ok {
				continue
			}
			if w < last {
				errs = append(errs, field.Invalid(field.NewPath("spec", "strategy", "canary", "steps").Index(i).Child("traffic"), *st.Traffic,
					"must not be smaller than the weight of steps["+strconv.Itoa(lastAt)+"]"))
			}
			last, lastAt = w, i
		}
	}
	return errs
}

// inRequestVersion renames the v1beta1 fields of errs to their v1alpha1
// names when the user wrote the request in v1alpha1.
func inRequestVersion(req admission.Request, errs field.ErrorList) field.ErrorList {
	if !isV1alpha1(req) {
		return errs
	}
	for _, e := range errs {
		f := e.Field
		if rest, ok := strings.CutPrefix(f, "spec.workloadRef"); ok {
			f = "spec.objectRef.workloadRef" + rest
		}
		if rest, ok := strings.CutSuffix(f, ".traffic"); ok {
			f = rest + ".weight"
		}
		if bad, ok := e.BadValue.(string); ok && strings.HasSuffix(f, ".weight") && !strings.HasSuffix(e.Field, ".weight") {
			e.BadValue = strings.TrimSuffix(bad, "%")
		}
		e.Field = f
	}
	return errs
}
