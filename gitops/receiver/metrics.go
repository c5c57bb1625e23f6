package receiver

// Metrics counts deliveries. observability/metrics.Metrics implements it (its DeliveryObserver
// has the same method); implementations must be safe for concurrent use.
type Metrics interface {
	// Delivery counts one delivery: accepted (handed to the Trigger) with the event as reason
	// ("pull_request", "push", "ping"), or not, with one of the Reason constants.
	Delivery(accepted bool, reason string)
}

// The reasons a delivery is not accepted. Duplicates and unused events or actions are answered
// with 2xx (GitHub should not retry them), the others with an error status.
const (
	// ReasonDuplicate is a delivery whose X-GitHub-Delivery was already accepted.
	ReasonDuplicate = "duplicate"
	// ReasonUnknownEvent is an event sluice does not use.
	ReasonUnknownEvent = "unknown-event"
	// ReasonIgnoredAction is a pull_request action sluice does not use.
	ReasonIgnoredAction = "ignored-action"
	// ReasonBadMethod is a request that is not a POST.
	ReasonBadMethod = "bad-method"
	// ReasonBadContentType is a body that is neither JSON nor form-encoded.
	ReasonBadContentType = "bad-content-type"
	// ReasonTooLarge is a body larger than the cap.
	ReasonTooLarge = "too-large"
	// ReasonMissingHeader is a delivery without X-GitHub-Event or X-GitHub-Delivery.
	ReasonMissingHeader = "missing-header"
	// ReasonMissingSignature is a delivery without a usable X-Hub-Signature-256.
	ReasonMissingSignature = "missing-signature"
	// ReasonUnknownRepository is a delivery for a repository no secret is configured for.
	ReasonUnknownRepository = "unknown-repository"
	// ReasonBadSignature is a signature that matches none of the repository's secrets.
	ReasonBadSignature = "bad-signature"
	// ReasonMalformed is a payload that is not JSON or lacks a field sluice needs.
	ReasonMalformed = "malformed"
	// ReasonSecretLookupFailed is a failed secret lookup.
	ReasonSecretLookupFailed = "secret-lookup-failed"
	// ReasonTriggerFailed is an authentic delivery a FallibleTrigger could not hand on.
	ReasonTriggerFailed = "trigger-failed"
)

// noMetrics counts nothing.
type noMetrics struct{}

func (noMetrics) Delivery(bool, string) {}
