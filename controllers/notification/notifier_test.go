package notification_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
	"github.com/sluice-dev/sluice/test/release"
)

const hookSecret = "s3cret"

// notifierFor creates, in ns, the Secret of the webhook's signing key and a
// Notifier of the Rollouts app=checkout sending to the receiver (and to
// chat, when given), and waits until it has seen the Rollout.
func notifierFor(t *testing.T, ns string, hook *receiver, chat *chat) {
	t.Helper()
	secrets := []*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hook"}, StringData: map[string]string{"token": hookSecret}}}
	sinks := []notificationv1alpha1.Sink{{Name: "hook", Webhook: &notificationv1alpha1.WebhookSink{URL: hook.URL,
		SecretRef: &meta.LocalObjectReference{Name: "hook"}}}}
	if chat != nil {
		secrets = append(secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "chat"}, StringData: map[string]string{"address": chat.URL}})
		sinks = append(sinks, notificationv1alpha1.Sink{Name: "chat", Slack: &notificationv1alpha1.SlackSink{SecretRef: meta.LocalObjectReference{Name: "chat"}}})
	}
	for _, s := range secrets {
		if err := suite.c.Create(poll.Context(t), s); err != nil {
			t.Fatal(err)
		}
	}
	n := &notificationv1alpha1.Notifier{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		Spec: notificationv1alpha1.NotifierSpec{
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Sinks:           sinks,
		},
	}
	if err := suite.c.Create(poll.Context(t), n); err != nil {
		t.Fatalf("creating notifier: %v", err)
	}
	poll.Until(t, "the notifier seeing the rollout", func() (bool, string) {
		got := notifier(t, ns)
		return len(got.Status.Rollouts) == 1, fmt.Sprintf("%+v", got.Status)
	})
}

func notifier(t *testing.T, ns string) *notificationv1alpha1.Notifier {
	t.Helper()
	n := &notificationv1alpha1.Notifier{}
	if err := suite.c.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: "team"}, n); err != nil {
		t.Fatal(err)
	}
	return n
}

func waitEvents(t *testing.T, r *receiver, want ...notificationv1alpha1.Event) map[notificationv1alpha1.Event][]notificationv1alpha1.Notification {
	t.Helper()
	var got map[notificationv1alpha1.Event][]notificationv1alpha1.Notification
	poll.Until(t, fmt.Sprintf("notifications %v", want), func() (bool, string) {
		got = r.events()
		for _, e := range want {
			if len(got[e]) == 0 {
				return false, fmt.Sprint(got)
			}
		}
		return true, ""
	})
	return got
}

// Given a Rollout bound to a Notifier with a signed webhook and a Slack
// sink,
// when a new image is released, its first step approved, and the release
// completes,
// then the webhook receives, once each and signed, ReleaseStarted,
// StepPaused at step 1, Approved naming who approved, and Completed, every
// message naming the Rollout, the step and the revision; the chat gets the
// same transitions as text.
func TestNotifier_releaseTransitions_reachTheWebhookAndTheChat(t *testing.T) {
	hook, chat := newReceiver(t, hookSecret, 0), newChat(t)
	ns, d := release.App(t, suite.c, "notify", "checkout")
	notifierFor(t, ns, hook, chat)

	kube.SetImage(t, suite.c, d, "app:v2")
	got := waitEvents(t, hook, notificationv1alpha1.EventReleaseStarted, notificationv1alpha1.EventStepPaused)
	paused := got[notificationv1alpha1.EventStepPaused][0]
	if paused.Step != 1 || paused.Steps != 2 || paused.Revision == "" || paused.Namespace != ns || paused.Rollout != "checkout" {
		t.Errorf("StepPaused %+v", paused)
	}

	ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "checkout"}}
	patch := []byte(`{"metadata":{"annotations":{"sluice.dev/approve":"1"}}}`)
	if err := suite.c.Patch(poll.Context(t), ro, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("approving: %v", err)
	}
	got = waitEvents(t, hook, notificationv1alpha1.EventApproved, notificationv1alpha1.EventCompleted)
	approved := got[notificationv1alpha1.EventApproved][0]
	if len(approved.Approvals) != 1 || approved.Approvals[0].By == "" || approved.Approvals[0].Step != 1 ||
		!strings.Contains(approved.Message, "Step 1 approved by "+approved.Approvals[0].By) {
		t.Errorf("Approved %+v", approved)
	}
	completed := got[notificationv1alpha1.EventCompleted][0]
	if len(completed.Approvals) != 1 || completed.Revision != paused.Revision {
		t.Errorf("Completed %+v: want the release's approval and revision", completed)
	}

	requests, refused, byKey := hook.counts()
	if refused != 0 {
		t.Errorf("%d requests refused for their signature", refused)
	}
	for k, n := range byKey {
		if n != 1 {
			t.Errorf("key %s delivered %d times", k, n)
		}
	}
	if requests != len(byKey) {
		t.Errorf("%d requests for %d notifications", requests, len(byKey))
	}
	poll.Until(t, "the chat receiving the four transitions", func() (bool, string) {
		texts := chat.texts()
		joined := strings.Join(texts, "\n")
		ok := len(texts) >= 4 && strings.Contains(joined, "*"+ns+"/checkout*: StepPaused") && strings.Contains(joined, "Completed")
		return ok, joined
	})
}

