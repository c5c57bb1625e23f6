package webhook

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
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/sluice-dev/sluice/gitops/receiver"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes caps a delivery's body, 25 MiB (Gitea's payloads are far smaller).
	DefaultMaxBodyBytes = 25 << 20
	// DefaultDeliveryTTL is how long an accepted delivery id is remembered.
	DefaultDeliveryTTL = 24 * time.Hour
	// DefaultMaxDeliveries is how many accepted delivery ids are remembered at most.
	DefaultMaxDeliveries = 10000
)

// The headers a delivery is read from; Forgejo sends both of each pair.
var (
	headersEvent     = []string{"X-Forgejo-Event", "X-Gitea-Event"}
	headersDelivery  = []string{"X-Forgejo-Delivery", "X-Gitea-Delivery"}
	headersSignature = []string{"X-Forgejo-Signature", "X-Gitea-Signature"}
)

// Options configure a Handler.
type Options struct {
	// Trigger receives the accepted events. Required.
	Trigger receiver.Trigger
	// Secrets looks up the secrets a delivery is verified with. Required.
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

// Handler is the Gitea and Forgejo webhook endpoint. Build it with New.
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
		return nil, errors.New("gitea webhook: Trigger and Secrets are required")
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
	log := ctrl.LoggerFrom(r.Context()).WithValues("event", first(r.Header, headersEvent), "delivery", first(r.Header, headersDelivery))
	if a.status >= 400 {
		log.Info("Rejected a Gitea webhook delivery", "status", a.status, "reason", a.reason, "message", a.message)
	} else {
		log.V(1).Info("Handled a Gitea webhook delivery", "status", a.status, "accepted", a.accepted, "reason", a.reason)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.message+"\n")
}

// handle checks a delivery and, when it is authentic, new and handled, triggers its event.
// Nothing is decoded before the signature is verified but the repository's name.
func (h *Handler) handle(w http.ResponseWriter, r *http.Request) answer {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return skip(http.StatusMethodNotAllowed, receiver.ReasonBadMethod, "only POST is accepted")
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mediaType != "application/json" && mediaType != "application/x-www-form-urlencoded") {
		return skip(http.StatusUnsupportedMediaType, receiver.ReasonBadContentType, "content type must be application/json or application/x-www-form-urlencoded")
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
		return skip(http.StatusBadRequest, receiver.ReasonMalformed, "reading the body: "+err.Error())
	}
	kind, id := receiver.Kind(first(r.Header, headersEvent)), first(r.Header, headersDelivery)
	if kind == "" || id == "" {
		return skip(http.StatusBadRequest, receiver.ReasonMissingHeader, "headers X-Gitea-Event and X-Gitea-Delivery are required")
	}
	mac, err := parseSignature(first(r.Header, headersSignature))
	if err != nil {
		return skip(http.StatusUnauthorized, receiver.ReasonMissingSignature, err.Error())
	}
	if !handledKind(kind) {
		return skip(http.StatusAccepted, receiver.ReasonUnknownEvent, fmt.Sprintf("event %q is not used by sluice, ignored", kind))
	}
	// Gitea signs the JSON payload: the body itself, or a form's payload field.
	payload := raw
	if mediaType == "application/x-www-form-urlencoded" {
		if payload, err = formPayload(raw); err != nil {
			return skip(http.StatusBadRequest, receiver.ReasonMalformed, "malformed payload: "+err.Error())
		}
	}
	repository, err := repositoryOf(payload)
	if err != nil {
		return skip(http.StatusBadRequest, receiver.ReasonMalformed, "malformed payload: "+err.Error())
	}
	if a, ok := h.verify(r.Context(), repository, payload, mac); !ok {
		return a
	}
	e, handled, err := decode(kind, payload)
	if err != nil {
		return skip(http.StatusBadRequest, receiver.ReasonMalformed, "malformed payload: "+err.Error())
	}
	if !handled {
		return skip(http.StatusAccepted, receiver.ReasonIgnoredAction, fmt.Sprintf("%s action %q is not used by sluice, ignored", kind, e.Action))
	}
	e.Delivery = id
	if !h.seen.add(id) {
		return skip(http.StatusOK, receiver.ReasonDuplicate, "duplicate delivery, ignored")
	}
	h.trigger.Trigger(r.Context(), e)
	return answer{status: http.StatusOK, accepted: true, reason: string(kind), message: "accepted"}
}

// verify checks the signature against every secret of the repository, in constant time each.
func (h *Handler) verify(ctx context.Context, repository string, payload, mac []byte) (answer, bool) {
	secrets, err := h.secrets.SecretsFor(ctx, repository)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Looking up the webhook secrets failed", "repository", repository)
		return skip(http.StatusInternalServerError, receiver.ReasonSecretLookupFailed, "looking up the webhook secret failed"), false
	}
	if len(secrets) == 0 {
		return skip(http.StatusUnauthorized, receiver.ReasonUnknownRepository, fmt.Sprintf("no webhook secret is configured for repository %q", repository)), false
	}
	for _, secret := range secrets {
		if len(secret) == 0 {
			continue
		}
		m := hmac.New(sha256.New, secret)
		_, _ = m.Write(payload)
		if hmac.Equal(m.Sum(nil), mac) {
			return answer{}, true
		}
	}
	return skip(http.StatusUnauthorized, receiver.ReasonBadSignature, "the signature does not match the webhook secret"), false
}

// first returns the first of the named headers that is set.
func first(h http.Header, names []string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// skip is an answer that hands nothing to the Trigger.
func skip(status int, reason, message string) answer {
	return answer{status: status, reason: reason, message: message}
}

func tooLarge(limit int64) answer {
	return skip(http.StatusRequestEntityTooLarge, receiver.ReasonTooLarge, fmt.Sprintf("body larger than %d bytes", limit))
}

// parseSignature reads a signature header: 64 hex digits (Gitea writes no "sha256=" prefix;
// one is accepted).
func parseSignature(header string) ([]byte, error) {
	if header == "" {
		return nil, errors.New("header X-Gitea-Signature is missing (set a secret on the webhook)")
	}
	hexMAC := strings.TrimPrefix(strings.TrimSpace(header), "sha256=")
	if len(hexMAC) != 2*sha256.Size {
		return nil, errors.New("header X-Gitea-Signature is not 64 hex digits")
	}
	mac, err := hex.DecodeString(hexMAC)
	if err != nil {
		return nil, errors.New("header X-Gitea-Signature is not 64 hex digits")
	}
	return mac, nil
}

// formPayload reads the JSON of a form-encoded delivery, its payload field.
func formPayload(raw []byte) ([]byte, error) {
	values, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, &receiver.FieldError{Field: "payload", Problem: "cannot be read from the form: " + err.Error()}
	}
	p := values.Get("payload")
	if p == "" {
		return nil, &receiver.FieldError{Field: "payload", Problem: "is missing from the form"}
	}
	return []byte(p), nil
}

// noMetrics counts nothing.
type noMetrics struct{}

func (noMetrics) Delivery(bool, string) {}
