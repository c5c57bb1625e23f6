// Package webhookrules runs the controller that keeps the rules of sluice's
// workload webhook in line with the StatefulSet-like custom kinds Rollouts
// name: once a Rollout names such a kind and its CRD qualifies (labelled
// rollouts.kruise.io/workload-type: statefulset, with a partition in its
// schema), updates of that kind are held like a StatefulSet's, without a
// restart. A kind no Rollout names any more, or whose CRD stops
// qualifying, loses its rule.
package webhookrules

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/webhook/registration"
	"github.com/sluice-dev/sluice/workload/lookup"
	"github.com/sluice-dev/sluice/workload/partition"
)

// WorkloadWebhook is the name of the workload webhook in the mutating
// webhook configuration.
const WorkloadWebhook = "mworkload.sluice.dev"

// fieldManager owns the rules this controller writes.
const fieldManager = "sluice-webhook-rules"

// Reconciler keeps the rules of the workload webhook of one mutating
// webhook configuration.
type Reconciler struct {
	// Client lists Rollouts from the cache and writes the configuration.
	Client client.Client
	// APIReader reads CRDs and the configuration, uncached.
	APIReader client.Reader
	// ConfigName names the MutatingWebhookConfiguration.
	ConfigName string
}

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts,verbs=get;list;watch

// SetupWithManager registers the controller: any change of a Rollout, of a
// CRD's labels or of the configuration recomputes the rules.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: r.ConfigName}}}
	})
	crds := &metav1.PartialObjectMetadata{}
	crds.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return ctrl.NewControllerManagedBy(mgr).
		Named("webhookrules").
		Watches(&rolloutsv1beta1.Rollout{}, one).
		Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, one, builder.WithPredicates(
			predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == r.ConfigName }))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(crds), one)).
		Complete(r)
}

// Reconcile sets the workload webhook's rules to the static ones plus one
// per qualifying custom kind.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	extra, err := r.customRules(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: r.ConfigName}, cfg); err != nil {
		if apierrors.IsNotFound(err) {
			// Not registered yet: sluice registers it once its webhook
			// server listens.
			return reconcile.Result{RequeueAfter: time.Second}, nil
		}
		return reconcile.Result{}, fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", r.ConfigName, err)
	}
	want := registration.WorkloadRules(extra...)
	for i := range cfg.Webhooks {
		wh := &cfg.Webhooks[i]
		if wh.Name != WorkloadWebhook {
			continue
		}
		if equality.Semantic.DeepEqual(wh.Rules, want) {
			return reconcile.Result{}, nil
		}
		wh.Rules = want
		if err := r.Client.Update(ctx, cfg, client.FieldOwner(fieldManager)); err != nil {
			return reconcile.Result{}, fmt.Errorf("updating the rules of %s: %w", WorkloadWebhook, err)
		}
		log.FromContext(ctx).Info("Updated the workload webhook's rules", "customKinds", len(extra))
		return reconcile.Result{}, nil
	}
	return reconcile.Result{RequeueAfter: time.Second}, nil
}

// customRules returns an UPDATE rule for each StatefulSet-like custom kind
// a Rollout names, in a stable order.
func (r *Reconciler) customRules(ctx context.Context) ([]admissionregistrationv1.RuleWithOperations, error) {
	list := &rolloutsv1beta1.RolloutList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing Rollouts: %w", err)
	}
	kinds := map[schema.GroupVersionKind]bool{}
	for i := range list.Items {
		ref := list.Items[i].Spec.WorkloadRef
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		if !lookup.Known(ref) && partition.IsCustomCandidate(gvk.GroupKind()) {
			kinds[gvk] = true
		}
	}
	resources := map[schema.GroupResource]bool{}
	for gvk := range kinds {
		crd, err := partition.FindCRD(ctx, r.APIReader, r.Client.RESTMapper(), gvk.GroupKind())
		if errors.Is(err, partition.ErrNotStatefulSetLike) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if why := partition.CheckCRD(crd, gvk.Version); why != "" {
			log.FromContext(ctx).Info("Not holding updates of a kind a Rollout names", "kind", gvk.String(), "why", why)
			continue
		}
		resources[schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural}] = true
	}
	return rulesFor(resources), nil
}

// rulesFor turns custom resources into webhook rules, sorted by group and
// resource.
func rulesFor(resources map[schema.GroupResource]bool) []admissionregistrationv1.RuleWithOperations {
	sorted := make([]schema.GroupResource, 0, len(resources))
	for gr := range resources {
		sorted = append(sorted, gr)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].String() < sorted[j].String() })
	namespaced := admissionregistrationv1.NamespacedScope
	rules := make([]admissionregistrationv1.RuleWithOperations, 0, len(sorted))
	for _, gr := range sorted {
		rules = append(rules, admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{gr.Group},
				APIVersions: []string{"*"},
				Resources:   []string{gr.Resource},
				Scope:       &namespaced,
			},
		})
	}
	return rules
}
