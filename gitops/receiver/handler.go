package receiver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v56/github"
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

// FallibleTrigger is a Trigger that can fail to hand an event on (the GitOps controller
// records a hint through the API, so that the leader replica acts on it whichever replica
// received the delivery). When a Trigger implements it, the handler calls TryTrigger instead
// of Trigger; an error is answered 503 and the delivery id is forgotten, so that GitHub's
// "Redeliver" of it counts.
type FallibleTrigger interface {
	// TryTrigger hints that the state behind e changed, and says whether the hint was taken.
	TryTrigger(ctx context.Context, e Event) error
}

// Secrets finds the webhook secrets configured for a repository. The Gitea and GitLab
// receivers use it; the GitHub Handler verifies a delivery before reading its body, so it
// takes a SecretList instead.
type Secrets interface {
	// SecretsFor returns every secret configured for the repository "owner/name" (several
	// GitGates may bind one repository); none when the repository is not configured.
	SecretsFor(ctx context.Context, repository string) ([][]byte, error)
}

// Secret is one configured webhook secret and the repositories ("owner/name") it is
// configured for.
type Secret struct {
	// Value is the secret.
	Value []byte
	// Repositories are the repositories whose deliveries it signs.
	Repositories []string
}

// SecretList lists every configured webhook secret, so that a delivery's signature is verified
// before any byte of its body is parsed (the repository is read from the body).
type SecretList interface {
	// WebhookSecrets returns the configured secrets, from memory. refresh says that a signature
	// matched none of them (the secret may have just been rotated): the implementation should
	// read them again, and may bound how often it does so.
	WebhookSecrets(ctx context.Context, refresh bool) ([]Secret, error)
}

// Options configure a Handler.
type Options struct {
	// Trigger receives the accepted events. Required.
	Trigger Trigger
	// Secrets lists the secrets a delivery is verified with. Required.
	Secrets SecretList
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
	secrets SecretList
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
	signature := r.Header.Get(headerSignature)
	if err := checkSignatureHeader(signature); err != nil {
		return skip(http.StatusUnauthorized, ReasonMissingSignature, err.Error())
	}
	if !handledKind(kind) {
		return skip(http.StatusAccepted, ReasonUnknownEvent, fmt.Sprintf("event %q is not used by sluice, ignored", kind))
	}
	secrets, match, a, ok := h.verify(r.Context(), raw, signature)
	if !ok {
		return a
	}
	body, err := payload(mediaType, raw, signature, match.Value)
	if err != nil {
		return skip(http.StatusBadRequest, ReasonMalformed, "malformed payload: "+err.Error())
	}
	e, err := decode(kind, body)
	if err != nil {
		return skip(http.StatusBadRequest, ReasonMalformed, "malformed payload: "+err.Error())
	}
	if !containsFold(match.Repositories, e.Repository) {
		// Signed with the secret of another repository.
		for _, s := range secrets {
			if len(s.Value) > 0 && containsFold(s.Repositories, e.Repository) {
				return skip(http.StatusUnauthorized, ReasonBadSignature, fmt.Sprintf("X-Hub-Signature-256 does not match the webhook secret of repository %q", e.Repository))
			}
		}
		return skip(http.StatusUnauthorized, ReasonUnknownRepository, fmt.Sprintf("no webhook secret is configured for repository %q", e.Repository))
	}
	if kind == KindPullRequest && !handledAction(e.Action) {
		return skip(http.StatusAccepted, ReasonIgnoredAction, fmt.Sprintf("pull_request action %q is not used by sluice, ignored", e.Action))
	}
	if why := ignoredConversation(e); why != "" {
		return skip(http.StatusAccepted, ReasonIgnoredAction, why)
	}
	if kind == KindCheckRun && e.Action != ActionRequestedAction {
		return skip(http.StatusAccepted, ReasonIgnoredAction, fmt.Sprintf("check_run action %q is not used by sluice, ignored", e.Action))
	}
	if kind == KindCheckRun {
		e.signature, e.payload = signature, string(raw)
	}
	e.Delivery = id
	if hook, err := strconv.ParseInt(r.Header.Get(headerHookID), 10, 64); err == nil && e.HookID == 0 {
		e.HookID = hook
	}
	if !h.seen.add(id) {
		return skip(http.StatusOK, ReasonDuplicate, "duplicate delivery, ignored")
	}
	if ft, ok := h.trigger.(FallibleTrigger); ok {
		if err := ft.TryTrigger(r.Context(), e); err != nil {
			h.seen.forget(id)
			ctrl.LoggerFrom(r.Context()).Error(err, "Handing a GitHub webhook delivery on failed", "repository", e.Repository)
			return skip(http.StatusServiceUnavailable, ReasonTriggerFailed, "the delivery could not be handed to the controller; redeliver it")
		}
	} else {
		h.trigger.Trigger(r.Context(), e)
	}
	return answer{status: http.StatusOK, accepted: true, reason: string(kind), message: "accepted"}
}

