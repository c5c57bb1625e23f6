// Package webhookrules runs the controller that has sluice's workload
// webhook follow the StatefulSet-like custom kinds Rollouts name: once a
// Rollout names such a kind and its CRD qualifies (labelled
// rollouts.kruise.io/workload-type: statefulset, with a partition in its
// schema), updates of that kind are held like a StatefulSet's, without a
// restart. A kind no Rollout names any more, or whose CRD stops
// qualifying, loses its rule.
//
// The rules live in a MutatingWebhookConfiguration of sluice's own
// (OwnConfigName), never in the registered one: installed, Helm owns that
// and `helm upgrade` would revert any rule written into it. sluice's own
// configuration copies how the API server reaches the registered workload
// webhook, is labelled app.kubernetes.io/managed-by: sluice, is owned by
// the registered configuration (so uninstalling sluice garbage-collects
// it) and is deleted when no custom kind needs a rule.
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
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload/kinds"
	"github.com/sluice-dev/sluice/workload/partition"
)

// WorkloadWebhook is the name of the workload webhook in the registered
// mutating webhook configuration.
const WorkloadWebhook = "mworkload.sluice.dev"

// CustomWorkloadWebhook is the name of the webhook, in sluice's own
// configuration, that holds the custom kinds' updates (served by the
// workload webhook's handler).
const CustomWorkloadWebhook = "mcustomworkload.sluice.dev"

// fieldManager owns sluice's own configuration.
const fieldManager = "sluice-webhook-rules"

// managedByLabel marks the configuration sluice creates and deletes.
const managedByLabel = "app.kubernetes.io/managed-by"

// OwnConfigName is the name of sluice's own MutatingWebhookConfiguration
// beside the registered one named registered.
func OwnConfigName(registered string) string {
	return registered + "-custom-kinds"
}

// Reconciler keeps sluice's own webhook configuration in line with the
// custom kinds Rollouts name.
type Reconciler struct {
	// Client lists Rollouts from the cache and writes sluice's own
	// configuration.
	Client client.Client
	// APIReader reads CRDs and the configurations, uncached.
	APIReader client.Reader
	// ConfigName names the registered MutatingWebhookConfiguration (the
	// chart's, or the one a local manager registers), whose workload
	// webhook sluice's own configuration mirrors.
	ConfigName string
}

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=rollouts.kruise.io,resources=rollouts,verbs=get;list;watch

// SetupWithManager registers the controller: a Rollout created, deleted or
// releasing another kind, a CRD's change or a change of either
// configuration recomputes the rules.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []ctrl.Request {
		return []ctrl.Request{{NamespacedName: client.ObjectKey{Name: r.ConfigName}}}
	})
	crds := &metav1.PartialObjectMetadata{}
	crds.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	own := OwnConfigName(r.ConfigName)
	return ctrl.NewControllerManagedBy(mgr).
		Named("webhookrules").
		Watches(&rolloutsv1beta1.Rollout{}, one, builder.WithPredicates(workloadKindChanged())).
		Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, one, builder.WithPredicates(
			predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == r.ConfigName || o.GetName() == own }))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(crds), one)).
		Complete(r)
}

// workloadKindChanged passes a Rollout's creation and deletion, and an
// update only when the kind it releases changed: the rules depend on
// nothing else of a Rollout, and a release updates its Rollout's status
// dozens of times.
func workloadKindChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*rolloutsv1beta1.Rollout)
		after, ok2 := e.ObjectNew.(*rolloutsv1beta1.Rollout)
		if !ok1 || !ok2 {
			return true
		}
		return before.Spec.WorkloadRef.APIVersion != after.Spec.WorkloadRef.APIVersion ||
			before.Spec.WorkloadRef.Kind != after.Spec.WorkloadRef.Kind
	}}
}

