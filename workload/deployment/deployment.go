// Package deployment releases an apps/v1 Deployment in place, in batches,
// without ever leaving it in a state Kubernetes cannot finish on its own.
//
// Between batches the Deployment is paused with maxSurge 0 (so Kubernetes'
// proportional scaling of a paused Deployment changes nothing); to move a
// batch it is unpaused with an inflated minReadySeconds, so new pods never
// count as available and the native rolling update stops at the size that
// maxUnavailable and maxSurge allow. Every original value is kept in the
// sluice.dev/restore-patch annotation as a merge patch that restores them.
// docs/deployment-batches.md explains the choice and its trade-offs.
package deployment

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/batch"
	"github.com/sluice-dev/sluice/workload/ownership"
	"github.com/sluice-dev/sluice/workload/precondition"
	"github.com/sluice-dev/sluice/workload/revisions"
)

var _ workload.Releaser = (*Releaser)(nil)

// Releaser releases one Deployment in place.
type Releaser struct {
	client    client.Client
	reader    client.Reader
	key       types.NamespacedName
	blueGreen bool
	// template is the pod-template-hash of the template Status saw;
	// UpgradeBatch places nothing for another one: the batch it is given
	// was computed for that release, and a new revision written in between
	// (the webhook holds it again) must not be released with its size.
	template string
}

// New returns a Releaser for the Deployment key that reads through reader
// and writes through c with the sluice field manager.
func New(c client.Client, reader client.Reader, key types.NamespacedName) *Releaser {
	return &Releaser{client: c, reader: reader, key: key}
}

// NewBlueGreen returns a Releaser that releases the Deployment key blue-green:
// each batch adds new pods beside all the old ones, which go only when the
// release ends.
func NewBlueGreen(c client.Client, reader client.Reader, key types.NamespacedName) *Releaser {
	return &Releaser{client: c, reader: reader, key: key, blueGreen: true}
}

// Status implements workload.Releaser.
func (r *Releaser) Status(ctx context.Context) (*workload.Status, error) {
	d, sets, err := r.read(ctx)
	if err != nil {
		return nil, err
	}
	r.template = revisions.TemplateHash(&d.Spec.Template, nil)
	// A Deployment OpenKruise left held is read as its user configured it
	// (adopt.go), and claimed again before anything else.
	view, why := adoptView(d)
	st := statusOf(view, sets)
	st.Adopt = leftByOpenKruise(d)
	if why != "" {
		st.Unsupported = why
	}
	return st, nil
}

// Claim implements workload.Releaser: it records the restore patch, the
// stable revision and the controlling BatchRelease, pauses the Deployment
// and sets maxSurge to 0.
func (r *Releaser) Claim(ctx context.Context, owner workload.Owner) error {
	live, sets, err := r.read(ctx)
	if err != nil {
		return err
	}
	d, why := adoptView(live)
	if why != "" {
		return fmt.Errorf("%s: %w", why, workload.ErrUnsupported)
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return fmt.Errorf("deployment %s has spec.strategy.type Recreate, which cannot be released in batches; use RollingUpdate: %w",
			r.key, workload.ErrUnsupported)
	}
	annotations, labels, err := workload.ClaimMetadata(d, owner, func() (string, error) {
		b, err := json.Marshal(newRestorePatch(d))
		return string(b), err
	}, func() (string, error) {
		if stable := sets.stableCandidate(); stable != nil {
			return stable.Labels[appsv1.DefaultDeploymentUniqueLabelKey], nil
		}
		return "", nil
	})
	if err != nil {
		return err
	}
	if err := ownership.RecordInto(annotations, d, heldFields...); err != nil {
		return err
	}
	if len(annotations) == 0 && len(labels) == 0 && d.Spec.Paused {
		return nil
	}
	_, unavailable, err := r.bounds(d)
	if err != nil {
		return err
	}
	patch := map[string]any{
		"metadata": map[string]any{"annotations": annotations, "labels": labels},
		"spec":     specPatch(planGate(gateInput{Replicas: replicasOf(d), Unavailable: unavailable, BlueGreen: r.blueGreen}), d),
	}
	if leftByOpenKruise(live) {
		adoptInto(patch, live)
	}
	return r.patch(ctx, d, patch)
}

