package rollout

import (
	"fmt"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/providers"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// maxSteps is the most steps a Rollout may have, as in OpenKruise.
const maxSteps = 50

// validate checks a Rollout being created (old nil) or updated. On an
// update it checks only what the update changes (the workload reference,
// the strategy's kind, its steps, its routes, the approval), and what a
// release in progress depends on: a Rollout stored once stays writable
// (annotated, applied again unchanged, its finalizer removed) even when a
// rule it was admitted under would reject it now. others are the other
// Rollouts of its namespace; they are needed only when conflicts reports
// true. Nothing here reads the live workload: a plan that does not fit its
// replica count is reported by the Rollout's Supported condition
// (support.Fit), not refused.
func validate(ro, old *rolloutsv1beta1.Rollout, others []rolloutsv1beta1.Rollout) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	refChanged := old == nil || ro.Spec.WorkloadRef != old.Spec.WorkloadRef
	if refChanged {
		errs = append(errs, validateWorkloadRef(ro.Spec.WorkloadRef, spec.Child("workloadRef"))...)
	}
	strategy := spec.Child("strategy")
	s := ro.Spec.Strategy
	kindChanged := old == nil || (s.Canary == nil) != (old.Spec.Strategy.Canary == nil) || (s.BlueGreen == nil) != (old.Spec.Strategy.BlueGreen == nil)
	stepsChanged := old == nil || kindChanged || !apiequality.Semantic.DeepEqual(s.Steps(), old.Spec.Strategy.Steps())
	routesChanged := old == nil || kindChanged || !apiequality.Semantic.DeepEqual(s.TrafficRoutings(), old.Spec.Strategy.TrafficRoutings())
	switch {
	case s.Canary == nil && s.BlueGreen == nil:
		if kindChanged {
			errs = append(errs, field.Required(strategy, "set one of canary and blueGreen"))
		}
	case s.Canary != nil && s.BlueGreen != nil:
		if kindChanged {
			errs = append(errs, field.Forbidden(strategy, "set only one of canary and blueGreen"))
		}
	default:
		name, blueGreen := "canary", s.BlueGreen != nil
		if blueGreen {
			name = "blueGreen"
			if ok, which := kinds.ReleasedBlueGreen(ro.Spec.WorkloadRef.Kind); (refChanged || kindChanged) && !ok {
				errs = append(errs, field.Invalid(spec.Child("workloadRef", "kind"), ro.Spec.WorkloadRef.Kind,
					"blueGreen releases only "+which))
			}
		}
		if !blueGreen && s.Canary.EnableExtraWorkloadForCanary && kinds.Known(ro.Spec.WorkloadRef) &&
			(refChanged || kindChanged || !old.Spec.Strategy.Canary.EnableExtraWorkloadForCanary) {
			if ok, why := kinds.Supported(ro.Spec.WorkloadRef, rolloutsv1beta1.CanaryRollingStyle); !ok {
				errs = append(errs, field.Invalid(strategy.Child("canary", "enableExtraWorkloadForCanary"), true, why+"; remove it to release in place"))
			}
		}
		if stepsChanged {
			errs = append(errs, validateSteps(s.Steps(), strategy.Child(name, "steps"), blueGreen)...)
		}
		if routesChanged {
			errs = append(errs, validateRoutings(s.TrafficRoutings(), strategy.Child(name, "trafficRoutings"))...)
		}
		if stepsChanged || routesChanged {
			errs = append(errs, validateTraffic(s.TrafficRoutings(), s.Steps(), strategy.Child(name))...)
		}
	}
	if v, ok := ro.Annotations[rolloutsv1beta1.ApproveAnnotation]; ok && (old == nil || v != old.Annotations[rolloutsv1beta1.ApproveAnnotation]) {
		if _, err := approval.Parse(v); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(rolloutsv1beta1.ApproveAnnotation), v, err.Error()))
		}
	}
	if conflicts(ro, old) {
		errs = append(errs, validateConflicts(ro, others, spec.Child("workloadRef"))...)
	}
	if old != nil {
		errs = append(errs, validateUpdate(ro, old, spec)...)
	}
	return errs
}

// conflicts reports whether the write of ro (over old, nil on create) may
// make it a second enabled Rollout of its workload: it is enabled, and it
// is new, names another workload or was disabled.
func conflicts(ro, old *rolloutsv1beta1.Rollout) bool {
	if ro.Spec.Disabled {
		return false
	}
	return old == nil || old.Spec.Disabled || ro.Spec.WorkloadRef != old.Spec.WorkloadRef
}

