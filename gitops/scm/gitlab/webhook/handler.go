package webhook

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/sluice-dev/sluice/gitops/receiver"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes caps a delivery's body, 25 MiB (GitLab's payloads are far smaller).
	DefaultMaxBodyBytes = 25 << 20
	// DefaultDeliveryTTL is how long an accepted delivery id is remembered.
	DefaultDeliveryTTL = 24 * time.Hour
	// DefaultMaxDeliveries is how many accepted delivery ids are remembered at most.
	DefaultMaxDeliveries = 10000
)

// The headers a delivery is read from.
const (
	headerEvent          = "X-Gitlab-Event"
	headerEventUUID      = "X-Gitlab-Event-UUID"
	headerIdempotencyKey = "Idempotency-Key"
	headerToken          = "X-Gitlab-Token"
)

// Options configure a Handler.
type Options struct {
	// Trigger receives the accepted events. Required.
	Trigger receiver.Trigger
	// Secrets looks up the secret tokens a delivery is verified with, by the project's path
	// with its namespace ("group/subgroup/project"). Required.
	Secrets receiver.Secrets
	// Metrics counts deliveries; nil counts nothing.
	Metrics receiver.Metrics
	// MaxBodyBytes caps a delivery's body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// DeliveryTTL is how long an accepted delivery id is remembered; 0 means DefaultDeliveryTTL.
	DeliveryTTL time.Duration
	// MaxDeliveries bounds how many delivery ids are remembered; 0 means DefaultMaxDeliveries.
	MaxDeliveries int
	// Now tells time (for the delivery set); nil means time.Now.
	Now func() time.Time
}

// Handler is the GitLab webhook endpoint. Build it with New.
type Handler struct {
	trigger receiver.Trigger
	secrets receiver.Secrets
	metrics receiver.Metrics
	maxBody int64
	seen    *deliveries
}

var _ http.Handler = (*Handler)(nil)