// UpgradeBatch implements workload.Releaser.
func (r *Releaser) UpgradeBatch(ctx context.Context, desired int32) (bool, error) {
	d, sets, err := r.read(ctx)
	if err != nil {
		return false, err
	}
	if r.template != "" && revisions.TemplateHash(&d.Spec.Template, nil) != r.template {
		ctrl.LoggerFrom(ctx).Info("Pod template changed since the status was read; placing nothing until the next reconcile", "deployment", r.key)
		return false, nil
	}
	surge, unavailable, err := r.bounds(d)
	if err != nil {
		return false, err
	}
	in := gateInput{
		Replicas:    replicasOf(d),
		Desired:     desired,
		OldReplicas: sets.oldReplicas(),
		Surge:       surge,
		Unavailable: unavailable,
		Armed:       sets.armed(d),
		BlueGreen:   r.blueGreen,
	}
	if sets.current != nil {
		in.NewReplicas = replicasOfSet(sets.current)
		in.NewReady = sets.current.Status.ReadyReplicas
	}
	if handedBack(d, in) {
		// Someone took the Deployment back from the release (applied the
		// restore patch, or unpaused it and Kubernetes finished): holding
		// it again would undo what they did. The release completes or
		// restarts from what Kubernetes does with it.
		return in.NewReplicas >= desired, nil
	}
	g := planGate(in)
	if g.Mode == modeMove && d.Spec.Paused {
		if g, err = r.confirmMove(ctx, d, in); err != nil {
			return false, err
		}
	}
	if spec := specPatch(g, d); len(spec) > 0 {
		// A conflict (the Deployment changed since it was read) goes back
		// to the caller, which plans the batch again from a fresh read.
		if err := r.patch(ctx, d, map[string]any{"spec": spec}); err != nil {
			return false, err
		}
		killpoint.ReachedIf(ctx, g.Mode == modeArm, killpoint.DeploymentArmed, r.key.String())
		killpoint.ReachedIf(ctx, g.Mode == modeMove, killpoint.DeploymentMoved, r.key.String())
	}
	return g.Mode == modeHold, nil
}

// confirmMove plans the gate again on the new ReplicaSet as the API server
// holds it, before a held Deployment is unpaused for a batch. That the new
// pods cannot count as available (armed) is the one fact the batch's bound
// rests on, and Kubernetes writes it, not sluice: the informer cache may
// still show the ReplicaSet as it was in the previous batch's move (held
// timing, no pod available) after the hold gave the pods back their
// availability, and unpausing on that copy lets Kubernetes' rolling update
// run past the batch. Once unpaused, the moves that follow only widen the
// bounds as new pods become ready, which a stale copy understates. So
// this is one uncached read per batch.
func (r *Releaser) confirmMove(ctx context.Context, d *appsv1.Deployment, in gateInput) (gate, error) {
	cur, err := currentFromAPIServer(ctx, r.reader, d)
	if err != nil {
		return gate{}, err
	}
	in.Armed = armed(d, cur)
	in.NewReplicas, in.NewReady = 0, 0
	if cur != nil {
		in.NewReplicas, in.NewReady = replicasOfSet(cur), cur.Status.ReadyReplicas
	}
	return planGate(in), nil
}