// verify checks the signature against every configured secret with go-github's
// ValidateSignature (an HMAC-SHA256 over the exact bytes received, compared in constant
// time), before anything of the body is parsed. It returns the secrets, and the secret that
// matched with the repositories of every secret of that value. A signature that matches none
// asks once for a fresh list (a rotated secret).
func (h *Handler) verify(ctx context.Context, raw []byte, signature string) ([]Secret, Secret, answer, bool) {
	secrets, err := h.secrets.WebhookSecrets(ctx, false)
	if err == nil && len(matching(secrets, raw, signature).Value) == 0 {
		secrets, err = h.secrets.WebhookSecrets(ctx, true)
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Looking up the webhook secrets failed")
		return nil, Secret{}, skip(http.StatusInternalServerError, ReasonSecretLookupFailed, "looking up the webhook secret failed"), false
	}
	if len(secrets) == 0 {
		return nil, Secret{}, skip(http.StatusUnauthorized, ReasonUnknownRepository, "no webhook secret is configured for any repository"), false
	}
	match := matching(secrets, raw, signature)
	if len(match.Value) == 0 {
		return nil, Secret{}, skip(http.StatusUnauthorized, ReasonBadSignature, "X-Hub-Signature-256 does not match the webhook secret"), false
	}
	return secrets, match, answer{}, true
}

// matching returns the first secret that signed raw, with the repositories of every secret of
// that value; a zero Secret when none did. Each distinct secret is tried once; empty secrets
// never match (go-github would skip the check for them).
func matching(secrets []Secret, raw []byte, signature string) Secret {
	var match Secret
	tried := map[string]bool{}
	for _, s := range secrets {
		if len(s.Value) == 0 {
			continue
		}
		k := string(s.Value)
		if !tried[k] {
			tried[k] = true
			if len(match.Value) == 0 && github.ValidateSignature(signature, raw, s.Value) == nil {
				match.Value = s.Value
			}
		}
		if len(match.Value) > 0 && string(match.Value) == k {
			match.Repositories = append(match.Repositories, s.Repositories...)
		}
	}
	return match
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// skip is an answer that hands nothing to the Trigger.
func skip(status int, reason, message string) answer {
	return answer{status: status, reason: reason, message: message}
}

func tooLarge(limit int64) answer {
	return skip(http.StatusRequestEntityTooLarge, ReasonTooLarge, fmt.Sprintf("body larger than %d bytes", limit))
}

// checkSignatureHeader checks that the header is "sha256=<64 hex digits>". It is written
// here rather than left to go-github because ValidateSignature also accepts "sha1=" and
// "sha512=" signatures (sluice refuses the legacy SHA-1 one), and answers a malformed header
// and a mismatch alike (sluice answers a malformed header as missing, before any secret is
// looked up).
func checkSignatureHeader(header string) error {
	if header == "" {
		return errors.New("header X-Hub-Signature-256 is missing (set a secret on the webhook)")
	}
	hexMAC, ok := strings.CutPrefix(header, "sha256=")
	if _, err := hex.DecodeString(hexMAC); !ok || len(hexMAC) != 2*sha256.Size || err != nil {
		return errors.New("header X-Hub-Signature-256 is not sha256=<64 hex digits>")
	}
	return nil
}

// payload is the JSON of a verified delivery, through go-github's ValidatePayloadFromBody: the
// body itself, or the payload field of a form-encoded one. key is the secret that verified it.
func payload(mediaType string, raw []byte, signature string, key []byte) ([]byte, error) {
	p, err := github.ValidatePayloadFromBody(mediaType, bytes.NewReader(raw), signature, key)
	if err != nil {
		return nil, &FieldError{Field: "payload", Problem: "cannot be read from the form: " + err.Error()}
	}
	if len(p) == 0 && mediaType == "application/x-www-form-urlencoded" {
		return nil, &FieldError{Field: "payload", Problem: "is missing from the form"}
	}
	return p, nil
}
