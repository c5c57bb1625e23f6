// Package partition releases workloads in batches through their update
// partition: native StatefulSets, OpenKruise Advanced StatefulSets,
// CloneSets and Advanced DaemonSets, and StatefulSet-like custom kinds
// (a CRD with spec.replicas, spec.template and a partition) whose objects
// are labelled rollouts.kruise.io/workload-type: statefulset.
//
// The partition is the number of pods (for a DaemonSet, nodes) a workload
// keeps on its old revision; the workload's own controller updates the
// others. The webhook holds a new release by setting the partition so that
// no pod changes (32767, or "100%" for a CloneSet); each batch lowers it to
// replicas minus the batch's pods; the end of the release puts back the
// partition the user had, kept meanwhile in the sluice.dev/restore-patch
// annotation as a merge patch that one kubectl command can apply.
// CloneSets can also be released blue-green (NewBlueGreen, bluegreen.go).
// docs/workloads.md describes each kind.
package partition

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/ownership"
	"github.com/sluice-dev/sluice/workload/precondition"
)

// freshWait bounds how long Status waits for a held workload's controller
// to see the workload's latest spec, so that a release starts from the
// revision the controller computed for it rather than the one before.
const freshWait = 2 * time.Second

var _ workload.Releaser = (*Releaser)(nil)

// Releaser releases one partition workload.
type Releaser struct {
	client client.Client
	reader client.Reader
	gvk    schema.GroupVersionKind
	key    types.NamespacedName
	p      profile
	// blueGreen releases the new pods beside all the old ones.
	blueGreen bool
	// template is the pod template Status saw; UpgradeBatch places nothing
	// for another one (see templateChanged).
	template string
}

// New returns the Releaser of the workload key of kind gvk, whose profile
// is kind, which reads through reader and writes through c with the sluice
// field manager.
func New(c client.Client, reader client.Reader, kind Profile, gvk schema.GroupVersionKind, key types.NamespacedName) *Releaser {
	return &Releaser{client: c, reader: reader, gvk: gvk, key: key, p: kind.p}
}

// Status implements workload.Releaser.
func (r *Releaser) Status(ctx context.Context) (*workload.Status, error) {
	o, err := r.read(ctx)
	if err != nil {
		return nil, err
	}
	if held(o) && !o.fresh() {
		o, err = r.waitFresh(ctx, o)
		if err != nil {
			return nil, err
		}
	}
	why, err := r.checkKind(ctx)
	if err != nil {
		return nil, err
	}
	pods, err := r.pods(ctx, o)
	if err != nil {
		return nil, err
	}
	s := statusOf(o, pods, why)
	s.Adopt = leftByOther(o)
	if r.blueGreen {
		blueGreenStatus(s, o)
	}
	r.template = templateOf(o)
	return s, nil
}

// templateChanged reports whether o's pod template is not the one Status
// saw. The batch to place was computed for the release Status described: a
// new revision written in between (the webhook holds it again) must not be
// released with that batch's size. The next reconcile starts from a fresh
// Status instead.
func (r *Releaser) templateChanged(o object) bool {
	return r.template != "" && templateOf(o) != r.template
}

// templateOf is a fingerprint of o's pod template.
func templateOf(o object) string {
	t, _, _ := unstructured.NestedFieldNoCopy(o.u.Object, "spec", "template")
	b, _ := json.Marshal(t)
	return string(b)
}