// New builds a Handler.
func New(o Options) (*Handler, error) {
	if o.Trigger == nil || o.Secrets == nil {
		return nil, errors.New("gitlab webhook: Trigger and Secrets are required")
	}
	h := &Handler{trigger: o.Trigger, secrets: o.Secrets, metrics: o.Metrics, maxBody: o.MaxBodyBytes}
	if h.metrics == nil {
		h.metrics = noMetrics{}
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	ttl, capacity, now := o.DeliveryTTL, o.MaxDeliveries, o.Now
	if ttl <= 0 {
		ttl = DefaultDeliveryTTL
	}
	if capacity <= 0 {
		capacity = DefaultMaxDeliveries
	}
	if now == nil {
		now = time.Now
	}
	h.seen = newDeliveries(capacity, ttl, now)
	return h, nil
}

// answer is the handler's reply to one delivery.
type answer struct {
	status   int
	reason   string // the event when accepted, else a receiver.Reason constant
	message  string
	accepted bool
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := h.handle(w, r)
	h.metrics.Delivery(a.accepted, a.reason)
	log := ctrl.LoggerFrom(r.Context()).WithValues("event", r.Header.Get(headerEvent), "delivery", deliveryID(r.Header))
	if a.status >= 400 {
		log.Info("Rejected a GitLab webhook delivery", "status", a.status, "reason", a.reason, "message", a.message)
	} else {
		log.V(1).Info("Handled a GitLab webhook delivery", "status", a.status, "accepted", a.accepted, "reason", a.reason)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.message+"\n")
}

// deliveryID is the delivery's id: X-Gitlab-Event-UUID, or Idempotency-Key (which GitLab keeps
// across its retries of a delivery) when the former is missing.
func deliveryID(h http.Header) string {
	if id := h.Get(headerEventUUID); id != "" {
		return id
	}
	return h.Get(headerIdempotencyKey)
}

// handle checks a delivery and, when it is authentic, new and handled, triggers its event.
// Nothing is decoded before the token is verified but the project's path.
func (h *Handler) handle(w http.ResponseWriter, r *http.Request) answer {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return skip(http.StatusMethodNotAllowed, receiver.ReasonBadMethod, "only POST is accepted")
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return skip(http.StatusUnsupportedMediaType, receiver.ReasonBadContentType, "content type must be application/json")
	}
	if r.ContentLength > h.maxBody {
		return tooLarge(h.maxBody)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return tooLarge(h.maxBody)
		}
		return skip(http.StatusBadRequest, receiver.ReasonMalformed, "reading the body: "+err.Error())
	}
	event, id := r.Header.Get(headerEvent), deliveryID(r.Header)
	if event == "" || id == "" {
		return skip(http.StatusBadRequest, receiver.ReasonMissingHeader, "headers X-Gitlab-Event and X-Gitlab-Event-UUID (or Idempotency-Key) are required")
	}
	token := r.Header.Get(headerToken)
	if token == "" {
		return skip(http.StatusUnauthorized, receiver.ReasonMissingSignature, "header X-Gitlab-Token is missing (set a secret token on the webhook)")
	}
	kind, ok := kindOf(event)
	if !ok {
		return skip(http.StatusAccepted, receiver.ReasonUnknownEvent, fmt.Sprintf("event %q is not used by sluice, ignored", event))
	}
	project, err := repositoryOf(body)
	if err != nil {
		return skip(http.StatusBadRequest, receiver.ReasonMalformed, "malformed payload: "+err.Error())
	}
	if a, ok := h.verify(r.Context(), project, token); !ok {
		return a
	}
	e, handled, err := decode(kind, body)
	if err != nil {
		return skip(http.StatusBadRequest, receiver.ReasonMalformed, "malformed payload: "+err.Error())
	}
	if !handled {
		return skip(http.StatusAccepted, receiver.ReasonIgnoredAction, fmt.Sprintf("%s action %q is not used by sluice, ignored", event, e.Action))
	}
	e.Delivery = id
	if !h.seen.add(id) {
		return skip(http.StatusOK, receiver.ReasonDuplicate, "duplicate delivery, ignored")
	}
	h.trigger.Trigger(r.Context(), e)
	return answer{status: http.StatusOK, accepted: true, reason: string(kind), message: "accepted"}
}

// verify compares the delivery's token with every secret of the project, in constant time: GitLab
// sends the webhook's secret token itself (not a signature), so both are hashed to a fixed
// length first and the digests compared, which leaks neither the secret's content nor its
// length.
func (h *Handler) verify(ctx context.Context, project, token string) (answer, bool) {
	secrets, err := h.secrets.SecretsFor(ctx, project)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Looking up the webhook secrets failed", "project", project)
		return skip(http.StatusInternalServerError, receiver.ReasonSecretLookupFailed, "looking up the webhook secret failed"), false
	}
	if len(secrets) == 0 {
		return skip(http.StatusUnauthorized, receiver.ReasonUnknownRepository, fmt.Sprintf("no webhook secret is configured for project %q", project)), false
	}
	got := sha256.Sum256([]byte(token))
	match := 0
	for _, secret := range secrets {
		if len(secret) == 0 {
			continue
		}
		want := sha256.Sum256(secret)
		match |= subtle.ConstantTimeCompare(got[:], want[:])
	}
	if match != 1 {
		return skip(http.StatusUnauthorized, receiver.ReasonBadSignature, "the X-Gitlab-Token does not match the webhook's secret token"), false
	}
	return answer{}, true
}

// skip is an answer that hands nothing to the Trigger.
func skip(status int, reason, message string) answer {
	return answer{status: status, reason: reason, message: message}
}

func tooLarge(limit int64) answer {
	return skip(http.StatusRequestEntityTooLarge, receiver.ReasonTooLarge, fmt.Sprintf("body larger than %d bytes", limit))
}

// noMetrics counts nothing.
type noMetrics struct{}

func (noMetrics) Delivery(bool, string) {}
