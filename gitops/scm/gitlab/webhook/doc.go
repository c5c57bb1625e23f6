// Package webhook is sluice's intake for GitLab webhook deliveries (gitlab.com and self-managed):
// an http.Handler that authenticates a delivery by its secret token, decodes the few fields
// sluice needs into the hint GitHub's receiver produces (gitops/receiver.Event), drops replays,
// and hands it to the same receiver.Trigger. It never changes anything itself.
//
// # Contract
//
// The handler is built with New from the same receiver.Secrets and receiver.Trigger as the
// GitHub receiver: SecretsFor(ctx, "group/subgroup/project") returns the secret tokens of every
// GitGate bound to that project (GitLab paths may hold subgroups, so the repository of an Event
// is the project's path with its whole namespace); Trigger(ctx, Event) is called once per
// authentic, well-formed, first-seen delivery of a handled event, and should only enqueue (the
// reconciler re-reads labels, merge requests and commits from the API; an Event is a hint,
// never the truth).
//
// The webhook is a project (or group) webhook with a secret token and the triggers sluice
// reads: "Push events" (and "Tag push events"), "Merge request events", and for comment
// commands "Comments".
//
// # Authentication
//
// GitLab sends the webhook's secret token itself in X-Gitlab-Token: there is no signature of the
// body. The token is compared in constant time against every secret of the project (after
// hashing both to a fixed length, so that neither content nor length leaks), before the event is
// decoded; only the project's path is read first, to find the secrets. A delivery is identified
// by X-Gitlab-Event-UUID (Idempotency-Key when it is missing, as GitLab keeps that across its
// retries), and one already accepted within DeliveryTTL is acknowledged and dropped.
//
// # What a delivery is turned into
//
//   - Merge Request Hook: actions open, reopen and close as receiver.ActionOpened,
//     ActionReopened and ActionClosed; merge as ActionClosed with Merged (and MergeCommitSHA,
//     when GitLab names a merge commit: a fast-forward or squash merge has none); update with
//     oldrev (new commits) as ActionSynchronize; update whose changes.labels differ between
//     previous and current as ActionLabeled or ActionUnlabeled with the label, when exactly one
//     was added or removed, else ActionLabeled without one. Number is the merge request's iid,
//     SHA its last commit, Ref its target branch. The approval actions (approval, approved,
//     unapproval, unapproved) are receiver.KindPullRequestReview, submitted or dismissed. Other
//     updates are acknowledged and ignored.
//   - Push Hook and Tag Push Hook: Ref and the new head commit (after; all zeros for a deleted
//     ref), the pusher as Sender.
//   - Note Hook on a merge request (KindIssueComment, actions created and edited): Number is the
//     merge request's iid. Comments on issues, commits and snippets are acknowledged and ignored.
//
// Every other event is acknowledged with 202 and ignored.
//
// # What a delivery gets back
//
//	405 method is not POST
//	415 content type is not application/json
//	413 body larger than MaxBodyBytes
//	400 X-Gitlab-Event, or both X-Gitlab-Event-UUID and Idempotency-Key, missing; payload not
//	    JSON; a required field missing or malformed (the message names it, e.g.
//	    "object_attributes.last_commit.id")
//	401 X-Gitlab-Token missing, no secret for the project, or no secret matches
//	500 the secret lookup failed
//	202 an event or action sluice does not handle (nothing triggered)
//	200 "duplicate delivery, ignored" for a delivery id already accepted (nothing triggered)
//	200 "accepted" after Trigger was called
//
// Unhandled events are answered before any secret lookup. Deliveries are counted through
// receiver.Metrics with receiver's Reason constants.
package webhook
