// Package conversion converts Rollouts and BatchReleases between
// rollouts.kruise.io/v1alpha1 and the stored v1beta1 (the hub), and serves
// the conversion as the CRDs' conversion webhook.
//
// The two versions do not say exactly the same things. What one can say and
// the other cannot rides along in an annotation of the converted object
// (rolloutsv1alpha1.V1beta1FieldsAnnotation on a v1alpha1 object,
// rolloutsv1alpha1.V1alpha1FieldsAnnotation on a v1beta1 one) and is taken
// back when the object is converted back, as long as the user did not change
// the part it belongs to in the meantime. So a Rollout written in either
// version reads back in that version exactly as written, and a
// read-modify-write through the other version loses nothing. See
// docs/v1alpha1.md for the field mapping.
package conversion

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	rolloutsv1alpha1 "github.com/sluice-dev/sluice/api/rollouts/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// Path is where the manager serves the conversion webhook.
const Path = "/convert"

// Converter returns the converter between the Rollout versions, with v1beta1
// as the hub. s must know both versions.
func Converter(s *runtime.Scheme) (crconversion.Converter, error) {
	return crconversion.NewHubSpokeConverter(&rolloutsv1beta1.Rollout{},
		crconversion.NewSpokeConverter(&rolloutsv1alpha1.Rollout{},
			func(_ context.Context, hub *rolloutsv1beta1.Rollout, spoke *rolloutsv1alpha1.Rollout) error {
				ToV1alpha1(hub, spoke)
				return nil
			},
			func(_ context.Context, spoke *rolloutsv1alpha1.Rollout, hub *rolloutsv1beta1.Rollout) error {
				ToV1beta1(spoke, hub)
				return nil
			},
		))(s)
}

// BatchReleaseConverter returns the converter between the BatchRelease
// versions, with v1beta1 as the hub. s must know both versions.
func BatchReleaseConverter(s *runtime.Scheme) (crconversion.Converter, error) {
	return crconversion.NewHubSpokeConverter(&rolloutsv1beta1.BatchRelease{},
		crconversion.NewSpokeConverter(&rolloutsv1alpha1.BatchRelease{},
			func(_ context.Context, hub *rolloutsv1beta1.BatchRelease, spoke *rolloutsv1alpha1.BatchRelease) error {
				BatchReleaseToV1alpha1(hub, spoke)
				return nil
			},
			func(_ context.Context, spoke *rolloutsv1alpha1.BatchRelease, hub *rolloutsv1beta1.BatchRelease) error {
				BatchReleaseToV1beta1(spoke, hub)
				return nil
			},
		))(s)
}

// Setup registers the Rollout and BatchRelease converters with mgr and
// serves the conversion webhook at Path.
func Setup(mgr ctrl.Manager) error {
	c, err := Converter(mgr.GetScheme())
	if err != nil {
		return fmt.Errorf("building the Rollout converter: %w", err)
	}
	gk := rolloutsv1beta1.GroupVersion.WithKind("Rollout").GroupKind()
	if err := mgr.GetConverterRegistry().RegisterConverter(gk, c); err != nil {
		return err
	}
	bc, err := BatchReleaseConverter(mgr.GetScheme())
	if err != nil {
		return fmt.Errorf("building the BatchRelease converter: %w", err)
	}
	if err := mgr.GetConverterRegistry().RegisterConverter(rolloutsv1beta1.GroupVersion.WithKind("BatchRelease").GroupKind(), bc); err != nil {
		return err
	}
	mgr.GetWebhookServer().Register(Path, crconversion.NewWebhookHandler(mgr.GetScheme(), mgr.GetConverterRegistry()))
	return nil
}
