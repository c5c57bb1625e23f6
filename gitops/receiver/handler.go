package receiver

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes is GitHub's cap on a webhook payload, 25 MiB.
	DefaultMaxBodyBytes = 25 << 20
	// DefaultDeliveryTTL is how long an accepted delivery id is remembered.
	DefaultDeliveryTTL = 24 * time.Hour
	// DefaultMaxDeliveries is how many accepted delivery ids are remembered at most.
	DefaultMaxDeliveries = 10000
)

// The GitHub headers the receiver reads.
const (
	headerEvent     = "X-GitHub-Event"
	headerDelivery  = "X-GitHub-Delivery"
	headerSignature = "X-Hub-Signature-256"
	headerHookID    = "X-GitHub-Hook-ID"
)

// Trigger receives the events of accepted deliveries.
type Trigger interface {
	// Trigger hints that the state behind e changed. It must return quickly (enqueue work and
	// re-read the state from the SCM API); ctx ends with the HTTP request.
	Trigger(ctx context.Context, e Event)
}

// Secrets finds the webhook secrets configured for a repository.
type Secrets interface {
	// SecretsFor returns every secret configured for the repository "owner/name" (several
	// GitGates may bind one repository); none when the repository is not configured.
	SecretsFor(ctx context.Context, repository string) ([][]byte, error)
}

// Options configure a Handler.
type Options struct {
	// Trigger receives the accepted events. Required.
	Trigger Trigger
	// Secrets looks up the secrets a delivery is verified with. Required.
	Secrets Secrets
	// Metrics counts deliveries; nil counts nothing.
	Metrics Metrics
	// MaxBodyBytes caps a delivery's body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// DeliveryTTL is how long an accepted delivery id is remembered; 0 means DefaultDeliveryTTL.
	DeliveryTTL time.Duration
	// MaxDeliveries bounds how many delivery ids are remembered; 0 means DefaultMaxDeliveries.
	MaxDeliveries int
	// Now tells time (for the delivery set); nil means time.Now.
	Now func() time.Time
}

// Handler is the GitHub webhook endpoint. Build it with New.
type Handler struct {
	trigger Trigger
	secrets Secrets
	metrics Metrics
	maxBody int64
	seen    *deliveries
}

var _ http.Handler = (*Handler)(nil)

// New builds a Handler.
func New(o Options) (*Handler, error) {
	if o.Trigger == nil || o.Secrets == nil {
		return nil, errors.New("receiver: Trigger and Secrets are required")
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

// answer is the receiver's reply to one delivery.
type answer struct {
	status   int
	reason   string // the event when accepted, else a Reason constant
	message  string
	accepted bool
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := h.handle(w, r)
	h.metrics.Delivery(a.accepted, a.reason)
	log := ctrl.LoggerFrom(r.Context()).WithValues("event", r.Header.Get(headerEvent), "delivery", r.Header.Get(headerDelivery))
	if a.status >= 400 {
		log.Info("Rejected a GitHub webhook delivery", "status", a.status, "reason", a.reason, "message", a.message)
	} else {
		log.V(1).Info("Handled a GitHub webhook delivery", "status", a.status, "accepted", a.accepted, "reason", a.reason)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.message+"\n")
}

// handle checks a delivery and, when it is authentic, new and handled, triggers its event.
// Nothing happens before the signature is verified.
func (h *Handler) handle(w http.ResponseWriter, r *http.Request) answer {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return skip(http.StatusMethodNotAllowed, ReasonBadMethod, "only POST is accepted")
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mediaType != "application/json" && mediaType != "application/x-www-form-urlencoded") {
		return skip(http.StatusUnsupportedMediaType, ReasonBadContentType, "content type must be application/json or application/x-www-form-urlencoded")
	}
	if r.ContentLength > h.maxBody {
		return tooLarge(h.maxBody)
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return tooLarge(h.maxBody)
		}
		return skip(http.StatusBadRequest, ReasonMalformed, "reading the body: "+err.Error())
	}
	kind, id := Kind(r.Header.Get(headerEvent)), r.Header.Get(headerDelivery)
	if kind == "" || id == "" {
		return skip(http.StatusBadRequest, ReasonMissingHeader, "headers X-GitHub-Event and X-GitHub-Delivery are required")
	}
	mac, err := parseSignature(r.Header.Get(headerSignature))
	if err != nil {
		return skip(http.StatusUnauthorized, ReasonMissingSignature, err.Error())
	}
	if !handledKind(kind) {
		return skip(http.StatusAccepted, ReasonUnknownEvent, fmt.Sprintf("event %q is not used by sluice, ignored", kind))
	}
	body := raw
	if mediaType == "application/x-www-form-urlencoded" {
		if body, err = formPayload(raw); err != nil {
			return skip(http.StatusBadRequest, ReasonMalformed, "malformed payload: "+err.Error())
		}
	}
	repository, err := repositoryOf(body)
	if err != nil {
		return skip(http.StatusBadRequest, ReasonMalformed, "malformed payload: "+err.Error())
	}
	if a, ok := h.verify(r.Context(), repository, raw, mac); !ok {
		return a
	}
	e, err := decode(kind, body)
	if err != nil {
		return skip(http.StatusBadRequest, ReasonMalformed, "malformed payload: "+err.Error())
	}
	if kind == KindPullRequest && !handledAction(e.Action) {
		return skip(http.StatusAccepted, ReasonIgnoredAction, fmt.Sprintf("pull_request action %q is not used by sluice, ignored", e.Action))
	}
	e.Delivery = id
	if hook, err := strconv.ParseInt(r.Header.Get(headerHookID), 10, 64); err == nil && e.HookID == 0 {
		e.HookID = hook
	}
	if !h.seen.add(id) {
		return skip(http.StatusOK, ReasonDuplicate, "duplicate delivery, ignored")
	}
	h.trigger.Trigger(r.Context(), e)
	return answer{status: http.StatusOK, accepted: true, reason: string(kind), message: "accepted"}
}

