package registration

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/sluice-dev/sluice/webhook/conversion"
)

// RolloutCRD is the name of the Rollout CustomResourceDefinition, whose
// versions v1alpha1 and v1beta1 sluice's conversion webhook converts
// between.
const RolloutCRD = "rollouts.rollouts.kruise.io"

// BatchReleaseCRD is the name of the BatchRelease CustomResourceDefinition,
// whose versions v1alpha1 (as OpenKruise Rollouts stored them) and v1beta1
// sluice's conversion webhook converts between too.
const BatchReleaseCRD = "batchreleases.rollouts.kruise.io"

// ConvertedCRDs are the CRDs whose conversion goes through sluice's
// webhook: each gets the same spec.conversion (see Conversion).
var ConvertedCRDs = []string{RolloutCRD, BatchReleaseCRD}

// Conversion returns the spec.conversion of the Rollout and BatchRelease
// CRDs (ConvertedCRDs): through
// sluice's conversion webhook, reached as o.ClientConfig says. controller-gen
// does not write it; a local manager sets it on the CRD, a cluster install
// patches it in (config/webhook/conversion.yaml).
func Conversion(o Options) *apiextensionsv1.CustomResourceConversion {
	cc := o.ClientConfig(conversion.Path)
	out := &apiextensionsv1.WebhookClientConfig{URL: cc.URL, CABundle: cc.CABundle}
	if s := cc.Service; s != nil {
		out.Service = &apiextensionsv1.ServiceReference{Namespace: s.Namespace, Name: s.Name, Path: s.Path, Port: s.Port}
	}
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook:  &apiextensionsv1.WebhookConversion{ClientConfig: out, ConversionReviewVersions: []string{"v1"}},
	}
}
