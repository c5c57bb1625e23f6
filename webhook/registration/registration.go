// Package registration builds sluice's admission webhook configurations.
// They are defined once, here, for every way sluice runs: a local process
// registers them with URLs on 127.0.0.1, the Helm chart renders them with a
// Service (config/webhook/manifests.yaml is generated from this package).
package registration

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	metricgatewebhook "github.com/sluice-dev/sluice/webhook/metricgate"
	rolloutwebhook "github.com/sluice-dev/sluice/webhook/rollout"
	workloadwebhook "github.com/sluice-dev/sluice/webhook/workload"
	"github.com/sluice-dev/sluice/workload/kinds"
)

// Options shape the configurations.
type Options struct {
	// Name of both configurations.
	Name string
	// ClientConfig says how the API server reaches the webhook at path.
	ClientConfig func(path string) admissionregistrationv1.WebhookClientConfig
	// WorkloadFailurePolicy applies to the workload webhook. Ignore (the
	// default) lets workload updates through unheld when sluice is down;
	// Fail blocks them.
	WorkloadFailurePolicy admissionregistrationv1.FailurePolicyType
	// ExtraWorkloadRules add StatefulSet-like custom kinds to the workload
	// webhook.
	ExtraWorkloadRules []admissionregistrationv1.RuleWithOperations
}

// WorkloadRules are the rules of the workload webhook: updates of the
// kinds of the workload kinds table (workload/kinds), then extra (custom)
// ones.
func WorkloadRules(extra ...admissionregistrationv1.RuleWithOperations) []admissionregistrationv1.RuleWithOperations {
	return append(kinds.WebhookRules(), extra...)
}

// Mutating returns the mutating webhook configuration.
func Mutating(o Options) *admissionregistrationv1.MutatingWebhookConfiguration {
	workloadPolicy := o.WorkloadFailurePolicy
	if workloadPolicy == "" {
		workloadPolicy = admissionregistrationv1.Ignore
	}
	never := admissionregistrationv1.NeverReinvocationPolicy
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: map[string]string{"app.kubernetes.io/name": "sluice"}},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{
				Name:         "mworkload.sluice.dev",
				ClientConfig: o.ClientConfig(workloadwebhook.Path),
				Rules:        WorkloadRules(o.ExtraWorkloadRules...),
				ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: rolloutsv1beta1.WorkloadTypeLabel, Operator: metav1.LabelSelectorOpExists,
				}}},
				FailurePolicy:           &workloadPolicy,
				SideEffects:             ptr(admissionregistrationv1.SideEffectClassNone),
				TimeoutSeconds:          ptr[int32](10),
				AdmissionReviewVersions: []string{"v1"},
				ReinvocationPolicy:      &never,
			},
			{
				Name:                    "mrollout.sluice.dev",
				ClientConfig:            o.ClientConfig(rolloutwebhook.MutatePath),
				Rules:                   rolloutRules(),
				MatchPolicy:             ptr(admissionregistrationv1.Equivalent),
				FailurePolicy:           ptr(admissionregistrationv1.Fail),
				SideEffects:             ptr(admissionregistrationv1.SideEffectClassNone),
				TimeoutSeconds:          ptr[int32](10),
				AdmissionReviewVersions: []string{"v1"},
				ReinvocationPolicy:      &never,
			},
		},
	}
}

// Validating returns the validating webhook configuration.
func Validating(o Options) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: map[string]string{"app.kubernetes.io/name": "sluice"}},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{
				Name:                    "vrollout.sluice.dev",
				ClientConfig:            o.ClientConfig(rolloutwebhook.ValidatePath),
				Rules:                   rolloutRules(),
				MatchPolicy:             ptr(admissionregistrationv1.Equivalent),
				FailurePolicy:           ptr(admissionregistrationv1.Fail),
				SideEffects:             ptr(admissionregistrationv1.SideEffectClassNone),
				TimeoutSeconds:          ptr[int32](10),
				AdmissionReviewVersions: []string{"v1"},
			},
			{
				Name:         "vmetricgate.sluice.dev",
				ClientConfig: o.ClientConfig(metricgatewebhook.Path),
				Rules: rules(analysisv1alpha1.GroupVersion.Group, analysisv1alpha1.GroupVersion.Version, []string{"metricgates"},
					admissionregistrationv1.Create, admissionregistrationv1.Update),
				MatchPolicy:             ptr(admissionregistrationv1.Equivalent),
				FailurePolicy:           ptr(admissionregistrationv1.Fail),
				SideEffects:             ptr(admissionregistrationv1.SideEffectClassNone),
				TimeoutSeconds:          ptr[int32](10),
				AdmissionReviewVersions: []string{"v1"},
			},
		},
	}
}

// rolloutRules are the rules of the Rollout webhooks: creates and updates of
// v1beta1 Rollouts. With matchPolicy Equivalent the API server converts a
// v1alpha1 request to v1beta1 (through the conversion webhook) before it
// calls them, so they read one version only.
func rolloutRules() []admissionregistrationv1.RuleWithOperations {
	return rules(rolloutsv1beta1.GroupVersion.Group, rolloutsv1beta1.GroupVersion.Version, []string{"rollouts"},
		admissionregistrationv1.Create, admissionregistrationv1.Update)
}

func rules(group, version string, resources []string, ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: ops,
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{group},
			APIVersions: []string{version},
			Resources:   resources,
			Scope:       ptr(admissionregistrationv1.NamespacedScope),
		},
	}}
}

func ptr[T any](v T) *T { return &v }