// Finalize implements workload.Releaser: it applies the restore patch and,
// with wait, reports done once Kubernetes has finished the rollout.
func (r *Releaser) Finalize(ctx context.Context, wait bool) (bool, error) {
	d, sets, err := r.read(ctx)
	if apierrors.IsNotFound(err) || err == workload.ErrNotFound {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if leftByOpenKruise(d) {
		return r.handBackAdopted(ctx, d, wait)
	}
	p, ok, err := readRestorePatch(d)
	if err != nil {
		return false, err
	}
	// Without a restore patch the release never claimed the Deployment: the
	// webhook paused it and nothing else changed.
	var patch any = map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{
			rolloutsv1beta1.InProgressingAnnotation: nil,
			rolloutsv1beta1.ControlInfoAnnotation:   nil,
		}},
		"spec": map[string]any{"paused": false},
	}
	if ok {
		// The owners record goes with the hand-back of the fields below.
		delete(p.Metadata.Annotations, ownership.Annotation)
		patch = p
	}
	if ok || hasAny(d.Annotations, rolloutsv1beta1.InProgressingAnnotation, rolloutsv1beta1.ControlInfoAnnotation) {
		if err := r.patch(ctx, d, patch); err != nil {
			return false, err
		}
	}
	if err := ownership.HandBackFields(ctx, r.client, r.reader, d, "deployment "+r.key.String()); err != nil {
		return false, err
	}
	if ok {
		return !wait, nil
	}
	return !wait || statusOf(d, sets).UpToDate, nil
}

// heldFields are the Deployment fields a release changes, as dotted paths.
var heldFields = []string{
	"spec.paused", "spec.minReadySeconds", "spec.progressDeadlineSeconds",
	"spec.strategy.rollingUpdate.maxSurge", "spec.strategy.rollingUpdate.maxUnavailable",
}

// handedBack reports whether d was handed back to Kubernetes outside the
// release: its restore patch was applied, or it was unpaused by hand and is
// now fully on the new revision.
func handedBack(d *appsv1.Deployment, in gateInput) bool {
	if _, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; !held {
		return true
	}
	return !d.Spec.Paused && d.Spec.MinReadySeconds != heldMinReadySeconds &&
		in.OldReplicas == 0 && in.NewReplicas >= in.Replicas
}

// bounds resolves the user's maxSurge and maxUnavailable, from the restore
// patch while a release holds the Deployment.
func (r *Releaser) bounds(d *appsv1.Deployment) (surge, unavailable int32, err error) {
	p, ok, err := readRestorePatch(d)
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		p = newRestorePatch(d)
	}
	ru := p.Spec.Strategy.RollingUpdate
	return batch.RollingBounds(ru.MaxSurge, ru.MaxUnavailable, replicasOf(d))
}

func (r *Releaser) read(ctx context.Context) (*appsv1.Deployment, *replicaSets, error) {
	d := &appsv1.Deployment{}
	if err := r.reader.Get(ctx, r.key, d); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, fmt.Errorf("deployment %s: %w", r.key, workload.ErrNotFound)
		}
		return nil, nil, fmt.Errorf("reading deployment %s: %w", r.key, err)
	}
	sets, err := listReplicaSets(ctx, r.client, r.reader, d)
	if err != nil {
		return nil, nil, err
	}
	return d, sets, nil
}

// patch sends a merge patch of d guarded by the resourceVersion read: every
// write sluice makes to a Deployment depends on what it read, so a write by
// anyone else in between (a new pod template above all) makes it fail with
// a conflict, and the caller plans again from a fresh read.
func (r *Releaser) patch(ctx context.Context, d *appsv1.Deployment, patch any) error {
	return precondition.Patch(ctx, r.client, d, patch, "deployment "+r.key.String())
}

