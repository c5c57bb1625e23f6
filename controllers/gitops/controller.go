// Package gitops reconciles GitGates: for each Rollout a GitGate binds, it
// finds the commit being released and the pull request that brought it,
// applies the approvals, full promotions and rollbacks given by pull-request
// labels, commit trailers and revert commits (through the same recorded path
// as kubectl sluice approve), and reports the release as a commit status.
//
// Reconcile only orchestrates; Decide is the pure, table-tested decision.
// The SCM is best effort: its errors and rate limits delay statuses and
// approvals, never a Rollout's own steps.
package gitops

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/scm"
)

// FieldManager is the field manager of sluice's writes for GitGates.
const FieldManager = "sluice-gitops"

// DefaultInterval is how often a GitGate is read when its spec says nothing.
const DefaultInterval = time.Minute

// Reconciler reconciles GitGates.
type Reconciler struct {
	// Client reads and writes through the manager's cache.
	Client client.Client
	// APIReader reads uncached: secrets, workloads, GitOps objects.
	APIReader client.Reader
	// Recorder emits events.
	Recorder events.EventRecorder
	// Clock tells time.
	Clock clock.PassiveClock
	// AllowInsecureHTTP lets GitGates read Git over plain HTTP (tests).
	AllowInsecureHTTP bool
	// SCMHosts is the table of SCM hosts a GitGate can name; nil takes
	// gitops/scm/hosts.Default.
	SCMHosts scm.Factories
	// SCMObserver is told about every request to the SCM (metrics); nil
	// tells nobody.
	SCMObserver scm.Observer

	cache clientCache
	hints hintClock
	// kicks hands the gates of a delivery this replica received to its own
	// controller, and hinted counts them per gate (kick, hints.go); elected
	// is closed once this replica leads.
	kicks   chan event.TypedGenericEvent[*gitopsv1alpha1.GitGate]
	hinted  hintCount
	elected <-chan struct{}
	secrets secretMemo
	seenMu  sync.Mutex
	seen    map[string]bool
}

// +kubebuilder:rbac:groups=gitops.sluice.dev,resources=gitgates,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=gitops.sluice.dev,resources=gitgates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=statefulsets;daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets;statefulsets;daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=kustomize.toolkit.fluxcd.io,resources=kustomizations,verbs=get
// +kubebuilder:rbac:groups=argoproj.io,resources=applications,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller. A webhook hint (see Hint) is an
// annotation change, which the GitGate watch lets through.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &gitopsv1alpha1.GitGate{}, repositoryIndex, indexRepository); err != nil {
		return fmt.Errorf("indexing gitgates by repository: %w", err)
	}
	r.kicks = make(chan event.TypedGenericEvent[*gitopsv1alpha1.GitGate], kicksBuffer)
	r.elected = mgr.Elected()
	return ctrl.NewControllerManagedBy(mgr).
		Named("gitgate").
		For(&gitopsv1alpha1.GitGate{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&rolloutsv1beta1.Rollout{}, handler.EnqueueRequestsFromMapFunc(r.gatesOfRollout)).
		WatchesRawSource(source.Channel(r.kicks, &handler.TypedEnqueueRequestForObject[*gitopsv1alpha1.GitGate]{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
}

// Reconcile reads one GitGate's branch, pull requests and bound Rollouts and
// acts on them, in phases. The status is computed from what the phases left
// in the scope, and from the error that ended them, and patched once, in a
// deferred step: an error in any phase reaches the status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	// The hints handed over before the gate is read are this reconcile's.
	hints := r.hinted.of(req.NamespacedName)
	// Uncached: the status holds the approvals applied, and a stale copy
	// would forget the last ones.
	gg := &gitopsv1alpha1.GitGate{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, gg); err != nil {
		if apierrors.IsNotFound(err) {
			r.cache.drop(req.NamespacedName)
			r.hinted.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	s := newScope(gg)
	s.hints = hints
	defer func() { result, err = r.finish(ctx, s, result, err) }()
	for _, phase := range []func(context.Context, *scope) (ctrl.Result, error){
		r.reconcileSuspend, r.reconcileSource, r.reconcileRollouts,
	} {
		if result, err = phase(ctx, s); err != nil || s.halted {
			return result, err
		}
	}
	return result, nil
}

// finish computes the gate's conditions from the scope and the error that
// ended the phases, and patches the status once. The generation counts as
// observed only when the phases came to a verdict on it: they succeeded,
// the gate is suspended, or its configuration is wrong until the spec or a
// secret changes (Stalled). A failure retrying can fix (Git or the API
// server unreachable) is reported and retried at the interval.
func (r *Reconciler) finish(ctx context.Context, s *scope, result ctrl.Result, err error) (ctrl.Result, error) {
	gg := s.gg
	var cfg *configError
	var failed *phaseError
	switch {
	case errors.As(err, &cfg):
		setStalled(gg, cfg.reason, cfg.Error())
		r.Recorder.Eventf(gg, nil, corev1.EventTypeWarning, cfg.reason, "Reconcile", "%s", cfg.Error())
		gg.Status.ObservedGeneration = gg.Generation
		result, err = ctrl.Result{RequeueAfter: s.interval}, nil
	case errors.As(err, &failed):
		setFailed(gg, failed.reason, failed.Error())
		ctrl.LoggerFrom(ctx).Error(failed.err, "Reconciling the gate", "reason", failed.reason)
		result, err = ctrl.Result{RequeueAfter: s.interval}, nil
	case err != nil:
		setFailed(gg, "ReconcileFailed", err.Error())
	case s.halted:
		setReady(gg, metav1.ConditionFalse, meta.SuspendedReason, "the gate is suspended")
		gg.Status.ObservedGeneration = gg.Generation
	default:
		setReady(gg, metav1.ConditionTrue, meta.SucceededReason, s.readyMessage())
		gg.Status.ObservedGeneration = gg.Generation
	}
	setCommitStatuses(gg)
	if perr := r.patchStatus(ctx, s.base, gg); perr != nil {
		return result, errors.Join(err, perr)
	}
	return result, err
}

// patchStatus writes gg's status if it changed.
func (r *Reconciler) patchStatus(ctx context.Context, base, gg *gitopsv1alpha1.GitGate) error {
	if equality.Semantic.DeepEqual(base.Status, gg.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, gg, client.MergeFrom(base), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("patching gitgate status: %w", err)
	}
	return nil
}

// emitOnce records a warning event once per set of objects, reason and
// message. The objects are part of the key: the same message (a label on
// pull request #1 refused) is news for each gate and Rollout it concerns.
func (r *Reconciler) emitOnce(objs []client.Object, reason, message string) {
	key := reason + "\x00" + message
	for _, o := range objs {
		key += "\x00" + string(o.GetUID()) + "/" + o.GetNamespace() + "/" + o.GetName()
	}
	r.seenMu.Lock()
	if r.seen == nil || len(r.seen) > 4096 {
		r.seen = map[string]bool{}
	}
	dup := r.seen[key]
	r.seen[key] = true
	r.seenMu.Unlock()
	if dup {
		return
	}
	for _, o := range objs {
		r.Recorder.Eventf(o, nil, corev1.EventTypeWarning, reason, "Reject", "%s", message)
	}
}

// configError is a GitGate configuration that retrying cannot fix until
// the spec or a secret changes.
type configError struct {
	reason string
	err    error
}

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// phaseError is a failure of a phase that retrying may fix; reason is the
// Ready condition's reason.
type phaseError struct {
	reason string
	err    error
}

func (e *phaseError) Error() string { return e.err.Error() }
func (e *phaseError) Unwrap() error { return e.err }
