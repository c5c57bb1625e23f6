package gitops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
)

// repositoryIndex indexes GitGates by their GitHub repository, lower case,
// so that a webhook delivery finds its gates without listing them all.
const repositoryIndex = "spec.github.repository"

// indexRepository is the value of repositoryIndex for a GitGate.
func indexRepository(obj client.Object) []string {
	gg, ok := obj.(*gitopsv1alpha1.GitGate)
	if !ok || repositoryOf(gg) == "" {
		return nil
	}
	return []string{strings.ToLower(repositoryOf(gg))}
}

// gatesOfRepository lists, from the cache, the GitGates bound to the GitHub
// repository "owner/name".
func (r *Reconciler) gatesOfRepository(ctx context.Context, repository string) ([]gitopsv1alpha1.GitGate, error) {
	list := &gitopsv1alpha1.GitGateList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{repositoryIndex: strings.ToLower(repository)}); err != nil {
		return nil, fmt.Errorf("listing gitgates of %s: %w", repository, err)
	}
	return list.Items, nil
}

// Hint asks for the GitGates bound to the GitHub repository "owner/name" to
// be read again now. The webhook receiver calls it for every authentic,
// first-seen delivery, on whichever replica received it: the hint is written
// through the API, as the annotation reconcile.fluxcd.io/requestedAt (the
// way Flux's objects are asked to reconcile) on each gate, which the
// leader's controller watches, so no delivery waits for the poll because a
// standby replica took it. The hint is only a hint: the gate re-reads
// everything from Git and GitHub. An error means a gate was not told; the
// receiver then answers GitHub 503, so the delivery shows as failed and can
// be redelivered.
func (r *Reconciler) Hint(ctx context.Context, repository string) error {
	gates, err := r.gatesOfRepository(ctx, repository)
	if err != nil {
		return err
	}
	var errs []error
	for i := range gates {
		if err := r.requestReconcile(ctx, &gates[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// requestReconcile writes a new value into gg's
// reconcile.fluxcd.io/requestedAt. The write depends on nothing read (any
// new value asks for a reconcile), so it carries no precondition.
func (r *Reconciler) requestReconcile(ctx context.Context, gg *gitopsv1alpha1.GitGate) error {
	value := r.hints.next(r.Clock.Now())
	b, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{meta.ReconcileRequestAnnotation: value}}})
	if err != nil {
		return err
	}
	target := &gitopsv1alpha1.GitGate{}
	target.Namespace, target.Name = gg.Namespace, gg.Name
	if err := r.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, b), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("asking gitgate %s/%s to reconcile: %w", gg.Namespace, gg.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Asked a gitgate to reconcile", "gitgate", client.ObjectKeyFromObject(gg), "requestedAt", value)
	return nil
}

// hintClock hands out the values of reconcile.fluxcd.io/requestedAt: the
// time, moved on by a nanosecond when two deliveries come within one tick,
// so that every hint changes the annotation.
type hintClock struct {
	mu   sync.Mutex
	last time.Time
}

func (c *hintClock) next(now time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	now = now.UTC()
	if !now.After(c.last) {
		now = c.last.Add(time.Nanosecond)
	}
	c.last = now
	return now.Format(time.RFC3339Nano)
}