// Reconcile writes sluice's own configuration with one rule per qualifying
// custom kind, or deletes it when there is none.
func (r *Reconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	extra, err := r.customRules(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	registered := &admissionregistrationv1.MutatingWebhookConfiguration{}
	err = r.APIReader.Get(ctx, client.ObjectKey{Name: r.ConfigName}, registered)
	switch {
	case apierrors.IsNotFound(err):
		// Not registered yet (a local manager registers it once its webhook
		// server listens), or uninstalled: no rule may outlive it.
		if err := r.deleteOwn(ctx); err != nil {
			return ctrl.Result{}, err
		}
		if len(extra) == 0 {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", r.ConfigName, err)
	}
	if len(extra) == 0 {
		return ctrl.Result{}, r.deleteOwn(ctx)
	}
	want, ok := ownConfig(registered, extra)
	if !ok {
		log.Info("The registered webhook configuration has no workload webhook; not holding custom kinds", "configuration", r.ConfigName, "webhook", WorkloadWebhook)
		return ctrl.Result{RequeueAfter: time.Second}, r.deleteOwn(ctx)
	}
	cur := &admissionregistrationv1.MutatingWebhookConfiguration{}
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Name: want.Name}, cur); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", want.Name, err)
	case equality.Semantic.DeepEqual(cur.Webhooks, want.Webhooks) && equality.Semantic.DeepEqual(cur.OwnerReferences, want.OwnerReferences) &&
		cur.Labels[managedByLabel] == "sluice":
		return ctrl.Result{}, nil
	}
	// sluice owns every field of its own configuration: apply it whole.
	if err := r.Client.Patch(ctx, want, client.Apply, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil { //nolint:staticcheck // a typed object sluice owns whole
		return ctrl.Result{}, fmt.Errorf("applying MutatingWebhookConfiguration %s: %w", want.Name, err)
	}
	log.Info("Updated the custom kinds' webhook rules", "configuration", want.Name, "customKinds", len(extra))
	return ctrl.Result{}, nil
}

// ownConfig builds sluice's own configuration beside registered: one
// webhook with the rules, reaching the registered workload webhook the
// same way (client configuration, failure policy, selectors, timeout). ok
// is false when registered has no workload webhook.
func ownConfig(registered *admissionregistrationv1.MutatingWebhookConfiguration, rules []admissionregistrationv1.RuleWithOperations) (*admissionregistrationv1.MutatingWebhookConfiguration, bool) {
	var from *admissionregistrationv1.MutatingWebhook
	for i := range registered.Webhooks {
		if registered.Webhooks[i].Name == WorkloadWebhook {
			from = &registered.Webhooks[i]
		}
	}
	if from == nil {
		return nil, false
	}
	wh := *from.DeepCopy()
	wh.Name, wh.Rules = CustomWorkloadWebhook, rules
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   OwnConfigName(registered.Name),
			Labels: map[string]string{"app.kubernetes.io/name": "sluice", managedByLabel: "sluice"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "MutatingWebhookConfiguration",
				Name: registered.Name, UID: registered.UID,
			}},
		},
		Webhooks: []admissionregistrationv1.MutatingWebhook{wh},
	}, true
}

// deleteOwn deletes sluice's own configuration, if there is one and sluice
// made it.
func (r *Reconciler) deleteOwn(ctx context.Context) error {
	cur := &admissionregistrationv1.MutatingWebhookConfiguration{}
	switch err := r.APIReader.Get(ctx, client.ObjectKey{Name: OwnConfigName(r.ConfigName)}, cur); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", OwnConfigName(r.ConfigName), err)
	case cur.Labels[managedByLabel] != "sluice":
		return nil // not sluice's: leave it
	}
	err := r.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting MutatingWebhookConfiguration %s: %w", cur.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Removed the custom kinds' webhook rules: no Rollout names a custom kind", "configuration", cur.Name)
	return nil
}

// customRules returns an UPDATE rule for each StatefulSet-like custom kind
// a Rollout names, in a stable order.
func (r *Reconciler) customRules(ctx context.Context) ([]admissionregistrationv1.RuleWithOperations, error) {
	list := &rolloutsv1beta1.RolloutList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing Rollouts: %w", err)
	}
	custom := map[schema.GroupVersionKind]bool{}
	for i := range list.Items {
		ref := list.Items[i].Spec.WorkloadRef
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		if kinds.IsCustomCandidate(gvk.GroupKind()) {
			custom[gvk] = true
		}
	}
	resources := map[schema.GroupResource]bool{}
	for gvk := range custom {
		crd, err := partition.FindCRD(ctx, r.APIReader, r.Client.RESTMapper(), gvk.GroupKind())
		if errors.Is(err, partition.ErrNotStatefulSetLike) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if why := partition.CheckCRD(crd, gvk.Version); why != "" {
			ctrl.LoggerFrom(ctx).Info("Not holding updates of a kind a Rollout names", "kind", gvk.String(), "why", why)
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
