package rollout

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func requestIn(version string) admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		RequestKind: &metav1.GroupVersionKind{Group: "rollouts.kruise.io", Version: version, Kind: "Rollout"},
	}}
}

func withTraffic(traffic ...string) *rolloutsv1beta1.Rollout {
	ro := &rolloutsv1beta1.Rollout{Spec: rolloutsv1beta1.RolloutSpec{Strategy: rolloutsv1beta1.RolloutStrategy{Canary: &rolloutsv1beta1.CanaryStrategy{}}}}
	for _, t := range traffic {
		ro.Spec.Strategy.Canary.Steps = append(ro.Spec.Strategy.Canary.Steps, rolloutsv1beta1.CanaryStep{
			TrafficRoutingStrategy: rolloutsv1beta1.TrafficRoutingStrategy{Traffic: &t}})
	}
	return ro
}

func TestValidateV1alpha1(t *testing.T) {
	styled := func(style string) *rolloutsv1beta1.Rollout {
		ro := withTraffic("10%")
		ro.Annotations = map[string]string{rolloutsv1beta1.RollingStyleAnnotation: style}
		return ro
	}
	tests := []struct {
		name    string
		version string
		ro      *rolloutsv1beta1.Rollout
		want    []string // fields in error
	}{
		{"partition", "v1alpha1", styled("partition"), nil},
		{"Canary in any case", "v1alpha1", styled("Canary"), nil},
		{"empty", "v1alpha1", styled(""), nil},
		{"an unknown rolling style", "v1alpha1", styled("blue"), []string{"metadata.annotations[rollouts.kruise.io/rolling-style]"}},
		{"an unknown rolling style is not checked in v1beta1", "v1beta1", styled("blue"), nil},
		{"growing weights", "v1alpha1", withTraffic("5%", "40%", "40%", "100%"), nil},
		{"a weight smaller than an earlier one", "v1alpha1", withTraffic("5%", "40%", "20%"), []string{"spec.strategy.canary.steps[2].traffic"}},
		{"shrinking traffic is not checked in v1beta1", "v1beta1", withTraffic("40%", "20%"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := validateV1alpha1(requestIn(tt.version), tt.ro, nil)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("errors %v, want on %v", errs, tt.want)
			}
		})
	}
}

func TestInRequestVersion_namesV1alpha1Fields(t *testing.T) {
	errs := func() field.ErrorList {
		return field.ErrorList{
			field.Required(field.NewPath("spec", "workloadRef", "name"), ""),
			field.Invalid(field.NewPath("spec", "strategy", "canary", "steps").Index(1).Child("traffic"), "0%", "must be a percentage in (0%, 100%]"),
			field.Invalid(field.NewPath("spec", "strategy", "canary", "steps").Index(1).Child("replicas"), "-1", "must be positive"),
		}
	}
	got := inRequestVersion(requestIn("v1alpha1"), errs()).ToAggregate().Error()
	for _, want := range []string{"spec.objectRef.workloadRef.name", `spec.strategy.canary.steps[1].weight: Invalid value: "0"`, "spec.strategy.canary.steps[1].replicas"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not mention %q", got, want)
		}
	}
	if got := inRequestVersion(requestIn("v1beta1"), errs()).ToAggregate().Error(); !strings.Contains(got, "spec.workloadRef.name") || !strings.Contains(got, ".traffic") {
		t.Errorf("v1beta1 request: %q, want v1beta1 names", got)
	}
}
