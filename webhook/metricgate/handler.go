// Package metricgate holds the validating admission webhook of MetricGates:
// what the CRD's schema and CEL rules cannot say (conditions that compile,
// template variables that exist, JSON paths that parse, Job templates a Job
// can run), with messages that name the field.
package metricgate

import (
	"context"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/sluice-dev/sluice/analysis/condition"
	"github.com/sluice-dev/sluice/analysis/providers"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

// Path is where the webhook is served.
const Path = "/validate-analysis-sluice-dev-metricgate"

// MinInterval is the shortest interval between two measurements.
const MinInterval = time.Second

// Validator validates MetricGates on create and update.
type Validator struct {
	// Decoder decodes admission objects.
	Decoder admission.Decoder
	// Conditions compiles the metrics' conditions.
	Conditions *condition.Compiler
}

var _ admission.Handler = (*Validator)(nil)

// Handle implements admission.Handler.
func (v *Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.SubResource != "" || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return admission.Allowed("")
	}
	mg := &analysisv1alpha1.MetricGate{}
	if err := v.Decoder.DecodeRaw(req.Object, mg); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if errs := Validate(v.Conditions, &mg.Spec); len(errs) > 0 {
		return admission.Denied(errs.ToAggregate().Error())
	}
	return admission.Allowed("")
}

// Validate checks spec beyond its schema.
func Validate(c *condition.Compiler, spec *analysisv1alpha1.MetricGateSpec) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	if _, err := metav1.LabelSelectorAsSelector(&spec.RolloutSelector); err != nil {
		errs = append(errs, field.Invalid(sp.Child("rolloutSelector"), spec.RolloutSelector, err.Error()))
	}
	for i := range spec.Metrics {
		errs = append(errs, validateMetric(c, &spec.Metrics[i], sp.Child("metrics").Index(i))...)
	}
	return errs
}

func validateMetric(c *condition.Compiler, m *analysisv1alpha1.Metric, mp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := m.Interval.Duration; d != 0 && d < MinInterval {
		errs = append(errs, field.Invalid(mp.Child("interval"), m.Interval.String(), "must be at least 1s"))
	}
	if m.InitialDelay.Duration < 0 {
		errs = append(errs, field.Invalid(mp.Child("initialDelay"), m.InitialDelay.String(), "must not be negative"))
	}
	kind, err := providers.KindOf(&m.Provider)
	if err != nil {
		return append(errs, field.Invalid(mp.Child("provider"), "", err.Error()))
	}
	errs = append(errs, kind.Validate(m, mp.Child("provider"))...)
	for _, cond := range []struct {
		name, expr string
	}{{"successCondition", m.SuccessCondition}, {"failureCondition", m.FailureCondition}} {
		if cond.expr == "" {
			continue
		}
		if _, err := c.Compile(cond.expr); err != nil {
			errs = append(errs, field.Invalid(mp.Child(cond.name), cond.expr, err.Error()))
		}
	}
	if m.SuccessCondition == "" && m.FailureCondition == "" && kind.DefaultSuccessCondition == "" {
		errs = append(errs, field.Required(mp.Child("successCondition"),
			"a "+kind.Name+" metric needs successCondition or failureCondition (a CEL expression over result, e.g. \"result < 0.05\")"))
	}
	return errs
}
