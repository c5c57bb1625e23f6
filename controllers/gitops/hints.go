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
	"sigs.k8s.io/controller-runtime/pkg/event"

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
// repository "owner/name". They are the cache's own copies: callers only
// read them.
func (r *Reconciler) gatesOfRepository(ctx context.Context, repository string) ([]gitopsv1alpha1.GitGate, error) {
	list := &gitopsv1alpha1.GitGateList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{repositoryIndex: strings.ToLower(repository)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing gitgates of %s: %w", repository, err)
	}
	return list.Items, nil
}

// Hint asks for the GitGates bound to the GitHub repository "owner/name" to
// be read again now. The webhook receiver calls it for every authentic,
// first-seen delivery, on whichever replica received it. The leader hands
// each gate to its own controller at once (kick). A standby writes the hint
// through the API, as the annotation reconcile.fluxcd.io/requestedAt (the
// way Flux's objects are asked to reconcile) on each gate, which the
// leader's controller watches, so no delivery waits for the poll because a
// standby replica took it; so does the leader when its controller cannot
// take a kick at once. The hint is only a hint: the gate re-reads everything
// from Git and GitHub. An error means a gate was not told; the receiver
// then answers GitHub 503, so the delivery shows as failed and can be
// redelivered.
//
// A leader that loses its lease mid-way drops what it was handed, and the
// manager stops; the new leader reconciles every gate when it starts, so
// no delivery's news is lost.
func (r *Reconciler) Hint(ctx context.Context, repository string) error {
	gates, err := r.gatesOfRepository(ctx, repository)
	if err != nil {
		return err
	}
	var errs []error
	for i := range gates {
		if r.leading() && r.kick(&gates[i]) {
			continue
		}
		if err := r.requestReconcile(ctx, &gates[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// leading tells whether this replica leads (or runs without leader
// election): its controllers run.
func (r *Reconciler) leading() bool {
	if r.elected == nil {
		return false
	}
	select {
	case <-r.elected:
		return true
	default:
		return false
	}
}

// kicksBuffer is how many gates handed to the controller directly may wait
// for it; past that a kick is refused and the hint goes through the API.
const kicksBuffer = 256

// kick hands gg to this replica's own controller: the reconcile starts
// without the round trip of an annotation through the API server and the
// watch. It never blocks; false says the controller's buffer is full. The
// gate's hint count moves on either way, so that a reconcile of the gate
// busy posting leaves its posts for the one that handles this hint
// (superseded).
func (r *Reconciler) kick(gg *gitopsv1alpha1.GitGate) bool {
	if r.kicks == nil {
		return false
	}
	target := &gitopsv1alpha1.GitGate{}
	target.Namespace, target.Name = gg.Namespace, gg.Name
	r.hinted.bump(client.ObjectKeyFromObject(gg))
	select {
	case r.kicks <- event.TypedGenericEvent[*gitopsv1alpha1.GitGate]{Object: target}:
		return true
	default:
		return false
	}
}

// hintCount counts, per gate, the hints this replica handed to its own
// controller.
type hintCount struct {
	mu sync.Mutex
	n  map[client.ObjectKey]uint64
}

func (c *hintCount) bump(k client.ObjectKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[client.ObjectKey]uint64{}
	}
	c.n[k]++
}

func (c *hintCount) of(k client.ObjectKey) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

func (c *hintCount) forget(k client.ObjectKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.n, k)
}

// superseded tells whether a hint newer than the one this reconcile
// handles reached the gate (its reconcile.fluxcd.io/requestedAt changed in
// the cache, or this replica handed its controller a delivery for it
// since): the
// reconcile then leaves the commit statuses and pull-request comments it has
// not posted yet for the next one, which starts at once, so that a delivery
// never waits for the posts of the reconcile before it. Checked at most
// every supersededEvery, from the cache.
func (r *Reconciler) superseded(ctx context.Context, s *scope) bool {
	now := r.Clock.Now()
	if now.Sub(s.checkedAt) < supersededEvery {
		return false
	}
	s.checkedAt = now
	if r.hinted.of(client.ObjectKeyFromObject(s.gg)) != s.hints {
		return true
	}
	// Shared with the cache, not copied: only its annotations are read.
	cur := &gitopsv1alpha1.GitGate{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(s.gg), cur, client.UnsafeDisableDeepCopy); err != nil {
		return false
	}
	v, _ := meta.ReconcileAnnotationValue(cur.GetAnnotations())
	return v != s.requestedAt
}

// supersededEvery is how often a reconcile posting its statuses looks for
// a newer hint.
const supersededEvery = 20 * time.Millisecond

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