// specPatch is the spec part of a merge patch that puts d in gate g. Fields
// already at their target are left out, so a settled Deployment gets an
// empty patch.
func specPatch(g gate, d *appsv1.Deployment) map[string]any {
	spec := map[string]any{}
	paused := g.Mode != modeMove
	if d.Spec.Paused != paused {
		spec["paused"] = paused
	}
	ru := d.Spec.Strategy.RollingUpdate
	if ru == nil || ru.MaxSurge == nil || ru.MaxSurge.String() != fmt.Sprint(g.MaxSurge) ||
		ru.MaxUnavailable == nil || ru.MaxUnavailable.String() != fmt.Sprint(g.MaxUnavailable) {
		spec["strategy"] = map[string]any{"rollingUpdate": map[string]any{"maxSurge": g.MaxSurge, "maxUnavailable": g.MaxUnavailable}}
	}
	if g.Mode == modeHold && !g.Inflated {
		if p, ok, _ := readRestorePatch(d); ok {
			if d.Spec.MinReadySeconds != p.Spec.MinReadySeconds {
				spec["minReadySeconds"] = p.Spec.MinReadySeconds
			}
			if !equalInt32Ptr(d.Spec.ProgressDeadlineSeconds, p.Spec.ProgressDeadlineSeconds) {
				spec["progressDeadlineSeconds"] = p.Spec.ProgressDeadlineSeconds
			}
		}
		return spec
	}
	if d.Spec.MinReadySeconds != heldMinReadySeconds {
		spec["minReadySeconds"] = heldMinReadySeconds
	}
	if d.Spec.ProgressDeadlineSeconds == nil || *d.Spec.ProgressDeadlineSeconds != heldProgressDeadlineSeconds {
		spec["progressDeadlineSeconds"] = heldProgressDeadlineSeconds
	}
	return spec
}

// TemplateRevision is the update revision of a Deployment read as its typed
// object, computed from that copy alone as Status computes it: its pod
// template's hash. ok is false for any other object.
func TemplateRevision(obj client.Object) (rev string, ok bool) {
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return "", false
	}
	return revisions.TemplateHash(&d.Spec.Template, nil), true
}

// statusOf computes the release-relevant status of d.
func statusOf(d *appsv1.Deployment, sets *replicaSets) *workload.Status {
	n := replicasOf(d)
	s := &workload.Status{
		Generation:         d.Generation,
		ObservedGeneration: d.Status.ObservedGeneration,
		Replicas:           n,
		StableRevision:     d.Labels[rolloutsv1beta1.StableRevisionLabel],
		UpdateRevision:     revisions.TemplateHash(&d.Spec.Template, nil),
		RolloutID:          workload.RolloutID(d.Labels, d.Annotations),
		InProgressRollout:  workload.InProgressRollout(d.Annotations),
		Labels:             d.Labels,
	}
	if cur := sets.current; cur != nil {
		s.PodTemplateHash = cur.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		s.UpdatedReplicas = cur.Status.Replicas
		s.UpdatedReadyReplicas = cur.Status.ReadyReplicas
		s.InRollback = s.StableRevision != "" && s.PodTemplateHash == s.StableRevision
	} else {
		s.PodTemplateHash = revisions.TemplateHash(&d.Spec.Template, d.Status.CollisionCount)
	}
	s.PodSelector = d.Spec.Selector
	s.RevisionLabel = appsv1.DefaultDeploymentUniqueLabelKey
	if p, ok, err := readRestorePatch(d); err == nil {
		if !ok {
			p = newRestorePatch(d)
		}
		ru := p.Spec.Strategy.RollingUpdate
		_, s.MaxUnavailable, _ = batch.RollingBounds(ru.MaxSurge, ru.MaxUnavailable, n)
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		s.Unsupported = "spec.strategy.type of Deployment " + d.Name + " is Recreate, which cannot be released in batches; use RollingUpdate"
	}
	// Settled: the pods are what the ReplicaSets ask for (n between
	// batches, more during a blue-green release).
	want := sets.oldReplicas()
	if sets.current != nil {
		want += replicasOfSet(sets.current)
	}
	s.Settled = d.Status.ObservedGeneration >= d.Generation && d.Status.Replicas == want
	s.UpToDate = !d.Spec.Paused && d.Spec.MinReadySeconds != heldMinReadySeconds &&
		d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas == n && d.Status.Replicas == n && d.Status.AvailableReplicas == n
	return s
}

func replicasOf(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func hasAny(m map[string]string, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}
