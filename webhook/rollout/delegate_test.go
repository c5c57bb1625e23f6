package rollout

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestMutatorRequester(t *testing.T) {
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
	aborts := []struct {
		name, user, value, want string
	}{
		{name: "an abort by a user is recorded as theirs", user: "jane", value: `{"revision":"abc","by":"mallory"}`, want: "jane"},
		{name: "the delegate records who aborted", user: "system:serviceaccount:sluice-system:sluice",
			value: `{"revision":"abc","by":"ops","via":"github-label"}`, want: "ops"},
		{name: "a short abort by the delegate is its own", user: "system:serviceaccount:sluice-system:sluice",
			value: "true", want: "system:serviceaccount:sluice-system:sluice"},
	}
	for _, tt := range aborts {
		t.Run(tt.name, func(t *testing.T) {
			for _, key := range []string{rolloutsv1beta1.AbortAnnotation, rolloutsv1beta1.RetryAnnotation} {
				ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{key: tt.value}}}
				if got := m.requester(tt.user, key, ro); got != tt.want {
					t.Errorf("requester(%q, %s) = %q, want %q", tt.user, key, got, tt.want)
				}
			}
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{rolloutsv1beta1.ApproveAnnotation: tt.value}}}
			if got := m.requester(tt.user, rolloutsv1beta1.ApproveAnnotation, ro); got != tt.want {
				t.Errorf("requester(%q) = %q, want %q", tt.user, got, tt.want)
			}
		})
	}
}