func validateWorkloadRef(ref rolloutsv1beta1.ObjectRef, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "name the workload to release"))
	}
	if ref.APIVersion == "" {
		errs = append(errs, field.Required(path.Child("apiVersion"), "e.g. apps/v1"))
	} else if _, err := schema.ParseGroupVersion(ref.APIVersion); err != nil {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	if ref.Kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), "e.g. Deployment"))
	} else if !kinds.Known(ref) {
		errs = append(errs, field.NotSupported(path.Child("kind"), ref.APIVersion+"/"+ref.Kind, strings.Split(kinds.KnownKinds(), ", ")))
	}
	return errs
}

// validateSteps checks the steps: at least one and at most 50, each with
// replicas in range, never fewer than the step before (numbers compared
// with numbers, percentages with percentages), and traffic in range.
func validateSteps(steps []rolloutsv1beta1.CanaryStep, path *field.Path, blueGreen bool) field.ErrorList {
	var errs field.ErrorList
	if len(steps) == 0 {
		return append(errs, field.Required(path, "give at least one step"))
	}
	if len(steps) > maxSteps {
		errs = append(errs, field.TooMany(path, len(steps), maxSteps))
	}
	for i, st := range steps {
		p := path.Index(i)
		if st.Replicas == nil {
			errs = append(errs, field.Required(p.Child("replicas"), "give a number of pods or a percentage, e.g. 1 or \"20%\""))
		} else if msg := checkReplicas(*st.Replicas); msg != "" {
			errs = append(errs, field.Invalid(p.Child("replicas"), st.Replicas.String(), msg))
		} else if i > 0 && steps[i-1].Replicas != nil && checkReplicas(*steps[i-1].Replicas) == "" {
			if smaller(*st.Replicas, *steps[i-1].Replicas) {
				errs = append(errs, field.Invalid(p.Child("replicas"), st.Replicas.String(),
					fmt.Sprintf("must not be smaller than steps[%d].replicas (%s): steps count pods released so far", i-1, steps[i-1].Replicas.String())))
			}
		}
		if st.Traffic != nil {
			if msg := checkTraffic(*st.Traffic, blueGreen); msg != "" {
				errs = append(errs, field.Invalid(p.Child("traffic"), *st.Traffic, msg))
			}
		}
		if st.Pause.Duration != nil && *st.Pause.Duration < 0 {
			errs = append(errs, field.Invalid(p.Child("pause", "duration"), *st.Pause.Duration, "must be 0 or more seconds"))
		}
	}
	return errs
}

// checkReplicas returns why v is not a valid step size, or "".
func checkReplicas(v intstr.IntOrString) string {
	if v.Type == intstr.Int {
		if v.IntVal <= 0 {
			return "must be a positive number of pods"
		}
		return ""
	}
	p, ok := rolloutsv1beta1.Percent(v.StrVal)
	if !ok || p <= 0 || p > 100 {
		return "must be a percentage in (0%, 100%], e.g. \"20%\""
	}
	return ""
}

// smaller reports whether step a, which comes after b, asks for fewer
// pods. Only numbers compare with numbers and percentages with
// percentages: how a mixed pair compares depends on the workload's replica
// count, which changes (an HPA scales it) without the Rollout changing, so
// the Rollout's Supported condition reports a mixed plan that does not fit
// the current count instead (support.Fit).
func smaller(a, b intstr.IntOrString) bool {
	if a.Type != b.Type {
		return false
	}
	if a.Type == intstr.Int {
		return a.IntVal < b.IntVal
	}
	pa, _ := rolloutsv1beta1.Percent(a.StrVal)
	pb, _ := rolloutsv1beta1.Percent(b.StrVal)
	return pa < pb
}

func checkTraffic(v string, blueGreen bool) string {
	p, ok := rolloutsv1beta1.Percent(v)
	low := 0
	if !ok || p > 100 || p < low || (!blueGreen && p == 0) {
		if blueGreen {
			return "must be a percentage in [0%, 100%]"
		}
		return "must be a percentage in (0%, 100%]"
	}
	return ""
}

func validateRoutings(routes []rolloutsv1beta1.TrafficRoutingRef, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range routes {
		p := path.Index(i)
		if r.Service == "" {
			errs = append(errs, field.Required(p.Child("service"), "name the stable Service"))
		}
		if r.GracePeriodSeconds < 0 {
			errs = append(errs, field.Invalid(p.Child("gracePeriodSeconds"), r.GracePeriodSeconds, "must be 0 or more"))
		}
		errs = append(errs, providers.ValidateRef(p, r)...)
	}
	return errs
}

// maxServiceName is the longest name a Service may have (a DNS label).
const maxServiceName = 63

