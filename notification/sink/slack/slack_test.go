package slack

import (
	"strings"
	"testing"

	notificationv1alpha1 "github.com/sluice-dev/sluice/api/notification/v1alpha1"
)

func TestPayloadOf(t *testing.T) {
	p := PayloadOf(notificationv1alpha1.Notification{
		Event: notificationv1alpha1.EventAnalysisFailed, Namespace: "shop", Rollout: "checkout", Step: 2, Steps: 4,
		Revision: "7c9b", StableRevision: "5d8f", Commit: "1a2b3c4d5e6f7a8b9c0d",
		Approvals: []notificationv1alpha1.Approval{{Step: 1, By: "alice"}},
		Message:   "MetricGate errors, step 2: error-rate 0.12: result < 0.05 is false",
	})
	for _, want := range []string{":red_circle: *shop/checkout*: AnalysisFailed", "error-rate 0.12", "step 2/4", "revision `7c9b`",
		"commit `1a2b3c4d5e6f`", "step 1 approved by alice"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("text %q lacks %q", p.Text, want)
		}
	}
	if len(p.Blocks) != 2 || p.Blocks[0].Type != "section" || p.Blocks[1].Type != "context" {
		t.Errorf("blocks %+v", p.Blocks)
	}
}