// Given a webhook that answers 503 twice before it accepts,
// when the release pauses at step 1,
// then the notifications still arrive, each once, and the Notifier's
// deliveries say it took more than one attempt.
func TestNotifier_failingReceiver_isRetriedWithBackOff(t *testing.T) {
	hook := newReceiver(t, hookSecret, 2)
	ns, d := release.App(t, suite.c, "notify", "checkout")
	notifierFor(t, ns, hook, nil)

	kube.SetImage(t, suite.c, d, "app:v2")
	waitEvents(t, hook, notificationv1alpha1.EventReleaseStarted, notificationv1alpha1.EventStepPaused)
	poll.Until(t, "deliveries recorded", func() (bool, string) {
		st := notifier(t, ns).Status
		retried := false
		for _, dl := range st.Deliveries {
			if !dl.Delivered {
				return false, fmt.Sprintf("%+v", st.Deliveries)
			}
			retried = retried || dl.Attempts > 1
		}
		return len(st.Deliveries) >= 2 && retried && len(st.Outbox) == 0, fmt.Sprintf("%+v", st)
	})
	requests, _, byKey := hook.counts()
	if requests <= len(byKey) {
		t.Errorf("%d requests for %d notifications: want the failed attempts repeated", requests, len(byKey))
	}
}

// Given a Notifier and a MetricGate whose web metric fails at step 1,
// when the analysis fails,
// then an AnalysisFailed notification names the gate, the step, the
// metric and its value, and an Aborted one says the gate aborted the
// release at step 1, with the rollout and the revision.
func TestNotifier_failedAnalysis_isNotified(t *testing.T) {
	hook := newReceiver(t, hookSecret, 0)
	stats := newStats(t, `{"errorRate": 0.2}`)
	ns, d := release.App(t, suite.c, "notify", "checkout")
	notifierFor(t, ns, hook, nil)
	g := &analysisv1alpha1.MetricGate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "errors"},
		Spec: analysisv1alpha1.MetricGateSpec{
			RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}},
			Run:             analysisv1alpha1.RunPolicy{Steps: []int32{1}},
			Metrics: []analysisv1alpha1.Metric{{Name: "error-rate", Count: 3, Interval: metav1.Duration{Duration: time.Second},
				SuccessCondition: "result < 0.05",
				Provider:         analysisv1alpha1.MetricProvider{Web: &analysisv1alpha1.WebMetric{URL: stats.URL, Method: "GET", JSONPath: "{.errorRate}"}}}},
		},
	}
	if err := suite.c.Create(poll.Context(t), g); err != nil {
		t.Fatal(err)
	}

	kube.SetImage(t, suite.c, d, "app:v2")
	got := waitEvents(t, hook, notificationv1alpha1.EventAnalysisFailed, notificationv1alpha1.EventAborted)
	n := got[notificationv1alpha1.EventAnalysisFailed][0]
	if want := "MetricGate errors, step 1: error-rate 0.2: result < 0.05 is false; aborting the release"; n.Message != want {
		t.Errorf("AnalysisFailed message %q, want %q", n.Message, want)
	}
	ab := got[notificationv1alpha1.EventAborted][0]
	if ab.Rollout != "checkout" || ab.Step != 1 || ab.Revision == "" ||
		!strings.Contains(ab.Message, "aborted by MetricGate errors via analysis at step 1/2 (error-rate 0.2: result < 0.05 is false)") {
		t.Errorf("Aborted notification %+v: want the rollout, step 1, the revision and who aborted it why", ab)
	}
}

// Given a webhook whose first answer is lost (it keeps the notification
// but sluice sees a 500),
// when sluice sends the notification again under the same key,
// then the receiver keeps it once: the key de-duplicates the repeat.
func TestNotifier_repeatedDelivery_isDeDuplicatedByItsKey(t *testing.T) {
	hook := newReceiver(t, hookSecret, 0)
	hook.loseFirst = 1
	ns, d := release.App(t, suite.c, "notify", "checkout")
	notifierFor(t, ns, hook, nil)

	kube.SetImage(t, suite.c, d, "app:v2")
	waitEvents(t, hook, notificationv1alpha1.EventReleaseStarted, notificationv1alpha1.EventStepPaused)
	poll.Until(t, "a repeated delivery", func() (bool, string) {
		_, _, byKey := hook.counts()
		for _, n := range byKey {
			if n > 1 {
				return true, ""
			}
		}
		return false, fmt.Sprint(byKey)
	})
	for e, ns := range hook.events() {
		if len(ns) != 1 {
			t.Errorf("%s kept %d times", e, len(ns))
		}
	}
}
