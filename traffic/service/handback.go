package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/handback"
)

// RestoreBeforeHandBack gives back the selector of every Service of
// namespace that the Rollout rollout narrowed to a revision the workload
// does not finish on, before the workload is handed back to its own
// controller: once that controller has finished the rollout, no pod of
// such a revision is left, and the Service would select none. finishing
// are the workload's update revision as its pods are labelled (a Deployment's
// pod-template-hash, a StatefulSet's controller-revision-hash); empty when
// the workload is gone. A Service narrowed to one of them (a rollback: the
// stable revision is the one the workload goes back to) keeps selecting
// it until the Rollout restores it, so that no request reaches a pod being
// rolled back. Each Service is found by its record (RecordAnnotation), so
// this works whether the Rollout still exists or not.
//
// It reads the Services through reader and writes through c, as
// RestoreStable does (a merge that keeps what others changed), and
// reports true once no such Service is left.
func RestoreBeforeHandBack(ctx context.Context, c client.Client, reader client.Reader, namespace, rollout string, finishing ...string) (bool, error) {
	if rollout == "" {
		return true, nil // only a Rollout narrows a Service
	}
	// The record is an annotation: the Services' metadata tells which ones
	// to read (the manager's reader serves it from its metadata cache once
	// that has caught up with sluice's own writes; a hand-back listed every
	// Service of the namespace from the API server, 3.8 lists a release).
	metas := &metav1.PartialObjectMetadataList{}
	metas.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceList"))
	if err := reader.List(ctx, metas, client.InNamespace(namespace)); err != nil {
		return false, fmt.Errorf("listing the Services of namespace %s: %w", namespace, err)
	}
	done := true
	for i := range metas.Items {
		if rec, err := handback.Read(metas.Items[i].Annotations, RecordAnnotation); err == nil && (rec == nil || rec.Rollout != rollout) {
			continue
		}
		svc := &corev1.Service{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: metas.Items[i].Name}, svc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return false, fmt.Errorf("reading Service %s: %w", metas.Items[i].Name, err)
		}
		rec, err := handback.Read(svc.Annotations, RecordAnnotation)
		if err != nil {
			return false, fmt.Errorf("Service %s: %w", svc.Name, err) //nolint:staticcheck // a kind name
		}
		if rec == nil || rec.Rollout != rollout {
			continue
		}
		if keep, err := narrowedTo(svc, rec, finishing); err != nil || keep {
			if err != nil {
				return false, err
			}
			continue
		}
		t := traffic.Target{Namespace: namespace, Rollout: rollout}
		t.Ref.Service = svc.Name
		restored, err := New(c, reader, t).RestoreStable(ctx)
		if err != nil {
			return false, err
		}
		done = done && restored
	}
	return done, nil
}

// narrowedTo reports whether svc is narrowed to one of the revisions
// finishing: every label sluice added to its selector (what rec says sluice
// applied beyond the original) is still there with one of them as value.
func narrowedTo(svc *corev1.Service, rec *handback.Record, finishing []string) (bool, error) {
	var original, applied map[string]string
	if len(rec.Value) > 0 {
		if err := json.Unmarshal(rec.Value, &original); err != nil {
			return false, fmt.Errorf("annotation %s of Service %s: %w", RecordAnnotation, svc.Name, err)
		}
	}
	if len(rec.Applied) == 0 {
		return false, nil // a record of an earlier sluice: restore it
	}
	if err := json.Unmarshal(rec.Applied, &applied); err != nil {
		return false, fmt.Errorf("annotation %s of Service %s: %w", RecordAnnotation, svc.Name, err)
	}
	added := false
	for k, v := range applied {
		if o, ok := original[k]; ok && o == v {
			continue
		}
		added = true
		if svc.Spec.Selector[k] != v || !slices.Contains(finishing, v) {
			return false, nil
		}
	}
	return added, nil
}
