// Package providers is the factory of metric providers: the one table that
// names each kind (prometheus, web, job), how it is built, what it checks
// at admission beyond the CRD's schema, and the condition a metric of the
// kind is judged by when it sets none. Adding a kind is its package plus
// one row here.
package providers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/analysis/provider"
	"github.com/sluice-dev/sluice/analysis/provider/job"
	"github.com/sluice-dev/sluice/analysis/provider/prometheus"
	"github.com/sluice-dev/sluice/analysis/provider/web"
	"github.com/sluice-dev/sluice/analysis/vars"
	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
)

// Deps is what the providers are built with.
type Deps struct {
	// Client creates and reads Jobs (through the manager's cache).
	Client client.Client
	// Secrets reads credentials.
	Secrets provider.SecretReader
	// Clock tells time.
	Clock clock.PassiveClock
	// Transport sends HTTP requests (nil: http.DefaultTransport).
	Transport http.RoundTripper
}

// Kind is one row of the table.
type Kind struct {
	// Name is the kind's field in spec.metrics[].provider.
	Name string
	// Set reports whether p uses the kind.
	Set func(p *analysisv1alpha1.MetricProvider) bool
	// New builds the provider.
	New func(d Deps) provider.Provider
	// Validate checks a metric of the kind beyond the CRD's schema; path
	// is the metric's provider field.
	Validate func(m *analysisv1alpha1.Metric, path *field.Path) field.ErrorList
	// DefaultSuccessCondition judges a metric that sets no condition;
	// empty: the metric must set one.
	DefaultSuccessCondition string
}

// Kinds returns the table.
func Kinds() []Kind {
	return []Kind{
		{
			Name: "prometheus",
			Set:  func(p *analysisv1alpha1.MetricProvider) bool { return p.Prometheus != nil },
			New: func(d Deps) provider.Provider {
				return &prometheus.Provider{Secrets: d.Secrets, Transport: d.Transport, Clock: d.Clock}
			},
			Validate: validatePrometheus,
		},
		{
			Name: "web",
			Set:  func(p *analysisv1alpha1.MetricProvider) bool { return p.Web != nil },
			New: func(d Deps) provider.Provider {
				return &web.Provider{Secrets: d.Secrets, Client: &http.Client{Transport: d.Transport}}
			},
			Validate: validateWeb,
		},
		{
			Name:                    "job",
			Set:                     func(p *analysisv1alpha1.MetricProvider) bool { return p.Job != nil },
			New:                     func(d Deps) provider.Provider { return &job.Provider{Client: d.Client} },
			Validate:                validateJob,
			DefaultSuccessCondition: "result == true",
		},
	}
}

// KindOf returns the kind p uses.
func KindOf(p *analysisv1alpha1.MetricProvider) (Kind, error) {
	var found []Kind
	for _, k := range Kinds() {
		if k.Set(p) {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		names := make([]string, 0, len(Kinds()))
		for _, k := range Kinds() {
			names = append(names, k.Name)
		}
		return Kind{}, fmt.Errorf("set exactly one of %s", strings.Join(names, ", "))
	}
	return found[0], nil
}

// Set holds one provider of each kind.
type Set struct {
	byName map[string]provider.Provider
}

// New builds every kind's provider.
func New(d Deps) *Set {
	s := &Set{byName: map[string]provider.Provider{}}
	for _, k := range Kinds() {
		s.byName[k.Name] = k.New(d)
	}
	return s
}

// For returns the provider of m and its kind.
func (s *Set) For(m *analysisv1alpha1.Metric) (provider.Provider, Kind, error) {
	k, err := KindOf(&m.Provider)
	if err != nil {
		return nil, Kind{}, fmt.Errorf("metric %s: provider: %w", m.Name, err)
	}
	return s.byName[k.Name], k, nil
}

func validatePrometheus(m *analysisv1alpha1.Metric, path *field.Path) field.ErrorList {
	p := m.Provider.Prometheus
	var errs field.ErrorList
	if err := checkURL(p.Address); err != nil {
		errs = append(errs, field.Invalid(path.Child("prometheus", "address"), p.Address, err.Error()))
	}
	if err := vars.Check(p.Query); err != nil {
		errs = append(errs, field.Invalid(path.Child("prometheus", "query"), p.Query, err.Error()))
	}
	if p.Timeout.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("prometheus", "timeout"), p.Timeout.String(), "must not be negative"))
	}
	return errs
}

func validateWeb(m *analysisv1alpha1.Metric, path *field.Path) field.ErrorList {
	w := m.Provider.Web
	wp := path.Child("web")
	var errs field.ErrorList
	if err := vars.Check(w.URL); err != nil {
		errs = append(errs, field.Invalid(wp.Child("url"), w.URL, err.Error()))
	} else if err := checkURL(placeholders(w.URL)); err != nil {
		errs = append(errs, field.Invalid(wp.Child("url"), w.URL, err.Error()))
	}
	if err := vars.Check(w.Body); err != nil {
		errs = append(errs, field.Invalid(wp.Child("body"), w.Body, err.Error()))
	}
	for i, h := range w.Headers {
		if err := vars.Check(h.Value); err != nil {
			errs = append(errs, field.Invalid(wp.Child("headers").Index(i).Child("value"), h.Value, err.Error()))
		}
	}
	if _, err := web.Compile(w.JSONPath); err != nil {
		errs = append(errs, field.Invalid(wp.Child("jsonPath"), w.JSONPath, err.Error()))
	}
	if w.Timeout.Duration < 0 {
		errs = append(errs, field.Invalid(wp.Child("timeout"), w.Timeout.String(), "must not be negative"))
	}
	return errs
}

func validateJob(m *analysisv1alpha1.Metric, path *field.Path) field.ErrorList {
	spec := &m.Provider.Job.Spec
	tp := path.Child("job", "spec", "template", "spec")
	var errs field.ErrorList
	if len(spec.Template.Spec.Containers) == 0 {
		errs = append(errs, field.Required(tp.Child("containers"), "a Job needs at least one container"))
	}
	for i, c := range spec.Template.Spec.Containers {
		if c.Name == "" {
			errs = append(errs, field.Required(tp.Child("containers").Index(i).Child("name"), ""))
		}
		if c.Image == "" {
			errs = append(errs, field.Required(tp.Child("containers").Index(i).Child("image"), ""))
		}
	}
	if rp := spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyNever && rp != corev1.RestartPolicyOnFailure {
		errs = append(errs, field.NotSupported(tp.Child("restartPolicy"), rp, []corev1.RestartPolicy{corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure}))
	}
	if spec.Selector != nil || spec.ManualSelector != nil {
		errs = append(errs, field.Forbidden(path.Child("job", "spec", "selector"), "each measurement's Job gets its own selector; remove selector and manualSelector"))
	}
	return errs
}

// checkURL accepts an absolute http(s) URL with a host.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("must be an http(s) URL")
	}
	if u.Host == "" {
		return errors.New("has no host")
	}
	return nil
}

// placeholders replaces the template variables of s with a value that is
// valid in any part of a URL, so that the rest of it can be checked.
func placeholders(s string) string {
	v := vars.Values{}
	for _, n := range vars.Names() {
		v[n] = "x"
	}
	out, err := vars.Expand(s, v)
	if err != nil {
		return s
	}
	return out
}