// verify checks the signature against every secret of the repository, in constant time each.
func (h *Handler) verify(ctx context.Context, repository string, raw, mac []byte) (answer, bool) {
	secrets, err := h.secrets.SecretsFor(ctx, repository)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Looking up the webhook secrets failed", "repository", repository)
		return skip(http.StatusInternalServerError, ReasonSecretLookupFailed, "looking up the webhook secret failed"), false
	}
	if len(secrets) == 0 {
		return skip(http.StatusUnauthorized, ReasonUnknownRepository, fmt.Sprintf("no webhook secret is configured for repository %q", repository)), false
	}
	for _, secret := range secrets {
		if len(secret) == 0 {
			continue
		}
		m := hmac.New(sha256.New, secret)
		_, _ = m.Write(raw)
		if hmac.Equal(m.Sum(nil), mac) {
			return answer{}, true
		}
	}
	return skip(http.StatusUnauthorized, ReasonBadSignature, "X-Hub-Signature-256 does not match the webhook secret"), false
}

// skip is an answer that hands nothing to the Trigger.
func skip(status int, reason, message string) answer {
	return answer{status: status, reason: reason, message: message}
}

func tooLarge(limit int64) answer {
	return skip(http.StatusRequestEntityTooLarge, ReasonTooLarge, fmt.Sprintf("body larger than %d bytes", limit))
}

// parseSignature reads "sha256=<64 hex digits>".
func parseSignature(header string) ([]byte, error) {
	if header == "" {
		return nil, errors.New("header X-Hub-Signature-256 is missing (set a secret on the webhook)")
	}
	hexMAC, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexMAC) != 2*sha256.Size {
		return nil, errors.New("header X-Hub-Signature-256 is not sha256=<64 hex digits>")
	}
	mac, err := hex.DecodeString(hexMAC)
	if err != nil {
		return nil, errors.New("header X-Hub-Signature-256 is not sha256=<64 hex digits>")
	}
	return mac, nil
}

// formPayload reads the JSON of a form-encoded delivery, its payload field.
func formPayload(raw []byte) ([]byte, error) {
	values, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, &FieldError{Field: "payload", Problem: "cannot be read from the form: " + err.Error()}
	}
	p := values.Get("payload")
	if p == "" {
		return nil, &FieldError{Field: "payload", Problem: "is missing from the form"}
	}
	return []byte(p), nil
}
