// Package metrics holds sluice's Prometheus series and the observers that
// move them.
//
// New builds every collector once, at manager start, and registers it on
// the registry it is given (controller-runtime's metrics.Registry, served on
// the manager's metrics endpoint). The resulting *Metrics is passed to whoever
// records: there is no package-level state.
//
// Who records what:
//
//   - The Rollout controller calls (*RolloutObserver).Observe once per
//     reconcile, after the status is written, with the status before and
//     after the step machine. The observer derives the rollout series
//     (phase, current step, step durations, batches released, approvals by
//     source, rollbacks) from that transition, emits Kubernetes events for
//     the transitions the step machine does not event, logs each move of a
//     release, and deletes the Rollout's series when it is deleted.
//
//   - SCM clients (gitops/scm/...) take an SCMObserver and call
//     Request(op, status) once per API request, with the operation
//     (method and route, "POST /repos/statuses/{sha}", ...) and the outcome (the
//     HTTP status code as text, or "error" when no response came), and
//     RateLimit(remaining) with the remaining request budget the SCM
//     reported.
//
//   - The GitOps webhook receiver takes a DeliveryObserver and calls
//     Delivery(accepted, reason) once per delivery: accepted true with a
//     reason such as "push" or "pull_request", or false with why it was
//     rejected ("bad-signature", "unknown-event", "too-large", ...).
//
//   - The workload admission webhook takes an AdmissionObserver and calls
//     InternalError(webhook, outcome) once per request it could not judge
//     (a cache read that failed, an annotation it could not read), with
//     the outcome its failure policy chose: "allowed" (Ignore) or "denied"
//     (Fail).
//
// *Metrics implements SCMObserver, DeliveryObserver and AdmissionObserver;
// a nil *Metrics, or a nil *RolloutObserver, records nothing.
package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// SCMObserver records the requests an SCM client makes.
type SCMObserver interface {
	// Request counts one request: op names the operation, status its
	// outcome (an HTTP status code, or "error").
	Request(op, status string)
	// RateLimit records the remaining request budget the SCM reported.
	RateLimit(remaining int)
}

// DeliveryObserver records the webhook deliveries the GitOps receiver got.
type DeliveryObserver interface {
	// Delivery counts one delivery, accepted or rejected, with the event
	// accepted or the reason it was rejected.
	Delivery(accepted bool, reason string)
}

// AdmissionObserver records the requests an admission webhook could not
// judge.
type AdmissionObserver interface {
	// InternalError counts one request webhook could not judge, and
	// whether its failure policy let it through ("allowed") or refused it
	// ("denied").
	InternalError(webhook, outcome string)
}

// CacheObserver records whether the manager reads a CRD's objects from its
// cache or, while they may be stored in another version, from the API
// server.
type CacheObserver interface {
	// CachedReads records whether the objects of crd are read from the
	// cache (true) or from the API server (false).
	CachedReads(crd string, cached bool)
}

var (
	_ SCMObserver       = (*Metrics)(nil)
	_ DeliveryObserver  = (*Metrics)(nil)
	_ AdmissionObserver = (*Metrics)(nil)
	_ CacheObserver     = (*Metrics)(nil)
)

// The label names.
const (
	labelNamespace = "namespace"
	labelRollout   = "rollout"
	labelPhase     = "phase"
	labelState     = "state"
	labelKind      = "workload_kind"
	labelSource    = "source"
	labelRollback  = "kind"
	labelOperation = "operation"
	labelStatus    = "status"
	labelResult    = "result"
	labelReason    = "reason"
	labelWebhook   = "webhook"
	labelOutcome   = "outcome"
	labelCRD       = "crd"
)

// Metrics holds sluice's collectors.
type Metrics struct {
	rolloutInfo      *prometheus.GaugeVec
	rolloutStep      *prometheus.GaugeVec
	rolloutSteps     *prometheus.GaugeVec
	stepDuration     *prometheus.HistogramVec
	batchesReleased  *prometheus.CounterVec
	approvals        *prometheus.CounterVec
	rollbacks        *prometheus.CounterVec
	scmRequests      *prometheus.CounterVec
	scmRateLimit     prometheus.Gauge
	webhookDelivered *prometheus.CounterVec
	admissionErrors  *prometheus.CounterVec
	cachedReads      *prometheus.GaugeVec
}

