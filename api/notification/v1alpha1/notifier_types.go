package v1alpha1

import (
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Notifier sends the transitions of the releases of the Rollouts its
// selector picks to its sinks. Each transition is sent once per sink (a
// receiver may still see it twice after a restart: every message carries a
// key to de-duplicate on), retried with back-off when a sink fails, and
// never holds a release.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ntf
// +kubebuilder:printcolumn:name="ROLLOUTS",type="integer",JSONPath=".status.boundRollouts",description="How many Rollouts are bound."
// +kubebuilder:printcolumn:name="PENDING",type="integer",JSONPath=".status.pending",description="Notifications waiting to be delivered."
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the last reconciliation succeeded."
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].message",description="What the last reconciliation found."
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type Notifier struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says which releases are notified, of what, and where.
	// +required
	Spec NotifierSpec `json:"spec"`
	// Status reports what was sent and what waits.
	// +optional
	Status NotifierStatus `json:"status,omitempty"`
}

// NotifierList is a list of Notifiers.
//
// +kubebuilder:object:root=true
type NotifierList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Notifiers.
	Items []Notifier `json:"items"`
}

// NotifierSpec says which releases are notified, of what, and where.
type NotifierSpec struct {
	// RolloutSelector picks the Rollouts of the Notifier's namespace whose
	// releases it notifies. An empty selector picks every Rollout of the
	// namespace.
	// +required
	RolloutSelector metav1.LabelSelector `json:"rolloutSelector"`
	// Events lists the transitions sent; empty sends all of them.
	// +kubebuilder:validation:MaxItems=7
	// +listType=set
	// +optional
	Events []Event `json:"events,omitempty"`
	// Sinks receive every notification.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +listType=map
	// +listMapKey=name
	// +required
	Sinks []Sink `json:"sinks"`
	// Suspend stops sending: transitions are still recorded, and sent once
	// it is set back to false.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// Event is a transition of a release.
// +kubebuilder:validation:Enum=ReleaseStarted;StepPaused;Approved;AnalysisFailed;Aborted;RolledBack;Completed
type Event string

// The transitions notified.
const (
	// EventReleaseStarted: a new revision started releasing.
	EventReleaseStarted Event = "ReleaseStarted"
	// EventStepPaused: a step paused, waiting for an approval, its pause or
	// its analysis.
	EventStepPaused Event = "StepPaused"
	// EventApproved: a step was approved.
	EventApproved Event = "Approved"
	// EventAnalysisFailed: a MetricGate's analysis of the release failed.
	EventAnalysisFailed Event = "AnalysisFailed"
	// EventAborted: the release was aborted: pods and traffic back on
	// stable.
	EventAborted Event = "Aborted"
	// EventRolledBack: the release was rolled back to the stable revision.
	EventRolledBack Event = "RolledBack"
	// EventCompleted: the release completed.
	EventCompleted Event = "Completed"
)

// Sink is where notifications go: exactly one of its kinds is set.
//
// +kubebuilder:validation:XValidation:rule="[has(self.webhook), has(self.slack)].filter(x, x).size() == 1",message="spec.sinks[]: set exactly one of webhook and slack"
type Sink struct {
	// Name of the sink, as the status names it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
	// +required
	Name string `json:"name"`
	// Webhook posts each notification as JSON, signed with HMAC-SHA256.
	// +optional
	Webhook *WebhookSink `json:"webhook,omitempty"`
	// Slack posts each notification to a Slack-compatible incoming webhook.
	// +optional
	Slack *SlackSink `json:"slack,omitempty"`
}

// WebhookSink posts notifications as JSON to a URL. Each request carries
// X-Sluice-Event (the transition), X-Sluice-Delivery (the key to
// de-duplicate on) and, with a secret, X-Sluice-Signature-256:
// "sha256=" and the hex HMAC-SHA256 of the body keyed with the secret.
type WebhookSink struct {
	// URL the notifications are posted to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.startsWith('https://') || self.startsWith('http://')",message="spec.sinks[].webhook.url must be an http(s) URL"
	// +required
	URL string `json:"url"`
	// SecretRef names a Secret of the Notifier's namespace whose key
	// "token" signs the requests. Without it they are not signed.
	// +optional
	SecretRef *meta.LocalObjectReference `json:"secretRef,omitempty"`
}

// SlackSink posts notifications to an incoming webhook of Slack, or of any
// chat that accepts Slack's payload (Mattermost, Rocket.Chat...).
type SlackSink struct {
	// SecretRef names a Secret of the Notifier's namespace whose key
	// "address" is the incoming webhook's URL (a secret: anyone with it can
	// post).
	// +required
	SecretRef meta.LocalObjectReference `json:"secretRef"`
}

// NotifierStatus reports what a Notifier sent and what waits.
type NotifierStatus struct {
	// ObservedGeneration is the generation of the spec last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Reconciling and Stalled, as Flux's controllers
	// report them.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// BoundRollouts is how many Rollouts the selector picks.
	// +optional
	BoundRollouts int32 `json:"boundRollouts,omitempty"`
	// Pending is how many notifications wait in the outbox.
	// +optional
	Pending int32 `json:"pending,omitempty"`
	// Rollouts records, for each bound Rollout, the transitions of its
	// current release already queued, so that each is sent once.
	// +kubebuilder:validation:MaxItems=200
	// +listType=map
	// +listMapKey=name
	// +optional
	Rollouts []NotifiedRollout `json:"rollouts,omitempty"`
	// Outbox holds the notifications not yet delivered to every sink,
	// oldest first.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Outbox []OutboxEntry `json:"outbox,omitempty"`
	// Deliveries are the last notifications delivered or given up on,
	// newest last.
	// +kubebuilder:validation:MaxItems=20
	// +optional
	Deliveries []Delivery `json:"deliveries,omitempty"`
	// ReconcileRequestStatus records the last reconcile.fluxcd.io/requestedAt
	// handled.
	meta.ReconcileRequestStatus `json:",inline"`
}

// NotifiedRollout is what a Notifier recorded of one Rollout's release.
type NotifiedRollout struct {
	// Name of the Rollout.
	Name string `json:"name"`
	// Release identifies the release: its revision and rollout-id.
	// +optional
	Release string `json:"release,omitempty"`
	// Queued are the keys of the transitions of the release already queued
	// (or seen before the Notifier bound the Rollout), oldest first.
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Queued []string `json:"queued,omitempty"`
}

// OutboxEntry is a notification waiting for some sinks.
type OutboxEntry struct {
	// Notification is what is sent.
	Notification Notification `json:"notification"`
	// Sinks are the sinks still to deliver it to.
	// +kubebuilder:validation:MaxItems=10
	// +listType=set
	Sinks []string `json:"sinks"`
	// Attempts counts the failed attempts so far.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// NextAttempt is when the next attempt is due.
	// +optional
	NextAttempt *metav1.Time `json:"nextAttempt,omitempty"`
	// LastError is the last attempt's error.
	// +optional
	LastError string `json:"lastError,omitempty"`
}

// Delivery is the outcome of a notification.
type Delivery struct {
	// Key of the notification.
	Key string `json:"key"`
	// Event of the notification.
	Event Event `json:"event"`
	// Rollout the notification is about.
	Rollout string `json:"rollout"`
	// Delivered is true when every sink accepted it, false when sluice gave
	// up on some.
	Delivered bool `json:"delivered"`
	// Attempts is how many attempts it took.
	Attempts int32 `json:"attempts"`
	// At is when it was delivered or given up on.
	At metav1.Time `json:"at"`
	// Message names the sinks given up on and why.
	// +optional
	Message string `json:"message,omitempty"`
}

// Notification is the body of the generic webhook (as JSON), and what
// Slack's message says.
type Notification struct {
	// Key identifies the transition: the same transition always has the
	// same key, so receivers de-duplicate on it.
	Key string `json:"key"`
	// Event is the transition.
	Event Event `json:"event"`
	// Namespace of the Rollout.
	Namespace string `json:"namespace"`
	// Rollout is the Rollout's name.
	Rollout string `json:"rollout"`
	// Revision is the revision being released.
	// +optional
	Revision string `json:"revision,omitempty"`
	// StableRevision is the revision being replaced.
	// +optional
	StableRevision string `json:"stableRevision,omitempty"`
	// Step is the step the release is at, from 1.
	// +optional
	Step int32 `json:"step,omitempty"`
	// Steps is how many steps the release has.
	// +optional
	Steps int32 `json:"steps,omitempty"`
	// Commit is the Git commit being released, when a GitGate knows it.
	// +optional
	Commit string `json:"commit,omitempty"`
	// Approvals are the approvals of the release so far: who approved which
	// step, how.
	// +kubebuilder:validation:MaxItems=50
	// +optional
	Approvals []Approval `json:"approvals,omitempty"`
	// Message says what happened, for people.
	// +optional
	Message string `json:"message,omitempty"`
	// Time is when the transition was seen.
	Time metav1.Time `json:"time"`
}

// Approval is one approval of a release.
type Approval struct {
	// Step approved (the last one, for a multi-step approval).
	Step int32 `json:"step"`
	// By is who approved, as authenticated.
	By string `json:"by"`
	// Via is how: annotation, status, label, commit...
	// +optional
	Via string `json:"via,omitempty"`
}

// GetConditions returns the conditions.
func (n *Notifier) GetConditions() []metav1.Condition { return n.Status.Conditions }

// SetConditions sets the conditions.
func (n *Notifier) SetConditions(c []metav1.Condition) { n.Status.Conditions = c }

// Wants reports whether the Notifier sends e.
func (s *NotifierSpec) Wants(e Event) bool {
	if len(s.Events) == 0 {
		return true
	}
	for _, x := range s.Events {
		if x == e {
			return true
		}
	}
	return false
}
