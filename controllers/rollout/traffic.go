package rollout

import (
	"context"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/internal/killpoint"
	"github.com/sluice-dev/sluice/release/canary"
	"github.com/sluice-dev/sluice/release/progress"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/drive"
	"github.com/sluice-dev/sluice/traffic/providers"
	"github.com/sluice-dev/sluice/workload"
)

// entry is one trafficRoutings entry sluice drives.
type entry struct {
	target    traffic.Target
	services  traffic.Services
	providers []traffic.Provider
}

// activeEntries returns the trafficRoutings entries of ro that name routes
// this version drives; entries naming only other routes are left alone.
func activeEntries(ro *rolloutsv1beta1.Rollout) []rolloutsv1beta1.TrafficRoutingRef {
	var out []rolloutsv1beta1.TrafficRoutingRef
	for _, r := range ro.Spec.Strategy.TrafficRoutings() {
		if providers.Routes(r) {
			out = append(out, r)
		}
	}
	return out
}

// observeTraffic makes the Services and routes of the Rollout carry what
// its stored status wants (canary.Wanted), one layer at a time, and
// records in s.obs.Traffic what it did.
func (r *Reconciler) observeTraffic(ctx context.Context, s *scope) {
	refs := activeEntries(s.ro)
	if len(refs) == 0 {
		return
	}
	t := &canary.TrafficObservation{Grace: drive.Grace(refs)}
	s.obs.Traffic = t
	if p, ok := progress.Of(s.ro); ok && p.Common.StableRevision == "" && s.obs.Workload != nil {
		t.StableRevision = r.stableCandidate(ctx, s.ro.Namespace, s.obs.Workload)
	}
	want := canary.Wanted(s.ro, s.obs)
	t.Ensured = want
	if want.Idle() {
		t.Converged = true
		return
	}
	entries := r.entries(s.ro, refs)
	converged, err := ensure(ctx, entries, want, revisionLabel(s.obs.Workload), t)
	if err != nil {
		t.Err = err.Error()
		ctrl.LoggerFrom(ctx).Error(err, "Routing traffic")
		return
	}
	t.Converged = converged
	if !converged {
		ctrl.LoggerFrom(ctx).Info("Traffic changed", "change", t.Progress)
		killpoint.Reached(ctx, killpoint.TrafficChanged, s.ro.Namespace+"/"+s.ro.Name)
	}
}

func revisionLabel(w *workload.Status) string {
	if w == nil {
		return ""
	}
	return w.RevisionLabel
}

// trafficDeps is what the providers of the Rollout's routes are built with.
func (r *Reconciler) trafficDeps() providers.Deps {
	return providers.Deps{Client: r.Client, Reader: r.APIReader, Namespace: r.Namespace}
}

// entries builds the Services and providers of each entry. A provider
// that cannot be built reports why whenever it is used.
func (r *Reconciler) entries(ro *rolloutsv1beta1.Rollout, refs []rolloutsv1beta1.TrafficRoutingRef) []entry {
	disable := false
	if c := ro.Spec.Strategy.Canary; c != nil {
		disable = c.DisableGenerateCanaryService
	} else if b := ro.Spec.Strategy.BlueGreen; b != nil {
		disable = b.DisableGenerateCanaryService
	}
	owner := *metav1.NewControllerRef(ro, rolloutsv1beta1.GroupVersion.WithKind("Rollout"))
	out := make([]entry, 0, len(refs))
	strategy := "canary"
	if ro.Spec.Strategy.BlueGreen != nil {
		strategy = "blueGreen"
	}
	for _, ref := range refs {
		t := traffic.Target{Namespace: ro.Namespace, Rollout: ro.Name, Owner: owner, Ref: ref, DisableCanaryService: disable}
		ps, err := providers.New(r.trafficDeps(), t)
		if err != nil {
			ps = []traffic.Provider{failed{fmt.Errorf("spec.strategy.%s.trafficRoutings entry of Service %s: %w", strategy, ref.Service, err)}}
		}
		out = append(out, entry{target: t, services: providers.Services(r.trafficDeps(), t), providers: ps})
	}
	return out
}

