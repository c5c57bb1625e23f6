// Package webhook is sluice's intake for Gitea and Forgejo webhook deliveries: an http.Handler
// that authenticates a delivery, decodes the few fields sluice needs into the hint GitHub's
// receiver produces (gitops/receiver.Event), drops replays, and hands it to the same
// receiver.Trigger. It never changes anything itself.
//
// # Contract
//
// The handler is built with New from the same receiver.Secrets and receiver.Trigger as the
// GitHub receiver: SecretsFor(ctx, "owner/repo") returns the webhook secrets of every GitGate
// bound to that repository; Trigger(ctx, Event) is called once per authentic, well-formed,
// first-seen delivery of a handled event, and should only enqueue (the reconciler re-reads
// labels, pull requests and commits from the API; an Event is a hint, never the truth).
//
// The webhook is a repository (or organisation) webhook of type "gitea" (Forgejo: "forgejo")
// with content type JSON or form, a secret, and the events sluice reads: "push", "pull_request",
// "pull_request_sync", "pull_request_label", and for comment commands "issue_comment" /
// "pull_request_comment".
//
// # What a delivery is turned into
//
// Gitea names events by X-Gitea-Event (Forgejo also sends X-Forgejo-Event; it is preferred when
// present) and signs the JSON payload with X-Gitea-Signature / X-Forgejo-Signature: the hex
// HMAC-SHA256 of the payload, keyed with the webhook's secret (for a form delivery, of its
// payload field, which is what Gitea signs). Handled are:
//
//   - pull_request, actions opened, reopened, synchronized (as receiver.ActionSynchronize),
//     closed (with Merged and MergeCommitSHA), label_updated and label_cleared. Gitea sends one
//     label_updated for any change of the labels and names no label: it becomes
//     receiver.ActionLabeled with an empty Label, label_cleared receiver.ActionUnlabeled.
//   - push: Ref and the new head commit (SHA).
//   - issue_comment on a pull request (KindIssueComment, actions created, edited, deleted):
//     Number is the pull request's. Comments on issues are acknowledged and ignored.
//
// Every other event or action is acknowledged with 202 and ignored.
//
// # What a delivery gets back
//
//	405 method is not POST
//	415 content type is neither application/json nor application/x-www-form-urlencoded
//	413 body larger than MaxBodyBytes
//	400 X-Gitea-Event or X-Gitea-Delivery missing; payload not JSON; a required field missing or
//	    malformed (the message names it, e.g. "pull_request.head.sha")
//	401 signature missing or malformed, no secret for the repository, or no secret matches
//	500 the secret lookup failed
//	202 an event or action sluice does not handle (nothing triggered)
//	200 "duplicate delivery, ignored" for a delivery id already accepted (nothing triggered)
//	200 "accepted" after Trigger was called
//
// The signature is compared in constant time against every secret of the repository, before
// the event is decoded; only the repository's name is read first, to find the secrets. Unhandled
// events are answered before any secret lookup. Deliveries are counted through receiver.Metrics
// with receiver's Reason constants.
package webhook
