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
	"github.com/sluice-dev/sluice/workload/lookup"
)

// maxSteps is the most steps a Rollout may have, as in OpenKruise.
const maxSteps = 50

// validate checks a Rollout being created (old nil) or updated. others are
// the other Rollouts of its namespace; replicas is the workload's replica
// count when known, used to compare steps given as a number with steps given
// as a percentage.
func validate(ro, old *rolloutsv1beta1.Rollout, others []rolloutsv1beta1.Rollout, replicas *int32) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	errs = append(errs, validateWorkloadRef(ro.Spec.WorkloadRef, spec.Child("workloadRef"))...)
	strategy := spec.Child("strategy")
	switch s := ro.Spec.Strategy; {
	case s.Canary == nil && s.BlueGreen == nil:
		errs = append(errs, field.Required(strategy, "set one of canary and blueGreen"))
	case s.Canary != nil && s.BlueGreen != nil:
		errs = append(errs, field.Forbidden(strategy, "set only one of canary and blueGreen"))
	case s.Canary != nil:
		errs = append(errs, validateSteps(s.Canary.Steps, strategy.Child("canary", "steps"), replicas, false)...)
		errs = append(errs, validateRoutings(s.Canary.TrafficRoutings, strategy.Child("canary", "trafficRoutings"))...)
		errs = append(errs, validateTraffic(s.Canary.TrafficRoutings, s.Canary.Steps, strategy.Child("canary"))...)
	default:
		if ro.Spec.WorkloadRef.Kind != "Deployment" && ro.Spec.WorkloadRef.Kind != "CloneSet" {
			errs = append(errs, field.Invalid(spec.Child("workloadRef", "kind"), ro.Spec.WorkloadRef.Kind,
				"blueGreen releases only Deployments and CloneSets"))
		}
		errs = append(errs, validateSteps(s.BlueGreen.Steps, strategy.Child("blueGreen", "steps"), replicas, true)...)
		errs = append(errs, validateRoutings(s.BlueGreen.TrafficRoutings, strategy.Child("blueGreen", "trafficRoutings"))...)
		errs = append(errs, validateTraffic(s.BlueGreen.TrafficRoutings, s.BlueGreen.Steps, strategy.Child("blueGreen"))...)
	}
	if v, ok := ro.Annotations[rolloutsv1beta1.ApproveAnnotation]; ok {
		if _, err := approval.Parse(v); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(rolloutsv1beta1.ApproveAnnotation), v, err.Error()))
		}
	}
	if !ro.Spec.Disabled {
		errs = append(errs, validateConflicts(ro, others, spec.Child("workloadRef"))...)
	}
	if old != nil {
		errs = append(errs, validateUpdate(ro, old, spec)...)
	}
	return errs
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
	} else if !lookup.Known(ref) {
		errs = append(errs, field.NotSupported(path.Child("kind"), ref.APIVersion+"/"+ref.Kind, strings.Split(lookup.KnownKinds(), ", ")))
	}
	return errs
}

// validateSteps checks the steps: at least one and at most 50, each with
// replicas in range, never fewer than the step before, and traffic in range.
func validateSteps(steps []rolloutsv1beta1.CanaryStep, path *field.Path, replicas *int32, blueGreen bool) field.ErrorList {
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
			if smaller(*st.Replicas, *steps[i-1].Replicas, replicas) {
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
	p, ok := percent(v.StrVal)
	if !ok || p <= 0 || p > 100 {
		return "must be a percentage in (0%, 100%], e.g. \"20%\""
	}
	return ""
}

// smaller reports whether step b comes before a with more pods. Numbers
// compare with numbers and percentages with percentages; a mixed pair is
// compared only when the workload's replicas are known.
func smaller(a, b intstr.IntOrString, replicas *int32) bool {
	if a.Type == b.Type {
		if a.Type == intstr.Int {
			return a.IntVal < b.IntVal
		}
		pa, _ := percent(a.StrVal)
		pb, _ := percent(b.StrVal)
		return pa < pb
	}
	if replicas == nil {
		return false
	}
	va, err1 := intstr.GetScaledValueFromIntOrPercent(&a, int(*replicas), true)
	vb, err2 := intstr.GetScaledValueFromIntOrPercent(&b, int(*replicas), true)
	return err1 == nil && err2 == nil && min(va, int(*replicas)) < min(vb, int(*replicas))
}

func checkTraffic(v string, blueGreen bool) string {
	p, ok := percent(v)
	low := 0
	if !ok || p > 100 || p < low || (!blueGreen && p == 0) {
		if blueGreen {
			return "must be a percentage in [0%, 100%]"
		}
		return "must be a percentage in (0%, 100%]"
	}
	return ""
}

func percent(s string) (int, bool) {
	if !strings.HasSuffix(s, "%") {
		return 0, false
	}
	var n int
	if _, err := fmt.Sscanf(s, "%d%%", &n); err != nil || fmt.Sprintf("%d%%", n) != s {
		return 0, false
	}
	return n, true
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
		if r.Ingress == nil && r.Gateway == nil && len(r.CustomNetworkRefs) == 0 {
			errs = append(errs, field.Required(p, "set one of ingress, gateway and customNetworkRefs"))
		}
		if r.Ingress != nil && r.Ingress.Name == "" {
			errs = append(errs, field.Required(p.Child("ingress", "name"), "name the Ingress"))
		}
		if r.Gateway != nil && (r.Gateway.HTTPRouteName == nil || *r.Gateway.HTTPRouteName == "") {
			errs = append(errs, field.Required(p.Child("gateway", "httpRouteName"), "name the HTTPRoute"))
		}
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
	var errs field.ErrorList
	ingresses, httpRoutes := map[string]int{}, map[string]int{}
	for i, r := range routes {
		p := path.Child("trafficRoutings").Index(i)
		if n := len(traffic.CanaryServiceName(r.Service)); r.Service != "" && n > maxServiceName {
			errs = append(errs, field.Invalid(p.Child("service"), r.Service,
				fmt.Sprintf("the canary Service %s would be %d characters long, more than the %d a Service name may have", traffic.CanaryServiceName(r.Service), n, maxServiceName)))
		}
		if r.Ingress != nil && r.Ingress.Name != "" {
			if j, ok := ingresses[r.Ingress.Name]; ok {
				errs = append(errs, field.Duplicate(p.Child("ingress", "name"), fmt.Sprintf("%s (also in trafficRoutings[%d])", r.Ingress.Name, j)))
			}
			ingresses[r.Ingress.Name] = i
		}
		if g := r.Gateway; g != nil && g.HTTPRouteName != nil && *g.HTTPRouteName != "" {
			if j, ok := httpRoutes[*g.HTTPRouteName]; ok {
				errs = append(errs, field.Duplicate(p.Child("gateway", "httpRouteName"), fmt.Sprintf("%s (also in trafficRoutings[%d])", *g.HTTPRouteName, j)))
			}
			httpRoutes[*g.HTTPRouteName] = i
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
	gk, err := lookup.GroupKind(ro.Spec.WorkloadRef)
	if err != nil {
		return nil
	}
	for i := range others {
		o := &others[i]
		if o.Name == ro.Name || o.Spec.Disabled || !o.DeletionTimestamp.IsZero() {
			continue
		}
		ogk, err := lookup.GroupKind(o.Spec.WorkloadRef)
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