// ensure makes the entries carry want, layer by layer: the stable
// Services, the canary Services, the routes, then the removal of the
// canary Services. A layer that had to change stops there (the rest waits
// for the grace period); it reports true once no layer had to change.
func ensure(ctx context.Context, entries []entry, want canary.Traffic, label string, t *canary.TrafficObservation) (bool, error) {
	step := func(pending rolloutsv1beta1.FinalisingStepType, progress string, do func(e *entry) (bool, error)) (bool, error) {
		all := true
		var errs []error
		for i := range entries {
			ok, err := do(&entries[i])
			if err != nil {
				errs = append(errs, err)
			}
			all = all && ok
		}
		if err := errors.Join(errs...); err != nil {
			return false, err
		}
		if !all {
			t.Pending, t.Progress = pending, progress
		}
		return all, nil
	}
	layers := []func() (bool, error){
		func() (bool, error) {
			switch want.Stable {
			case canary.StableNarrow:
				return step("", "narrowing the stable Service to revision "+want.StableRevision, func(e *entry) (bool, error) {
					return e.services.NarrowStable(ctx, label, want.StableRevision)
				})
			case canary.StableRestore:
				return step(rolloutsv1beta1.FinalisingStepRestoreStableService, "restoring the stable Service", func(e *entry) (bool, error) {
					return e.services.RestoreStable(ctx)
				})
			case canary.StableKeep:
			}
			return true, nil
		},
		func() (bool, error) {
			if want.Canary != canary.CanaryEnsure {
				return true, nil
			}
			return step(rolloutsv1beta1.FinalisingStepRouteTrafficToNew, "creating the canary Service for revision "+want.CanaryRevision, func(e *entry) (bool, error) {
				return e.services.EnsureCanary(ctx, label, want.CanaryRevision)
			})
		},
		func() (bool, error) {
			switch want.Routes {
			case canary.RoutesShift:
				return step(rolloutsv1beta1.FinalisingStepRouteTrafficToNew, "routing "+want.String(), func(e *entry) (bool, error) {
					return drive.Ensure(ctx, e.providers, drive.Desired(e.target, want.Weight, want.Matches, want.RequestHeaderModifier))
				})
			case canary.RoutesRestore:
				return step(rolloutsv1beta1.FinalisingStepRouteTrafficToStable, "restoring the routes", func(e *entry) (bool, error) {
					return drive.Finalize(ctx, e.providers)
				})
			case canary.RoutesKeep:
			}
			return true, nil
		},
		func() (bool, error) {
			if want.Canary != canary.CanaryRemove {
				return true, nil
			}
			return step(rolloutsv1beta1.FinalisingStepRemoveCanaryService, "removing the canary Service", func(e *entry) (bool, error) {
				return e.services.RemoveCanary(ctx)
			})
		},
	}
	for _, layer := range layers {
		if ok, err := layer(); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// stableCandidate is the revision label value most live pods of the
// workload run, other than the update revision: the stable revision of a
// release that has not recorded it yet.
func (r *Reconciler) stableCandidate(ctx context.Context, namespace string, ws *workload.Status) string {
	if ws.PodSelector == nil || ws.RevisionLabel == "" {
		return ""
	}
	sel, err := metav1.LabelSelectorAsSelector(ws.PodSelector)
	if err != nil {
		return ""
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing pods for the stable revision")
		return ""
	}
	count := map[string]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		v := p.Labels[ws.RevisionLabel]
		if p.DeletionTimestamp == nil && v != "" && v != ws.PodTemplateHash && v != ws.UpdateRevision {
			count[v]++
		}
	}
	revs := make([]string, 0, len(count))
	for v := range count {
		revs = append(revs, v)
	}
	sort.Slice(revs, func(i, j int) bool {
		if count[revs[i]] != count[revs[j]] {
			return count[revs[i]] > count[revs[j]]
		}
		return revs[i] < revs[j]
	})
	if len(revs) == 0 {
		return ""
	}
	return revs[0]
}

// failed is a provider that could not be built: every use reports why.
type failed struct{ err error }

var _ traffic.Provider = failed{}

// EnsureRoutes implements traffic.Provider.
func (f failed) EnsureRoutes(context.Context, traffic.Desired) (bool, error) { return false, f.err }

// Finalize implements traffic.Provider.
func (f failed) Finalize(context.Context) (bool, error) { return false, f.err }
