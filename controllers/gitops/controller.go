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
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
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
	"github.com/sluice-dev/sluice/gitops/scm/github"
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
	// NewSCM builds the SCM client of a GitGate; nil builds a GitHub client.
	NewSCM func(github.Options) (SCM, error)
	// SCMObserver is told about every request to the SCM (metrics); nil
	// tells nobody.
	SCMObserver scm.Observer

	cache    clientCache
	triggers chan event.GenericEvent
	seenMu   sync.Mutex
	seen     map[string]bool
}

// +kubebuilder:rbac:groups=gitops.sluice.dev,resources=gitgates,verbs=get;list;watch
// +kubebuilder:rbac:groups=gitops.sluice.dev,resources=gitgates/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=statefulsets;daemonsets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=clonesets;statefulsets;daemonsets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=kustomize.toolkit.fluxcd.io,resources=kustomizations,verbs=get
// +kubebuilder:rbac:groups=argoproj.io,resources=applications,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.triggers = make(chan event.GenericEvent, 64)
	return ctrl.NewControllerManagedBy(mgr).
		Named("gitgate").
		For(&gitopsv1alpha1.GitGate{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&rolloutsv1beta1.Rollout{}, handler.EnqueueRequestsFromMapFunc(r.gatesOfRollout)).
		WatchesRawSource(source.Channel(r.triggers, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
}

// Hint asks for the GitGates bound to the GitHub repository "owner/name" to
// be read again now. The webhook receiver calls it (through its Trigger) for
// every authentic, first-seen delivery; it is a hint only (the gates re-read
// everything from Git and GitHub) and never blocks: when the queue of hints
// is full, the poll covers it.
func (r *Reconciler) Hint(ctx context.Context, repository string) {
	list := &gitopsv1alpha1.GitGateList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing gitgates for a webhook delivery")
		return
	}
	for i := range list.Items {
		if !strings.EqualFold(list.Items[i].Spec.GitHub.Repository, repository) {
			continue
		}
		select {
		case r.triggers <- event.GenericEvent{Object: &list.Items[i]}:
		default:
		}
	}
}

// SecretsFor returns the webhook secrets of the GitGates bound to the
// GitHub repository "owner/name" (key "token" of spec.webhookSecretRef), for
// the receiver to verify a delivery's signature with.
func (r *Reconciler) SecretsFor(ctx context.Context, repository string) ([][]byte, error) {
	list := &gitopsv1alpha1.GitGateList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing gitgates: %w", err)
	}
	var out [][]byte
	for i := range list.Items {
		gg := &list.Items[i]
		if !strings.EqualFold(gg.Spec.GitHub.Repository, repository) || gg.Spec.WebhookSecretRef == nil || gg.Spec.Suspend {
			continue
		}
		s, err := r.secret(ctx, gg.Namespace, gg.Spec.WebhookSecretRef)
		if err != nil {
			continue
		}
		if v := s.Data["token"]; len(v) > 0 {
			out = append(out, v)
		}
	}
	return out, nil
}

// Reconcile reads one GitGate's branch, pull requests and bound Rollouts and
// acts on them.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	// Uncached: the status holds the approvals applied, and a stale copy
	// would forget the last ones.
	gg := &gitopsv1alpha1.GitGate{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, gg); err != nil {
		if apierrors.IsNotFound(err) {
			r.cache.drop(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := gg.DeepCopy()
	interval := gg.Spec.Interval.Duration
	if interval <= 0 {
		interval = DefaultInterval
	}
	if v, ok := meta.ReconcileAnnotationValue(gg.GetAnnotations()); ok {
		gg.Status.LastHandledReconcileAt = v
	}
	if gg.Spec.Suspend {
		setReady(gg, metav1.ConditionFalse, meta.SuspendedReason, "the gate is suspended")
		return ctrl.Result{}, r.patchStatus(ctx, base, gg)
	}
	s, err := r.gather(ctx, gg)
	if err != nil {
		var cfg *configError
		if errors.As(err, &cfg) {
			setStalled(gg, cfg.reason, cfg.Error())
			r.Recorder.Eventf(gg, nil, corev1.EventTypeWarning, cfg.reason, "Reconcile", "%s", cfg.Error())
			return ctrl.Result{RequeueAfter: interval}, r.patchStatus(ctx, base, gg)
		}
		setFailed(gg, "GitFetchFailed", err.Error())
		log.Error(err, "Reading the gate's branch")
		return ctrl.Result{RequeueAfter: interval}, r.patchStatus(ctx, base, gg)
	}
	results := make([]gitopsv1alpha1.BoundRollout, 0, len(s.rollouts))
	for i := range s.rollouts {
		results = append(results, r.reconcileRollout(ctx, s, &s.rollouts[i]))
	}
	gg.Status.Rollouts = results
	gg.Status.BoundRollouts = int32(len(results)) //nolint:gosec // bounded by the list
	gg.Status.Head = s.head
	msg := fmt.Sprintf("%d rollout(s) bound at %s", len(results), short(s.head))
	if !s.retryAt.IsZero() {
		msg += "; GitHub asks to wait until " + s.retryAt.UTC().Format(time.RFC3339)
	}
	setReady(gg, metav1.ConditionTrue, meta.SucceededReason, msg)
	after := interval
	if !s.retryAt.IsZero() {
		if d := s.retryAt.Sub(r.Clock.Now()) + time.Second; d > 0 && d < after {
			after = d
		}
	}
	return ctrl.Result{RequeueAfter: after}, r.patchStatus(ctx, base, gg)
}

// patchStatus writes gg's status if it changed.
func (r *Reconciler) patchStatus(ctx context.Context, base, gg *gitopsv1alpha1.GitGate) error {
	gg.Status.ObservedGeneration = gg.Generation
	if err := r.Client.Status().Patch(ctx, gg, client.MergeFrom(base), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("patching gitgate status: %w", err)
	}
	return nil
}

// emitOnce records a warning event once per gate and message.
func (r *Reconciler) emitOnce(objs []client.Object, reason, message string) {
	key := reason + "\x00" + message
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
