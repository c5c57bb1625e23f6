// Package receiver is sluice's intake for GitHub webhook deliveries: an http.Handler that
// authenticates a delivery, decodes the few fields sluice needs, drops replays, and hands the
// result to a Trigger. It never changes anything itself.
//
// # Contract with the GitOps controller
//
// The controller that owns GitGates builds the handler with New and serves it (for example
// on the manager's webhook or metrics server, or a dedicated listener). It implements two
// interfaces:
//
//   - SecretList: WebhookSecrets(ctx, refresh) returns every configured webhook secret with
//     the repositories ("owner/repo") it is for, from memory (refresh: a signature matched
//     none, read them again). A delivery is authentic when its X-Hub-Signature-256 matches a
//     secret configured for the repository the payload names. The signature is checked against
//     every secret before any byte of the body is parsed, so an unauthenticated sender never
//     reaches the JSON decoder and never makes the controller read a Secret.
//   - Trigger: Trigger(ctx, Event) is called once per authentic, well-formed, first-seen
//     delivery of a handled event. An Event is a hint, never the truth: the implementation
//     should enqueue the GitGates (and their Rollouts) bound to Event.Repository and return at
//     once; the reconciler then re-reads labels, pull requests and commits from the SCM API
//     and applies the approval policy there (who added a label, which revision, which step).
//     Trigger must not block: ctx is the HTTP request's and ends with the response. A Trigger
//     that also implements FallibleTrigger is called through TryTrigger instead: sluice's
//     records the hint on the GitGates through the API, so that the leader replica acts on a
//     delivery any replica received, and a failure to record it is answered 503 (the delivery
//     id is then forgotten, so a redelivery counts).
//
// The Gitea and GitLab receivers take the older Secrets interface (SecretsFor a repository).
//
// Handled events are pull_request (actions opened, reopened, synchronize, closed, labeled,
// unlabeled; other actions are acknowledged and ignored), push, ping, issue_comment on a pull
// request (created, edited: comment commands; comments on issues are acknowledged and
// ignored), pull_request_review (submitted, dismissed) and check_run (action
// requested_action only: a button of a check run pressed; it carries the check run, the button
// and who pressed it, and Event.SignedWith tells a GitGate whether its own secret signed the
// delivery, which the controller records as a SignedPress, see press.go). Every other event is
// acknowledged with 202 and ignored. Only repository webhooks and organisation webhooks for
// repository events are supported, since the secret is looked up by the delivery's
// repository.
//
// # What a delivery gets back
//
//	405 method is not POST
//	415 content type is neither application/json nor application/x-www-form-urlencoded
//	413 body larger than MaxBodyBytes (GitHub caps payloads at 25 MiB)
//	400 X-GitHub-Event or X-GitHub-Delivery missing; payload not JSON; a required field missing
//	    or malformed (the message names it, e.g. "pull_request.head.sha")
//	401 X-Hub-Signature-256 missing or malformed, no secret for the repository, or no secret
//	    of the repository matches the signature
//	500 the secret lookup failed
//	503 the FallibleTrigger could not record the hint (redeliver it)
//	202 an event or action sluice does not handle (nothing triggered)
//	200 "duplicate delivery, ignored" for an X-GitHub-Delivery already accepted (nothing triggered)
//	200 "accepted" after Trigger was called
//
// The signature is an HMAC-SHA256 over the exact bytes received, compared in constant time
// (go-github's ValidateSignature); the legacy SHA-1 X-Hub-Signature is not accepted. The
// payload is read with go-github's ValidatePayloadFromBody and ParseWebHook, then checked for
// the fields sluice relies on. Unhandled events are answered before any
// secret lookup, since nothing happens for them. Deliveries are de-duplicated by
// X-GitHub-Delivery in a bounded set that forgets an id after DeliveryTTL, so GitHub's
// "Redeliver" of an accepted delivery within that window is ignored, and a replay by someone
// who captured a signed delivery triggers nothing new (and, being only a hint, could at worst
// cause one extra reconcile after the window).
//
// # Counters
//
// Every delivery is counted once through Metrics: accepted with its event as the reason, or
// not accepted with a Reason constant (duplicate, unknown-event, bad-signature, ...). The
// manager's *metrics.Metrics (observability/metrics) implements it and serves the counts as
// sluice_webhook_deliveries_total{result, reason}. There is no global state.
package receiver