// validateTraffic checks that the routes of every trafficRoutings entry
// can express every step's traffic (a match they cannot express would
// otherwise be dropped), and that no two entries share a route: each
// entry's changes to a route would undo the other's.
func validateTraffic(routes []rolloutsv1beta1.TrafficRoutingRef, steps []rolloutsv1beta1.CanaryStep, path *field.Path) field.ErrorList {
	errs := providers.ValidateShared(path.Child("trafficRoutings"), routes)
	for i, r := range routes {
		p := path.Child("trafficRoutings").Index(i)
		if n := len(traffic.CanaryServiceName(r.Service)); r.Service != "" && n > maxServiceName {
			errs = append(errs, field.Invalid(p.Child("service"), r.Service,
				fmt.Sprintf("the canary Service %s would be %d characters long, more than the %d a Service name may have", traffic.CanaryServiceName(r.Service), n, maxServiceName)))
		}
		for j, st := range steps {
			err := providers.Check(r, st.TrafficRoutingStrategy)
			if err == nil {
				continue
			}
			sp := path.Child("steps").Index(j)
			if len(st.Matches) > 0 {
				sp = sp.Child("matches")
			}
			errs = append(errs, field.Invalid(sp, describeTraffic(st), fmt.Sprintf("cannot be expressed by trafficRoutings[%d]: %v", i, err)))
		}
	}
	return errs
}

// describeTraffic summarises a step's traffic for an error message.
func describeTraffic(st rolloutsv1beta1.CanaryStep) string {
	out := fmt.Sprintf("%d match(es)", len(st.Matches))
	if st.Traffic != nil {
		out += " and traffic " + *st.Traffic
	}
	return out
}

// validateConflicts rejects a second enabled Rollout for the same workload.
func validateConflicts(ro *rolloutsv1beta1.Rollout, others []rolloutsv1beta1.Rollout, path *field.Path) field.ErrorList {
	gk, err := kinds.GroupKind(ro.Spec.WorkloadRef)
	if err != nil {
		return nil
	}
	for i := range others {
		o := &others[i]
		if o.Name == ro.Name || o.Spec.Disabled || !o.DeletionTimestamp.IsZero() {
			continue
		}
		ogk, err := kinds.GroupKind(o.Spec.WorkloadRef)
		if err == nil && ogk == gk && o.Spec.WorkloadRef.Name == ro.Spec.WorkloadRef.Name {
			return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s %s is already released by Rollout %q; disable or delete it first",
				gk.Kind, ro.Spec.WorkloadRef.Name, o.Name))}
		}
	}
	return nil
}

// validateUpdate keeps what a release in progress depends on.
func validateUpdate(ro, old *rolloutsv1beta1.Rollout, spec *field.Path) field.ErrorList {
	if old.Status.Phase != rolloutsv1beta1.RolloutPhaseProgressing || ro.Spec.Disabled {
		return nil
	}
	var errs field.ErrorList
	if ro.Spec.WorkloadRef != old.Spec.WorkloadRef {
		errs = append(errs, field.Forbidden(spec.Child("workloadRef"), "cannot change while a release is in progress; disable the Rollout first"))
	}
	if (ro.Spec.Strategy.Canary == nil) != (old.Spec.Strategy.Canary == nil) {
		errs = append(errs, field.Forbidden(spec.Child("strategy"), "cannot switch between canary and blueGreen while a release is in progress"))
	}
	if !apiequality.Semantic.DeepEqual(ro.Spec.Strategy.TrafficRoutings(), old.Spec.Strategy.TrafficRoutings()) {
		errs = append(errs, field.Forbidden(spec.Child("strategy").Child(strategyName(ro), "trafficRoutings"),
			"cannot change while a release is in progress: the routes changed so far would not be given back; disable the Rollout first"))
	}
	if ref, oldRef := ro.TrafficRoutingRef(), old.TrafficRoutingRef(); ref != oldRef {
		errs = append(errs, field.Forbidden(spec.Child("strategy").Child(strategyName(ro), "trafficRoutingRef"),
			fmt.Sprintf("cannot change while a release is in progress (%q -> %q): the release holds TrafficRouting %q and its routes; disable the Rollout first", oldRef, ref, oldRef)))
	}
	if c, oc := ro.Spec.Strategy.Canary, old.Spec.Strategy.Canary; c != nil && oc != nil {
		if len(c.Steps) < len(oc.Steps) {
			errs = append(errs, field.Forbidden(spec.Child("strategy", "canary", "steps"),
				fmt.Sprintf("cannot remove steps while a release is in progress (%d -> %d)", len(oc.Steps), len(c.Steps))))
		}
		if c.EnableExtraWorkloadForCanary != oc.EnableExtraWorkloadForCanary {
			errs = append(errs, field.Forbidden(spec.Child("strategy", "canary", "enableExtraWorkloadForCanary"), "cannot change while a release is in progress"))
		}
	}
	return errs
}

func strategyName(ro *rolloutsv1beta1.Rollout) string {
	if ro.Spec.Strategy.BlueGreen != nil {
		return "blueGreen"
	}
	return "canary"
}
