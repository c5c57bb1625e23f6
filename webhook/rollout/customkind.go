package rollout

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload/kinds"
	"github.com/sluice-dev/sluice/workload/partition"
)

// acceptCustomKind settles the "kind not supported" error validate gives a
// Rollout naming a kind OpenKruise does not release by name: a
// StatefulSet-like custom kind, whose CRD declares spec.replicas,
// spec.template and a partition, is accepted (its objects opt in with the
// rollouts.kruise.io/workload-type: statefulset label); for any other CRD kind the error says what the CRD lacks.
func (v *Validator) acceptCustomKind(ctx context.Context, ref rolloutsv1beta1.ObjectRef, errs field.ErrorList) field.ErrorList {
	kindPath := field.NewPath("spec", "workloadRef", "kind")
	at := -1
	for i, e := range errs {
		if e.Type == field.ErrorTypeNotSupported && e.Field == kindPath.String() {
			at = i
		}
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	if at < 0 || v.APIReader == nil || !kinds.IsCustomCandidate(gvk.GroupKind()) {
		return errs
	}
	err := partition.CheckCustomKind(ctx, v.APIReader, nil, gvk)
	switch {
	case err == nil:
		return append(errs[:at], errs[at+1:]...)
	case errors.Is(err, partition.ErrNotStatefulSetLike):
		errs[at] = field.Invalid(kindPath, ref.APIVersion+"/"+ref.Kind, err.Error())
	default:
		errs[at] = field.InternalError(kindPath, err)
	}
	return errs
}
