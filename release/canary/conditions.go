package canary

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// setCondition sets a condition, stamping times only when it changes.
func (m *machine) setCondition(t rolloutsv1beta1.RolloutConditionType, status corev1.ConditionStatus, reason, message string) {
	now := m.now()
	for i := range m.st.Conditions {
		c := &m.st.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		if c.Status != status || c.Reason != reason || c.Message != message {
			c.LastUpdateTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	m.st.Conditions = append(m.st.Conditions, rolloutsv1beta1.RolloutCondition{
		Type: t, Status: status, Reason: reason, Message: message, LastUpdateTime: now, LastTransitionTime: now,
	})
}

func (m *machine) condition(t rolloutsv1beta1.RolloutConditionType) *rolloutsv1beta1.RolloutCondition {
	for i := range m.st.Conditions {
		if m.st.Conditions[i].Type == t {
			return &m.st.Conditions[i]
		}
	}
	return nil
}

func (m *machine) removeCondition(t rolloutsv1beta1.RolloutConditionType) {
	out := m.st.Conditions[:0]
	for _, c := range m.st.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	m.st.Conditions = out
}

func (m *machine) setProgressing(status corev1.ConditionStatus, reason, message string) {
	m.setCondition(rolloutsv1beta1.RolloutConditionProgressing, status, reason, message)
}

func (m *machine) progressingReason() string {
	for _, c := range m.st.Conditions {
		if c.Type == rolloutsv1beta1.RolloutConditionProgressing {
			return c.Reason
		}
	}
	return ""
}

// clearProgressing marks no release in progress.
func (m *machine) clearProgressing(reason string) {
	if m.progressingReason() != "" {
		m.setProgressing(corev1.ConditionFalse, reason, "")
	}
}

// mirror copies the current step into the top-level status fields that the
// printer columns show.
func (m *machine) mirror() {
	if cs := m.rel; cs != nil {
		m.st.CurrentStepIndex, m.st.CurrentStepState = cs.Common.CurrentStepIndex, cs.Common.CurrentStepState
		return
	}
	m.st.CurrentStepIndex, m.st.CurrentStepState = 0, ""
}

// statusEqualIgnoringTimes compares two statuses without their timestamps.
func statusEqualIgnoringTimes(a, b *rolloutsv1beta1.RolloutStatus) bool {
	strip := func(s *rolloutsv1beta1.RolloutStatus) *rolloutsv1beta1.RolloutStatus {
		s = s.DeepCopy()
		for i := range s.Conditions {
			s.Conditions[i].LastUpdateTime, s.Conditions[i].LastTransitionTime = metav1.Time{}, metav1.Time{}
		}
		if s.CanaryStatus != nil {
			s.CanaryStatus.LastUpdateTime = nil
		}
		if s.BlueGreenStatus != nil {
			s.BlueGreenStatus.LastUpdateTime = nil
		}
		return s
	}
	return apiequality.Semantic.DeepEqual(strip(a), strip(b))
}

// Hash identifies the parts of a Rollout's steps that decide which pods and
// traffic each step releases; pauses and failureThreshold are left out, so
// changing them does not re-plan a release.
func Hash(ro *rolloutsv1beta1.Rollout) string {
	type stepKey struct {
		Replicas any `json:"r"`
		Traffic  any `json:"t"`
		Matches  any `json:"m"`
		Modifier any `json:"h"`
	}
	var keys []stepKey
	for _, s := range ro.Spec.Strategy.Steps() {
		keys = append(keys, stepKey{s.Replicas, s.Traffic, s.Matches, s.RequestHeaderModifier})
	}
	b, _ := json.Marshal(keys)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