// Claim implements workload.Releaser: it makes sure the workload is held
// with a restore patch, and records the controlling BatchRelease and the
// stable revision.
func (r *Releaser) Claim(ctx context.Context, owner workload.Owner) error {
	o, err := r.read(ctx)
	if err != nil {
		return err
	}
	why, err := r.checkKind(ctx)
	if err != nil {
		return err
	}
	if why == "" {
		why = unsupported(o)
	}
	if why == "" && r.blueGreen {
		why = unsupportedBlueGreen(o)
	}
	if why != "" {
		return fmt.Errorf("%s: %w", why, workload.ErrUnsupported)
	}
	spec := map[string]any{}
	annotations, labels, err := workload.ClaimMetadata(o.u, owner, func() (string, error) {
		// Not held by sluice's webhook (e.g. held by another tool, or the
		// mark was added by hand): keep what the workload has, unless it is
		// the hold value, which nobody wants back.
		// A partition a release left (OpenKruise's, mid-release) is not
		// the user's either (adopt.go).
		restore, err := newRestorePatch(r.p, r.userPartition(o))
		if err != nil {
			return "", err
		}
		spec = fragment(r.p, o.u.Object, r.p.hold, true)
		return restore, nil
	}, func() (string, error) {
		pods, err := r.pods(ctx, o)
		if err != nil {
			return "", err
		}
		return stableCandidate(o, pods, o.revision(r.p.update)), nil
	})
	if err != nil {
		return err
	}
	if r.blueGreen {
		// Record the fields a blue-green release holds and hold them, in
		// the same write.
		raw, ok := annotations[restoreAnnotation].(string)
		if !ok {
			raw, _ = restorePatchOf(o.u)
		}
		claimed, changed, err := claimBlueGreen(r.p, raw, o.u.Object)
		if err != nil {
			return err
		}
		if changed {
			annotations[restoreAnnotation] = claimed
			updated, _ := o.statusInt(r.p.updated)
			mergeInto(spec, blueGreenSpec(r.p, o.u.Object, planBlueGreen(0, updated)))
		}
	}
	if err := ownership.RecordInto(annotations, o.u, r.heldFields()...); err != nil {
		return err
	}
	if len(annotations) == 0 && len(labels) == 0 {
		return nil
	}
	patch := map[string]any{"metadata": map[string]any{"annotations": annotations, "labels": labels}}
	for k, v := range spec {
		patch[k] = v
	}
	return r.patch(ctx, o, patch)
}

// UpgradeBatch implements workload.Releaser: it lowers the partition to
// keep replicas-desired pods on the old revision. The partition is never
// raised during a release, so pods already updated stay updated.
func (r *Releaser) UpgradeBatch(ctx context.Context, desired int32) (bool, error) {
	o, err := r.read(ctx)
	if err != nil {
		return false, err
	}
	n := o.replicas()
	if _, ok := restorePatchOf(o.u); !ok {
		// Handed back outside the release (the restore patch was applied):
		// holding it again would undo that. The workload's controller
		// releases the rest.
		updated, _ := o.statusInt(r.p.updated)
		return updated >= desired, nil
	}
	if r.templateChanged(o) {
		ctrl.LoggerFrom(ctx).Info("Pod template changed since the status was read; placing nothing until the next reconcile", "workload", o.name())
		return false, nil
	}
	if r.blueGreen {
		return r.upgradeBlueGreen(ctx, o, desired)
	}
	kept, err := o.partitionCount(n)
	if err != nil {
		return false, err
	}
	target := max(n-desired, 0)
	if kept > target && o.ordered() {
		// Pods below the partition may already run the update revision
		// (a rollback in batches): they count, and the partition stays
		// above them.
		if target, err = r.ordinalTarget(ctx, o, n, desired); err != nil {
			return false, err
		}
	}
	if kept <= target {
		return o.fresh(), nil
	}
	return false, killpoint.After(ctx, killpoint.PartitionLowered, o.u.GetNamespace()+"/"+o.u.GetName(), r.patch(ctx, o, fragment(r.p, o.u.Object, int64(target), true)))
}

