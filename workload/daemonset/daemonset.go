// Package daemonset releases a native apps/v1 DaemonSet in batches: it
// holds the DaemonSet with the OnDelete update strategy and deletes old pods
// node by node, as many per batch as the step asks for; the DaemonSet
// controller replaces each with a pod of the new revision on that node.
//
// The webhook (Hold) switches a held DaemonSet to OnDelete and records the
// strategy it had in the sluice.dev/restore-patch annotation, a JSON merge
// patch; Finalize applies it, and the DaemonSet controller finishes the
// rollout with the DaemonSet's own strategy. docs/workloads-daemonset.md
// describes it for users.
package daemonset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/ownership"
	"github.com/sluice-dev/sluice/workload/precondition"
)

var _ workload.Releaser = (*Releaser)(nil)

// Releaser releases one DaemonSet in batches.
type Releaser struct {
	client client.Client
	reader client.Reader
	key    types.NamespacedName
}

// New returns the Releaser of the DaemonSet key. It reads the DaemonSet,
// its ControllerRevisions and its pods through reader and writes through c
// with the sluice field manager.
func New(c client.Client, reader client.Reader, key types.NamespacedName) (workload.Releaser, error) {
	return &Releaser{client: c, reader: reader, key: key}, nil
}

// observed is one fresh read of a DaemonSet and what it runs.
type observed struct {
	ds  *appsv1.DaemonSet
	rev revisions
	t   tally
}

// Status implements workload.Releaser.
func (r *Releaser) Status(ctx context.Context) (*workload.Status, error) {
	ds, err := r.get(ctx)
	if err != nil {
		return nil, err
	}
	o, err := r.observe(ctx, ds)
	if err != nil {
		return nil, err
	}
	return statusOf(o.ds, o.rev, o.t), nil
}

// Claim implements workload.Releaser: it makes sure the DaemonSet is held
// (OnDelete, with its restore patch), records the stable revision (what its
// old pods run) and the controlling BatchRelease.
func (r *Releaser) Claim(ctx context.Context, owner workload.Owner) error {
	ds, err := r.get(ctx)
	if err != nil {
		return err
	}
	o, err := r.observe(ctx, ds)
	if err != nil {
		return err
	}
	annotations, labels, err := workload.ClaimMetadata(ds, owner, func() (string, error) {
		return newRestorePatch(ds.Spec.UpdateStrategy).encode(), nil
	}, func() (string, error) {
		return stableCandidate(o.t, o.rev.previous), nil
	})
	if err != nil {
		return err
	}
	if err := ownership.RecordInto(annotations, ds, heldFields...); err != nil {
		return err
	}
	spec := map[string]any{}
	if ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType {
		spec["updateStrategy"] = map[string]any{"type": appsv1.OnDeleteDaemonSetStrategyType}
	}
	if len(annotations) == 0 && len(labels) == 0 && len(spec) == 0 {
		return nil
	}
	return r.patch(ctx, ds, map[string]any{
		"metadata": map[string]any{"annotations": annotations, "labels": labels},
		"spec":     spec,
	})
}

// UpgradeBatch implements workload.Releaser: it deletes old pods until
// desired nodes run, or are about to run, the update revision, within the
// DaemonSet's maxUnavailable. It reports true once desired pods of the
// update revision exist.
func (r *Releaser) UpgradeBatch(ctx context.Context, desired int32) (bool, error) {
	ds, err := r.get(ctx)
	if err != nil {
		return false, err
	}
	o, err := r.observe(ctx, ds)
	if err != nil {
		return false, err
	}
	placed := o.t.Updated >= desired
	if !held(ds) {
		// Handed back outside the release (its restore patch applied, or
		// its strategy set by hand): the DaemonSet controller replaces the
		// pods itself, and deleting more could break its maxUnavailable.
		return placed, nil
	}
	if ds.Status.ObservedGeneration < ds.Generation {
		// The DaemonSet controller has not seen the template yet: it
		// could replace a deleted pod with one of the old revision.
		return false, nil
	}
	strategy, err := userStrategy(ds)
	if err != nil {
		return false, err
	}
	log := ctrl.LoggerFrom(ctx)
	for _, p := range o.t.toDelete(desired, maxUnavailableOf(strategy, ds.Status.DesiredNumberScheduled), ds.Labels[rolloutsv1beta1.StableRevisionLabel]) {
		log.Info("Deleting pod to replace it with the update revision", "pod", klog.KRef(ds.Namespace, p.Name), "node", p.Node,
			"revision", p.Revision, "updateRevision", o.rev.update)
		if err := r.deletePod(ctx, p); err != nil {
			return false, err
		}
	}
	return placed, nil
}

// deletePod deletes the pod p as it was read: a pod that changed since (it
// became ready or unready, or was deleted and replaced) is not deleted,
// and the conflict makes the caller plan again from a fresh read, so that
// no more pods go than the batch allows on what the pods are now.
func (r *Releaser) deletePod(ctx context.Context, p podView) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: r.key.Namespace, Name: p.Name, UID: p.UID}}
	uid, rv := p.UID, p.ResourceVersion
	err := r.client.Delete(ctx, pod, client.Preconditions{UID: &uid, ResourceVersion: &rv})
	switch {
	case err == nil || apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return fmt.Errorf("pod %s of daemonset %s changed since it was read: %w", p.Name, r.key, err)
	}
	return fmt.Errorf("deleting pod %s of daemonset %s: %w", p.Name, r.key, err)
}

