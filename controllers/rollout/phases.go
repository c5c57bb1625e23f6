package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/internal/ownwrites"
	"github.com/sluice-dev/sluice/release/abort"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/release/canary"
	"github.com/sluice-dev/sluice/release/coverage"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// scope is what one reconcile of a Rollout works on.
type scope struct {
	ro       *rolloutsv1beta1.Rollout
	base     *rolloutsv1beta1.Rollout
	releaser workload.Releaser
	br       *rolloutsv1beta1.BatchRelease
	obs      canary.Observation
	// actions are what the step machine asked for; stepped says it ran.
	actions canary.Actions
	stepped bool
	// deferred is how long a status write of pod counts alone was put
	// off (controllers/spacing).
	deferred time.Duration
}

// observe gathers the workload, the BatchRelease and the approvals into s,
// and labels the workload so the admission webhook sees its updates.
func (r *Reconciler) observe(ctx context.Context, s *scope) error {
	ro := s.ro
	s.obs.Now = r.Clock.Now()
	s.obs.Deleting = !ro.DeletionTimestamp.IsZero()
	s.obs.Blocking, s.obs.Ignored = coverage.Analyze(ro)

	releaser, err := r.Workloads(r.Client, r.APIReader, workload.Target{
		Namespace: ro.Namespace, Ref: ro.Spec.WorkloadRef, Style: coverage.Style(ro),
	})
	if err == nil {
		s.releaser = releaser
		ws, err := releaser.Status(ctx)
		switch {
		case errors.Is(err, workload.ErrNotFound):
		case err != nil:
			return err
		default:
			s.obs.Workload = ws
			s.obs.Ignored = append(s.obs.Ignored, coverage.Fit(ro, ws.Replicas)...)
			if ws.Unsupported != "" {
				s.obs.Blocking = append(s.obs.Blocking, ws.Unsupported)
			}
		}
	} else if !errors.Is(err, workload.ErrUnsupported) {
		return err
	}
	if s.obs.Workload != nil && !s.obs.Deleting {
		if err := r.labelWorkload(ctx, ro, s.obs.Workload.Labels); err != nil {
			return err
		}
	}

	br := &rolloutsv1beta1.BatchRelease{}
	switch err := r.APIReader.Get(ownwrites.CacheOnly(ctx), client.ObjectKeyFromObject(ro), br); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading batchrelease: %w", err)
	default:
		s.br = br
		s.obs.BatchRelease = viewOf(br)
	}

	s.obs.Abort = r.request(ro, rolloutsv1beta1.AbortAnnotation, rolloutsv1beta1.AbortContextAnnotation)
	s.obs.Retry = r.request(ro, rolloutsv1beta1.RetryAnnotation, rolloutsv1beta1.RetryContextAnnotation)
	if raw, ok := ro.Annotations[rolloutsv1beta1.ApproveAnnotation]; ok {
		a, err := approval.Resolve(raw, ro.Annotations[rolloutsv1beta1.ApproveContextAnnotation])
		if err != nil {
			r.Recorder.Eventf(ro, nil, corev1.EventTypeWarning, "InvalidApproval", "Approve",
				"Annotation %s ignored: %v", rolloutsv1beta1.ApproveAnnotation, err)
		} else if applied, err := r.appliedApproval(ctx, ro, a); err != nil {
			return err
		} else if !applied {
			s.obs.Approval = &a
		}
	}
	s.obs.StatusApprover = statusApprover(ro)
	s.obs.ProgressDeadline = r.progressDeadline(ro)
	s.obs.AbortOnProgressDeadline = r.abortOnProgressDeadline(ro)
	analysis, err := r.analysis(ctx, ro)
	if err != nil {
		return err
	}
	s.obs.Analysis = analysis
	s.obs.KeepHeldOnDeletion = r.KeepHeldOnDeletion
	if v, ok := ro.Annotations[rolloutsv1beta1.KeepHeldOnDeletionAnnotation]; ok {
		s.obs.KeepHeldOnDeletion = v == "true"
	}
	if pastDeadline(ro, s.obs.ProgressDeadline, s.obs.Now) && s.obs.Workload != nil {
		pods, err := r.unreadyPods(ctx, ro.Namespace, s.obs.Workload)
		if err != nil {
			return err
		}
		s.obs.UnreadyPods = pods
	}
	return nil
}

// request resolves the abort or retry request in the annotation key of ro,
// with its context; nil when there is none, or it cannot be read (said once
// in an event).
func (r *Reconciler) request(ro *rolloutsv1beta1.Rollout, key, contextKey string) *abort.Request {
	raw, ok := ro.Annotations[key]
	if !ok {
		return nil
	}
	req, err := abort.Resolve(raw, ro.Annotations[contextKey])
	switch {
	case errors.Is(err, abort.ErrNone):
		return nil
	case err != nil:
		r.eventOnce(ro, canary.Event{Type: corev1.EventTypeWarning, Reason: "InvalidRequest",
			Message: fmt.Sprintf("Annotation %s ignored: %v", key, err)})
		return nil
	}
	return &req
}