// Finalize implements workload.Releaser: it applies the restore patch and,
// with waitDone, reports done once the workload's controller has released
// every pod the restored partition allows.
func (r *Releaser) Finalize(ctx context.Context, waitDone bool) (bool, error) {
	o, err := r.read(ctx)
	if errors.Is(err, workload.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if raw, ok := restorePatchOf(o.u); ok {
		var patch map[string]any
		if err := json.Unmarshal([]byte(raw), &patch); err != nil {
			return false, fmt.Errorf("annotation %s of %s: %w", restoreAnnotation, o.name(), err)
		}
		// The owners record goes with the hand-back of the fields.
		ownership.KeepRecord(patch)
		if err := r.patch(ctx, o, patch); err != nil {
			return false, err
		}
		return !waitDone, r.handBack(ctx, o)
	}
	// A hand-back cut short after the restore patch is finished here.
	if err := r.handBack(ctx, o); err != nil {
		return false, err
	}
	a := o.u.GetAnnotations()
	if _, ok := a[rolloutsv1beta1.InProgressingAnnotation]; ok {
		// Marked without a restore patch: drop the marks, and a hold
		// partition nobody wants back.
		patch := map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			rolloutsv1beta1.InProgressingAnnotation: nil, rolloutsv1beta1.ControlInfoAnnotation: nil,
		}}}
		if raw, ok := o.partitionRaw(); ok && fmt.Sprint(raw) == fmt.Sprint(r.p.hold) {
			for k, v := range fragment(r.p, o.u.Object, nil, false) {
				patch[k] = v
			}
		}
		if err := r.patch(ctx, o, patch); err != nil {
			return false, err
		}
		return !waitDone, r.handBack(ctx, o)
	}
	if !waitDone {
		return true, nil
	}
	pods, err := r.pods(ctx, o)
	if err != nil {
		return false, err
	}
	return statusOf(o, pods, "").UpToDate, nil
}

// checkKind says why a custom kind's CRD does not let sluice release it,
// or "".
func (r *Releaser) checkKind(ctx context.Context) (string, error) {
	if !r.p.custom {
		return "", nil
	}
	var mapper meta.RESTMapper
	if r.client != nil {
		mapper = r.client.RESTMapper()
	}
	err := CheckCustomKind(ctx, r.reader, mapper, r.gvk)
	if errors.Is(err, ErrNotStatefulSetLike) {
		return err.Error(), nil
	}
	return "", err
}

// pods lists the workload's pods when the release needs them: for kinds
// whose status does not count ready updated pods or name the current
// revision.
func (r *Releaser) pods(ctx context.Context, o object) (podView, error) {
	if r.p.updatedReady != nil && r.p.current != nil {
		return podView{}, nil
	}
	owned, err := r.ownedPods(ctx, o)
	if err != nil {
		return podView{}, err
	}
	return viewPods(owned, r.p.revisionLabel, o.revision(r.p.update)), nil
}

// read reads the workload fresh from the API server.
func (r *Releaser) read(ctx context.Context) (object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk)
	if err := r.reader.Get(ctx, r.key, u); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return object{}, fmt.Errorf("%s %s: %w", r.gvk.Kind, r.key, workload.ErrNotFound)
		}
		return object{}, fmt.Errorf("reading %s %s: %w", r.gvk.Kind, r.key, err)
	}
	return object{p: r.p, u: u}, nil
}

// waitFresh re-reads a workload whose controller has not seen its latest
// spec yet (as right after the webhook held it), for at most freshWait.
// Past that it returns the last read: counts stay stale, and the release
// goes on from what the workload reports.
func (r *Releaser) waitFresh(ctx context.Context, o object) (object, error) {
	var readErr error
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, freshWait, false, func(ctx context.Context) (bool, error) {
		next, err := r.read(ctx)
		if err != nil {
			readErr = err
			return true, nil
		}
		o = next
		return o.fresh(), nil
	})
	return o, readErr
}

// patch sends a merge patch with the sluice field manager, guarded by the
// resourceVersion read: it fails with a conflict when the workload changed
// since (a new pod template above all), and the caller plans again from a
// fresh read.
func (r *Releaser) patch(ctx context.Context, o object, patch map[string]any) error {
	return precondition.Patch(ctx, r.client, o.u, patch, o.name())
}