// New builds the collectors and registers them on reg. A collector that reg
// already holds (a manager started again in the same process) is reused, so
// the series carry on.
func New(reg prometheus.Registerer) (*Metrics, error) {
	rollout := []string{labelNamespace, labelRollout}
	m := &Metrics{
		rolloutInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_rollout_info",
			Help: "Always 1, for each Rollout: its phase, the state of its current step and the kind of its workload.",
		}, []string{labelNamespace, labelRollout, labelPhase, labelState, labelKind}),
		rolloutStep: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_rollout_step",
			Help: "The Rollout's current step, counted from 1 (0 before its first release).",
		}, rollout),
		rolloutSteps: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_rollout_steps",
			Help: "How many steps the Rollout's strategy has.",
		}, rollout),
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_rollout_step_duration_seconds",
			Help:    "Time from entering a step to leaving it (pauses and approvals included).",
			Buckets: []float64{1, 5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 24 * 3600},
		}, rollout),
		batchesReleased: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_batches_released_total",
			Help: "Batches of the new revision released (a step's pods upgraded and ready).",
		}, rollout),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_approvals_total",
			Help: "Step approvals applied, by how they were given.",
		}, []string{labelNamespace, labelRollout, labelSource}),
		rollbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_rollbacks_total",
			Help: "Rollbacks started: immediate, or in-batch (through the steps).",
		}, []string{labelNamespace, labelRollout, labelRollback}),
		scmRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_scm_requests_total",
			Help: "Requests to the SCM API, by operation and outcome (HTTP status code, or error).",
		}, []string{labelOperation, labelStatus}),
		scmRateLimit: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_scm_rate_limit_remaining",
			Help: "Requests left in the SCM API's rate-limit window, as last reported.",
		}),
		webhookDelivered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_webhook_deliveries_total",
			Help: "SCM webhook deliveries received, accepted or rejected, by event or rejection reason.",
		}, []string{labelResult, labelReason}),
		admissionErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_admission_internal_errors_total",
			Help: "Requests an admission webhook could not judge (an internal error), by webhook and by what its failure policy did: allowed (Ignore) or denied (Fail).",
		}, []string{labelWebhook, labelOutcome}),
		cachedReads: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_cached_reads",
			Help: "1 while the release controllers read the CRD's objects from the manager's cache, 0 while they read them from the API server (objects may still be stored in another version).",
		}, []string{labelCRD}),
	}
	var errs []error
	m.rolloutInfo = register(reg, m.rolloutInfo, &errs)
	m.rolloutStep = register(reg, m.rolloutStep, &errs)
	m.rolloutSteps = register(reg, m.rolloutSteps, &errs)
	m.stepDuration = register(reg, m.stepDuration, &errs)
	m.batchesReleased = register(reg, m.batchesReleased, &errs)
	m.approvals = register(reg, m.approvals, &errs)
	m.rollbacks = register(reg, m.rollbacks, &errs)
	m.scmRequests = register(reg, m.scmRequests, &errs)
	m.scmRateLimit = register(reg, m.scmRateLimit, &errs)
	m.webhookDelivered = register(reg, m.webhookDelivered, &errs)
	m.admissionErrors = register(reg, m.admissionErrors, &errs)
	m.cachedReads = register(reg, m.cachedReads, &errs)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c on reg and returns it, or the equal collector reg
// already holds.
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errs *[]error) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing
		}
	}
	*errs = append(*errs, err)
	return c
}

// Request counts one SCM API request.
func (m *Metrics) Request(op, status string) {
	if m == nil {
		return
	}
	m.scmRequests.WithLabelValues(op, status).Inc()
}

// RateLimit records the SCM API's remaining request budget.
func (m *Metrics) RateLimit(remaining int) {
	if m == nil {
		return
	}
	m.scmRateLimit.Set(float64(remaining))
}

// Delivery counts one webhook delivery.
func (m *Metrics) Delivery(accepted bool, reason string) {
	if m == nil {
		return
	}
	result := "rejected"
	if accepted {
		result = "accepted"
	}
	m.webhookDelivered.WithLabelValues(result, reason).Inc()
}

// InternalError counts one admission request a webhook could not judge.
func (m *Metrics) InternalError(webhook, outcome string) {
	if m == nil {
		return
	}
	m.admissionErrors.WithLabelValues(webhook, outcome).Inc()
}

// CachedReads records whether crd's objects are read from the cache.
func (m *Metrics) CachedReads(crd string, cached bool) {
	if m == nil {
		return
	}
	v := 0.0
	if cached {
		v = 1
	}
	m.cachedReads.WithLabelValues(crd).Set(v)
}