// labelWorkload sets rollouts.kruise.io/workload-type on the workload.
func (r *Reconciler) labelWorkload(ctx context.Context, ro *rolloutsv1beta1.Rollout, labels map[string]string) error {
	want := kinds.WorkloadType(ro.Spec.WorkloadRef)
	if !kinds.Known(ro.Spec.WorkloadRef) || labels[rolloutsv1beta1.WorkloadTypeLabel] == want {
		return nil // a custom kind's objects opt in with the label themselves
	}
	return r.patchWorkloadLabel(ctx, ro, &want)
}

// patchWorkloadLabel sets (or with nil removes) the workload-type label.
func (r *Reconciler) patchWorkloadLabel(ctx context.Context, ro *rolloutsv1beta1.Rollout, value *string) error {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(ro.Spec.WorkloadRef.APIVersion, ro.Spec.WorkloadRef.Kind))
	obj.SetNamespace(ro.Namespace)
	obj.SetName(ro.Spec.WorkloadRef.Name)
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{rolloutsv1beta1.WorkloadTypeLabel: value}}})
	err := r.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("labelling %s %s: %w", ro.Spec.WorkloadRef.Kind, ro.Spec.WorkloadRef.Name, err)
	}
	return nil
}

// act carries out the step machine's actions.
func (r *Reconciler) act(ctx context.Context, s *scope, a canary.Actions) error {
	logger := ctrl.LoggerFrom(ctx)
	for _, e := range a.Events {
		if e.Once {
			r.eventOnce(s.ro, e)
			continue
		}
		r.Recorder.Eventf(s.ro, nil, e.Type, e.Reason, "Release", "%s", e.Message)
	}
	if a.Approved != nil {
		if err := r.recordApproval(ctx, s, *a.Approved); err != nil {
			return err
		}
	}
	switch a.BatchRelease {
	case canary.EnsureBatchRelease:
		if err := r.ensureBatchRelease(ctx, s, a.Partition, a.Policy, a.HoldStable); err != nil {
			return err
		}
	case canary.DeleteBatchRelease:
		if s.br != nil && a.SkipHandBack && s.br.Annotations[rolloutsv1beta1.SkipHandBackAnnotation] != "true" {
			b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{rolloutsv1beta1.SkipHandBackAnnotation: "true"}}})
			if err := r.Client.Patch(ctx, s.br, client.RawPatch(types.MergePatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
				return fmt.Errorf("marking the batchrelease to leave the workload held: %w", err)
			}
		}
		if s.br != nil && s.br.DeletionTimestamp.IsZero() {
			logger.Info("Deleting BatchRelease")
			err := r.Client.Delete(ctx, s.br, client.PropagationPolicy(metav1.DeletePropagationBackground))
			if client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting batchrelease: %w", err)
			}
		}
	case canary.KeepBatchRelease:
	}
	if a.HandBack && s.releaser != nil {
		if _, err := s.releaser.Finalize(ctx, false); err != nil {
			return fmt.Errorf("handing the workload back: %w", err)
		}
	}
	return nil
}

// recordApproval appends an applied approval to sluice.dev/approvals.
func (r *Reconciler) recordApproval(ctx context.Context, s *scope, a approval.Approval) error {
	// since is when the step entered the state the approval moves it out
	// of, from the status as read (the step machine has moved s.ro on).
	var since time.Time
	if p, ok := progress.Of(s.base); ok && p.Common.LastUpdateTime != nil {
		since = p.Common.LastUpdateTime.Time
	}
	raw, err := approval.Append(s.ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation], a, since)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{rolloutsv1beta1.ApprovalsAnnotation: raw}}})
	obj := s.ro.DeepCopy()
	if err := r.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
		return fmt.Errorf("recording approval: %w", err)
	}
	// The status patch that follows is guarded by this new version.
	s.base.ResourceVersion = obj.ResourceVersion
	killpoint.Reached(ctx, killpoint.RolloutApprovalRecorded, s.ro.Namespace+"/"+s.ro.Name)
	ctrl.LoggerFrom(ctx).Info("Approval applied", "step", a.Step, "revision", a.Revision, "by", a.By, "via", a.Via)
	return nil
}

func (r *Reconciler) addFinalizer(ctx context.Context, ro *rolloutsv1beta1.Rollout) error {
	obj := ro.DeepCopy()
	base := obj.DeepCopy()
	controllerutil.AddFinalizer(obj, rolloutsv1beta1.RolloutFinalizer)
	if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
		return fmt.Errorf("adding finalizer: %w", err)
	}
	ro.ResourceVersion = obj.ResourceVersion
	ro.Finalizers = obj.Finalizers
	return nil
}

// removeFinalizer lets a deleted Rollout go, after removing the label it
// put on the workload.
func (r *Reconciler) removeFinalizer(ctx context.Context, s *scope) error {
	if s.obs.Workload != nil && kinds.Known(s.ro.Spec.WorkloadRef) {
		if err := r.patchWorkloadLabel(ctx, s.ro, nil); err != nil {
			return err
		}
	}
	killpoint.Reached(ctx, killpoint.RolloutFinalizerRemoving, s.ro.Namespace+"/"+s.ro.Name)
	obj := &rolloutsv1beta1.Rollout{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s.ro), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	base := obj.DeepCopy()
	controllerutil.RemoveFinalizer(obj, rolloutsv1beta1.RolloutFinalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}),
		client.FieldOwner(rolloutsv1beta1.FieldManager)))
}
