// Package canarydeployment releases a Deployment in canary style
// (enableExtraWorkloadForCanary): a separate canary Deployment runs the new
// revision and is scaled up step by step, while the stable Deployment stays
// paused at full size on the old revision with its own strategy untouched;
// at the end the stable Deployment is unpaused, Kubernetes updates it with
// its own rolling update, and the canary is deleted.
//
// The stable Deployment is held by the in-place adapter's webhook
// (deployment.Hold) and read through that adapter's Status; this package
// adds the canary. docs/workloads-canary-deployment.md explains the
// choices.
package canarydeployment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/deployment"
	"github.com/sluice-dev/sluice/workload/precondition"
)

var _ workload.Releaser = (*Releaser)(nil)

// Releaser releases one Deployment in canary style.
type Releaser struct {
	client client.Client
	reader client.Reader
	key    types.NamespacedName
	meta   *rolloutsv1beta1.PatchPodTemplateMetadata
	// stable reads and hands back the stable Deployment.
	stable *deployment.Releaser
}

// New returns the canary-style Releaser of the Deployment t names. It reads
// through reader and writes through c with the sluice field manager; the
// canary's pod template gets t.PatchPodTemplateMetadata.
func New(c client.Client, reader client.Reader, t workload.Target) (workload.Releaser, error) {
	key := types.NamespacedName{Namespace: t.Namespace, Name: t.Ref.Name}
	return &Releaser{
		client: c,
		reader: reader,
		key:    key,
		meta:   t.PatchPodTemplateMetadata,
		stable: deployment.New(c, reader, key),
	}, nil
}

// Status implements workload.Releaser. Replicas, revisions, rollback and
// the pod selector are the stable Deployment's; the updated pods are the
// canary's while it exists, else the stable's own pods of its template. It
// is up to date only once the stable is and no canary is left.
func (r *Releaser) Status(ctx context.Context) (*workload.Status, error) {
	s, err := r.stable.Status(ctx)
	if err != nil {
		return nil, err
	}
	set, err := r.canaries(ctx, r.client, Name(r.key.Name, s.UpdateRevision))
	if err != nil {
		return nil, err
	}
	s.UpToDate = s.UpToDate && len(set.all) == 0
	var c *workload.Status
	if cur := set.named(Name(r.key.Name, s.UpdateRevision)); cur != nil && cur.DeletionTimestamp == nil && !s.InRollback {
		c, err = deployment.New(r.client, r.reader, client.ObjectKeyFromObject(cur)).Status(ctx)
		if errors.Is(err, workload.ErrNotFound) {
			// Deleted meanwhile. Never report ErrNotFound for the canary:
			// callers would take the stable Deployment for gone.
			c, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case c != nil:
		s.UpdatedReplicas, s.UpdatedReadyReplicas = c.UpdatedReplicas, c.UpdatedReadyReplicas
		s.PodTemplateHash = c.PodTemplateHash
		s.Settled = s.Settled && c.Settled
	case !s.InRollback && s.UpdatedReplicas == 0:
		// No pod of the new revision yet; the canary's pods will carry a
		// pod-template-hash of their own, not the stable template's.
		s.PodTemplateHash = ""
	}
	return s, nil
}

// Claim implements workload.Releaser: it records on the stable Deployment
// the restore patch, the stable revision and the controlling BatchRelease,
// and makes sure it is paused. Its strategy is left as it is.
func (r *Releaser) Claim(ctx context.Context, owner workload.Owner) error {
	d, err := r.get(ctx)
	if err != nil {
		return err
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return fmt.Errorf("deployment %s has spec.strategy.type Recreate, which sluice does not release; use RollingUpdate: %w",
			r.key, workload.ErrUnsupported)
	}
	annotations, labels, err := workload.ClaimMetadata(d, owner, func() (string, error) {
		// The in-place adapter's restore patch, on purpose: the webhook
		// folds a user's changes of the held fields into it, and users
		// apply it by hand the same way for both styles. A canary release
		// changes only spec.paused and sluice's marks; the timing and
		// strategy are recorded as they are.
		b, err := json.Marshal(deployment.NewRestorePatch(d))
		return string(b), err
	}, func() (string, error) {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			return "", fmt.Errorf("selector of deployment %s: %w", r.key, err)
		}
		sets := &appsv1.ReplicaSetList{}
		if err := r.client.List(ctx, sets, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return "", fmt.Errorf("listing replicasets of deployment %s: %w", r.key, err)
		}
		return deployment.StableRevision(d, sets.Items), nil
	})
	if err != nil {
		return err
	}
	if len(annotations) == 0 && len(labels) == 0 && d.Spec.Paused {
		return nil
	}
	return r.patch(ctx, d, map[string]any{
		"metadata": map[string]any{"annotations": annotations, "labels": labels},
		"spec":     map[string]any{"paused": true},
	})
}

