package deployment

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
)

// What OpenKruise Rollouts leaves on a Deployment it releases (see
// docs/migrating-from-openkruise.md). Its in-progressing, control-info and
// stable-revision marks are the ones sluice uses too.
const (
	// kruiseStrategyAnnotation holds, while OpenKruise releases a
	// Deployment in place (partition style: the Deployment set to Recreate
	// and paused, its ReplicaSets driven by OpenKruise's own controller),
	// {rollingStyle, rollingUpdate, paused, partition}: rollingUpdate is
	// the user's maxSurge and maxUnavailable.
	kruiseStrategyAnnotation = "rollouts.kruise.io/deployment-strategy"
	// kruiseExtraStatusAnnotation is the status OpenKruise's controller
	// writes beside it.
	kruiseExtraStatusAnnotation = "rollouts.kruise.io/deployment-extra-status"
	// kruiseOriginalAnnotation holds, while OpenKruise releases a
	// Deployment blue-green, the user's {maxSurge, maxUnavailable,
	// minReadySeconds, progressDeadlineSeconds}.
	kruiseOriginalAnnotation = "rollouts.kruise.io/original-deployment-strategy"
	// kruiseAdvancedLabel hands a Deployment to OpenKruise's own
	// Deployment controller.
	kruiseAdvancedLabel = "rollouts.kruise.io/controlled-by-advanced-deployment-controller"
)

// kruiseStrategy is the content of kruiseStrategyAnnotation.
type kruiseStrategy struct {
	RollingUpdate *appsv1.RollingUpdateDeployment `json:"rollingUpdate,omitempty"`
}

// kruiseOriginal is the content of kruiseOriginalAnnotation.
type kruiseOriginal struct {
	MaxSurge                *intstr.IntOrString `json:"maxSurge,omitempty"`
	MaxUnavailable          *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	MinReadySeconds         int32               `json:"minReadySeconds,omitempty"`
	ProgressDeadlineSeconds *int32              `json:"progressDeadlineSeconds,omitempty"`
}

// leftByOpenKruise reports whether d carries the marks of a release that
// sluice never claimed (it has no restore patch): OpenKruise's own
// annotations or label, or a controlling BatchRelease, which sluice
// records only together with the restore patch.
func leftByOpenKruise(d *appsv1.Deployment) bool {
	if _, claimed := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; claimed {
		return false
	}
	_, advanced := d.Labels[kruiseAdvancedLabel]
	return advanced || hasAny(d.Annotations, kruiseStrategyAnnotation, kruiseOriginalAnnotation, rolloutsv1beta1.ControlInfoAnnotation)
}

// adoptView returns d as the user configured it before OpenKruise held it,
// when OpenKruise left it held: the RollingUpdate strategy OpenKruise kept
// in its annotation instead of its Recreate, and the timing a blue-green
// release kept. It is what sluice records to hand back, so the Deployment
// is never handed back as Recreate or with OpenKruise's timing. why says,
// when the strategy cannot be known, why sluice refuses to release d and
// what to do; d is then returned unchanged.
func adoptView(d *appsv1.Deployment) (view *appsv1.Deployment, why string) {
	if !leftByOpenKruise(d) {
		return d, ""
	}
	v := d.DeepCopy()
	if raw, ok := d.Annotations[kruiseOriginalAnnotation]; ok {
		var o kruiseOriginal
		if err := json.Unmarshal([]byte(raw), &o); err != nil {
			return d, fmt.Sprintf("deployment %s was left mid-release by OpenKruise Rollouts and its annotation %s cannot be read (%v): "+
				"sluice does not release it rather than hand it back with OpenKruise's timing; set spec.minReadySeconds, "+
				"spec.progressDeadlineSeconds and spec.strategy.rollingUpdate as you want them and remove the annotation",
				d.Name, kruiseOriginalAnnotation, err)
		}
		v.Spec.MinReadySeconds, v.Spec.ProgressDeadlineSeconds = o.MinReadySeconds, o.ProgressDeadlineSeconds
		v.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: o.MaxSurge, MaxUnavailable: o.MaxUnavailable}}
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		return v, ""
	}
	var s kruiseStrategy
	raw, ok := d.Annotations[kruiseStrategyAnnotation]
	if ok {
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			s.RollingUpdate = nil
		}
	}
	if s.RollingUpdate == nil || (s.RollingUpdate.MaxSurge == nil && s.RollingUpdate.MaxUnavailable == nil) {
		return d, fmt.Sprintf("deployment %s was left with spec.strategy.type Recreate by OpenKruise Rollouts, and its annotation %s keeps no "+
			"rollingUpdate to restore: sluice does not release it rather than hand it back as Recreate. Set the strategy it should have, e.g. "+
			`kubectl patch deployment %s --type merge -p '{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%%","maxUnavailable":"25%%"}}}}'`+
			"; the release then goes on",
			d.Name, kruiseStrategyAnnotation, d.Name)
	}
	v.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: s.RollingUpdate.DeepCopy()}
	return v, ""
}

// adoptInto adds to patch, the merge patch with which sluice claims live,
// a Deployment OpenKruise left held, what adopts it: the RollingUpdate
// strategy type (the rest of the strategy is in the patch already), none
// of OpenKruise's own marks (its controller is gone), and live's
// resourceVersion, so that the write happens only on what was read.
func adoptInto(patch map[string]any, live *appsv1.Deployment) {
	meta, _ := patch["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		patch["metadata"] = meta
	}
	meta["resourceVersion"] = live.ResourceVersion
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	for _, k := range []string{kruiseStrategyAnnotation, kruiseExtraStatusAnnotation, kruiseOriginalAnnotation} {
		if _, ok := live.Annotations[k]; ok {
			annotations[k] = nil
		}
	}
	if _, ok := live.Labels[kruiseAdvancedLabel]; ok {
		labels, _ := meta["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			meta["labels"] = labels
		}
		labels[kruiseAdvancedLabel] = nil
	}
	if live.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		spec, _ := patch["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			patch["spec"] = spec
		}
		strategy, _ := spec["strategy"].(map[string]any)
		if strategy == nil {
			strategy = map[string]any{}
			spec["strategy"] = strategy
		}
		strategy["type"] = string(appsv1.RollingUpdateDeploymentStrategyType)
	}
}

// handBackAdopted hands back d, a Deployment OpenKruise left held that
// sluice never claimed: as the user configured it (see adoptView), never
// as Recreate, with none of OpenKruise's or sluice's marks. It refuses
// when the strategy cannot be known.
func (r *Releaser) handBackAdopted(ctx context.Context, d *appsv1.Deployment, wait bool) (bool, error) {
	view, why := adoptView(d)
	if why != "" {
		return false, fmt.Errorf("%s: %w", why, workload.ErrUnsupported)
	}
	b, err := json.Marshal(newRestorePatch(view))
	if err != nil {
		return false, err
	}
	patch := map[string]any{}
	if err := json.Unmarshal(b, &patch); err != nil {
		return false, err
	}
	adoptInto(patch, d)
	if err := r.patch(ctx, d, patch); err != nil {
		return false, err
	}
	return !wait, nil
}
