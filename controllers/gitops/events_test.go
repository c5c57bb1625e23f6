package gitops

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
)

// The same refusal message is an event once for each gate it concerns, and
// only once for each.
func TestEmitOnce_perGate(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	r := &Reconciler{Recorder: rec}
	a := &gitopsv1alpha1.GitGate{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shop", UID: "a"}}
	b := &gitopsv1alpha1.GitGate{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "shop", UID: "b"}}
	const msg = "label sluice/approve on pull request #1 added by wes: not a member of an allowed team"
	for _, g := range []*gitopsv1alpha1.GitGate{a, b, a, b} {
		r.emitOnce([]client.Object{g}, ReasonNotAllowed, msg)
	}
	if n := len(rec.Events); n != 2 {
		t.Fatalf("%d events, want one per gate", n)
	}
}