// UpgradeBatch implements workload.Releaser: it creates the canary of the
// stable Deployment's new revision if needed (deleting canaries of other
// revisions), empty, and on later calls scales it up to desired pods, never
// down. It creates no
// canary when the stable already runs the revision (a rollback) or was
// handed back outside the release (restore patch applied, or unpaused):
// then the stable's own pods count.
func (r *Releaser) UpgradeBatch(ctx context.Context, desired int32) (bool, error) {
	s, err := r.stable.Status(ctx)
	if err != nil {
		return false, err
	}
	d, err := r.get(ctx)
	if err != nil {
		return false, err
	}
	if d.Generation != s.Generation {
		return false, nil // changed between the two reads: look again
	}
	want := Name(d.Name, s.UpdateRevision)
	set, err := r.canaries(ctx, r.client, want)
	if err != nil {
		return false, err
	}
	_, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	if s.InRollback || !held || !d.Spec.Paused {
		if err := r.deleteCanaries(ctx, set.all); err != nil {
			return false, err
		}
		return s.UpdatedReplicas >= desired, nil
	}
	if set.foreign {
		return false, fmt.Errorf("deployment %s/%s exists and is not a canary of %s (label %s): rename or delete it: %w",
			d.Namespace, want, d.Name, Label, workload.ErrUnsupported)
	}
	var stale []*appsv1.Deployment
	for _, c := range set.all {
		if c.Name != want || !ownedBy(c, d) {
			stale = append(stale, c)
		}
	}
	if err := r.deleteCanaries(ctx, stale); err != nil {
		return false, err
	}
	if desired <= 0 {
		return true, nil
	}
	cur := set.named(want)
	if cur != nil && (cur.DeletionTimestamp != nil || !ownedBy(cur, d)) {
		return false, nil // the old one with this name is going away
	}
	if cur == nil {
		// Created empty and scaled by the next call: desired was computed
		// from the caller's Status, which may be of an older revision than
		// the one just read (a new revision arriving mid-release must start
		// over at the first batch).
		return false, r.create(ctx, d, s.UpdateRevision)
	}
	if replicas(cur) < desired {
		b, err := precondition.MergePatch(map[string]any{"spec": map[string]any{"replicas": desired}}, cur.ResourceVersion)
		if err != nil {
			return false, err
		}
		if err := r.client.Patch(ctx, cur, client.RawPatch(types.MergePatchType, b), client.FieldOwner(rolloutsv1beta1.FieldManager)); err != nil {
			return false, fmt.Errorf("scaling canary deployment %s/%s to %d: %w", cur.Namespace, cur.Name, desired, err)
		}
	}
	return true, nil
}

// Finalize implements workload.Releaser. Without wait (rollback, disable,
// deletion) it deletes the canaries at once and hands the stable Deployment
// back. With wait (success) it hands the stable back first, waits until
// Kubernetes has updated all of its pods and they are available, and only
// then deletes the canaries, so capacity never drops.
func (r *Releaser) Finalize(ctx context.Context, wait bool) (bool, error) {
	if !wait {
		if err := r.deleteAll(ctx); err != nil {
			return false, err
		}
		return r.stable.Finalize(ctx, false)
	}
	done, err := r.stable.Finalize(ctx, true)
	if err != nil || !done {
		return false, err
	}
	return true, r.deleteAll(ctx)
}

// deleteAll deletes every canary of the stable Deployment, found by a
// list from the API server (Finalize must not miss one the cache lacks).
func (r *Releaser) deleteAll(ctx context.Context) error {
	set, err := r.canaries(ctx, r.reader, "")
	if err != nil {
		return err
	}
	return r.deleteCanaries(ctx, set.all)
}

// create creates the canary of revision for the stable Deployment d, with
// 0 replicas; one with that name appearing meanwhile is no error.
func (r *Releaser) create(ctx context.Context, d *appsv1.Deployment, revision string) error {
	c, err := newCanary(d, revision, r.meta)
	if err != nil {
		return err
	}
	err = r.client.Create(ctx, c, client.FieldOwner(rolloutsv1beta1.FieldManager))
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating canary deployment %s/%s: %w", c.Namespace, c.Name, err)
	}
	return nil
}

func (r *Releaser) get(ctx context.Context) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	if err := r.reader.Get(ctx, r.key, d); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deployment %s: %w", r.key, workload.ErrNotFound)
		}
		return nil, fmt.Errorf("reading deployment %s: %w", r.key, err)
	}
	return d, nil
}

// patch sends a merge patch of d guarded by the resourceVersion read; a
// conflict makes the caller plan again from a fresh read.
func (r *Releaser) patch(ctx context.Context, d *appsv1.Deployment, patch any) error {
	return precondition.Patch(ctx, r.client, d, patch, "deployment "+r.key.String())
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}
