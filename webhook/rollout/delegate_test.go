package rollout

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestMutatorApprover(t *testing.T) {
	m := &Mutator{Delegates: []string{"system:serviceaccount:sluice-system:sluice"}}
	tests := []struct {
		name, user, value, want string
	}{
		{name: "a user is recorded as themselves", user: "jane", value: `{"step":1,"by":"mallory"}`, want: "jane"},
		{name: "the delegate records the approver it names", user: "system:serviceaccount:sluice-system:sluice",
			value: `{"step":1,"revision":"abc","by":"reviewer","via":"github-label"}`, want: "reviewer"},
		{name: "the delegate naming nobody is recorded as itself", user: "system:serviceaccount:sluice-system:sluice",
			value: "1", want: "system:serviceaccount:sluice-system:sluice"},
		{name: "an invalid value is recorded as the writer", user: "system:serviceaccount:sluice-system:sluice",
			value: "{", want: "system:serviceaccount:sluice-system:sluice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{rolloutsv1beta1.ApproveAnnotation: tt.value}}}
			if got := m.approver(tt.user, ro); got != tt.want {
				t.Errorf("approver(%q) = %q, want %q", tt.user, got, tt.want)
			}
		})
	}
}