// Finalize implements workload.Releaser: it applies the restore patch, so
// the DaemonSet controller replaces the remaining old pods with the
// DaemonSet's own strategy and, with wait, reports done once every pod runs
// the update revision and is available.
func (r *Releaser) Finalize(ctx context.Context, wait bool) (bool, error) {
	ds, err := r.get(ctx)
	if errors.Is(err, workload.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if raw, ok := ds.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]; ok {
		var patch map[string]any
		if err := json.Unmarshal([]byte(raw), &patch); err != nil {
			return false, fmt.Errorf("annotation %s of daemonset %s: %w", rolloutsv1beta1.DeploymentOriginalAnnotation, r.key, err)
		}
		// The owners record goes with the hand-back of the fields.
		ownership.KeepRecord(patch)
		if err := r.patch(ctx, ds, patch); err != nil {
			return false, err
		}
		return !wait, r.handBack(ctx, ds)
	}
	// A hand-back cut short after the restore patch is finished here.
	if err := r.handBack(ctx, ds); err != nil {
		return false, err
	}
	// Without a restore patch nothing of the DaemonSet's own was changed;
	// only sluice's marks may be left.
	marks := map[string]any{}
	for _, k := range []string{rolloutsv1beta1.InProgressingAnnotation, rolloutsv1beta1.ControlInfoAnnotation} {
		if _, ok := ds.Annotations[k]; ok {
			marks[k] = nil
		}
	}
	if _, ok := ds.Labels[rolloutsv1beta1.StableRevisionLabel]; ok || len(marks) > 0 {
		patch := map[string]any{"metadata": map[string]any{
			"annotations": marks,
			"labels":      map[string]any{rolloutsv1beta1.StableRevisionLabel: nil},
		}}
		if err := r.patch(ctx, ds, patch); err != nil {
			return false, err
		}
		return !wait, r.handBack(ctx, ds)
	}
	if !wait {
		return true, nil
	}
	o, err := r.observe(ctx, ds)
	if err != nil {
		return false, err
	}
	return statusOf(o.ds, o.rev, o.t).UpToDate, nil
}

// held reports whether a release holds ds: it has a restore patch and the
// OnDelete strategy.
func held(ds *appsv1.DaemonSet) bool {
	_, ok := ds.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	return ok && ds.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType
}

func (r *Releaser) get(ctx context.Context) (*appsv1.DaemonSet, error) {
	ds := &appsv1.DaemonSet{}
	if err := r.reader.Get(ctx, r.key, ds); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("daemonset %s: %w", r.key, workload.ErrNotFound)
		}
		return nil, fmt.Errorf("reading daemonset %s: %w", r.key, err)
	}
	return ds, nil
}

// observe reads, fresh, the ControllerRevisions and pods ds controls.
func (r *Releaser) observe(ctx context.Context, ds *appsv1.DaemonSet) (*observed, error) {
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector of daemonset %s: %w", r.key, err)
	}
	opts := []client.ListOption{client.InNamespace(ds.Namespace), client.MatchingLabelsSelector{Selector: sel}}
	history := &appsv1.ControllerRevisionList{}
	if err := r.reader.List(ctx, history, opts...); err != nil {
		return nil, fmt.Errorf("listing controllerrevisions of daemonset %s: %w", r.key, err)
	}
	pods := &corev1.PodList{}
	if err := r.reader.List(ctx, pods, opts...); err != nil {
		return nil, fmt.Errorf("listing pods of daemonset %s: %w", r.key, err)
	}
	views := make([]podView, 0, len(pods.Items))
	for i := range pods.Items {
		if ref := metav1.GetControllerOf(&pods.Items[i]); ref != nil && ref.UID == ds.UID {
			views = append(views, viewOf(&pods.Items[i]))
		}
	}
	rev := revisionsOf(ds, history.Items)
	return &observed{ds: ds, rev: rev, t: count(views, rev.update, ds.Status.DesiredNumberScheduled)}, nil
}

// heldFields are the DaemonSet fields a release changes, as dotted paths.
// Claim records who owns them (ownership.RecordInto) and the hand-back
// gives them back.
var heldFields = []string{
	"spec.updateStrategy.type", "spec.updateStrategy.rollingUpdate.maxUnavailable", "spec.updateStrategy.rollingUpdate.maxSurge",
}

// handBack gives ds's held fields back to the field managers that owned
// them when the release claimed it, and drops sluice's managedFields entry.
func (r *Releaser) handBack(ctx context.Context, ds *appsv1.DaemonSet) error {
	return ownership.HandBackFields(ctx, r.client, r.reader, ds, "daemonset "+r.key.String())
}

// patch sends a merge patch of ds guarded by the resourceVersion read, so
// that it fails with a conflict when ds changed since (a new pod template
// above all); the caller plans again from a fresh read.
func (r *Releaser) patch(ctx context.Context, ds *appsv1.DaemonSet, patch any) error {
	return precondition.Patch(ctx, r.client, ds, patch, "daemonset "+r.key.String())
}
