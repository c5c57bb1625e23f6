package gitops

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
)

func TestDeclared_readsOnlyValuesNamingACommit(t *testing.T) {
	for v, want := range map[string]bool{
		"step=2,revision=" + rev[:7]:              true,
		"step=all,revision=" + rev:                true,
		"step=2,revision=abc123":                  false, // the canary revision
		"step=2":                                  false,
		`{"revision":"abc123","step":2,"by":"x"}`: false, // what sluice writes
		"step=2,revision=checkout-5d8f":           false,
	} {
		ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{rolloutsv1beta1.ApproveAnnotation: v}}}
		if got := declared(ro, "abc123") != nil; got != want {
			t.Errorf("declared(%q) = %v, want %v", v, got, want)
		}
	}
}

// A value the GitOps tool applied from Git is the gate's, whatever it
// names: the Rollout controller leaves it to the gate on a bound Rollout.
func TestDeclared_readsEveryValueAppliedFromGit(t *testing.T) {
	applied := []metav1.ManagedFieldsEntry{{Manager: "kustomize-controller", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:sluice.dev/approve":{}}}}`)}}
	for v, want := range map[string]string{
		"step=2,revision=abc123":                  "abc123", // the canary revision
		"step=2":                                  "",
		"step=2,revision=" + rev[:7]:              rev[:7],
		`{"revision":"abc123","step":2,"by":"x"}`: "-", // what sluice writes
	} {
		ro := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{rolloutsv1beta1.ApproveAnnotation: v}, ManagedFields: applied}}
		d := declared(ro, "abc123")
		switch {
		case want == "-" && d != nil:
			t.Errorf("declared(%q) = %+v, want nil", v, d)
		case want != "-" && (d == nil || d.Revision != want):
			t.Errorf("declared(%q) = %+v, want revision %q", v, d, want)
		}
	}
}

func TestDecide_declaredApprovalOfTheCanaryRevisionOrNone(t *testing.T) {
	// Naming the canary revision, applied from Git: approved as the commit
	// that set it, via git.
	o := declaredAt(1, "step=2,revision=abc123", "abc123")
	o.Rollout.CanaryRevision = "abc123"
	if d := Decide(o); d.Apply == nil || d.Apply.By != "jane@example.com" || d.Apply.Via != ViaGit || d.Apply.Step != 2 {
		t.Fatalf("decision = %+v, want step 2 approved by jane via git", d)
	}
	// Naming none: it would approve every later release while it stays in
	// Git, so it approves nothing and says what to write.
	bare := declaredAt(1, "step=2", "")
	d := Decide(bare)
	if d.Apply != nil || len(d.Rejections) != 1 || !strings.Contains(d.Rejections[0].Message, "names no revision") ||
		!strings.Contains(d.Rejections[0].Message, "revision="+short(rev)) {
		t.Fatalf("decision = %+v, want a refusal naming the revision to write", d)
	}
}

func declaredAt(step int32, value, revision string) Observation {
	return with(atStep(step), func(o *Observation) {
		o.Declared = &DeclaredApproval{Value: value, Step: 2, Revision: revision, Commit: tcSHA, PullRequest: 7,
			Signer: TrailerCommit{SHA: tcSHA, Identity: "jane@example.com"}}
	})
}

func TestDecide_declaredApproval(t *testing.T) {
	// Naming the commit being released, it approves the paused step, once
	// per step, as the commit's author via git.
	o := declaredAt(1, "step=2,revision="+rev[:8], rev[:8])
	d := Decide(o)
	want := Intent{Action: ActionApprove, Step: 2, By: "jane@example.com", Via: ViaGit, Key: stepKey(1), Commit: tcSHA, PullRequest: 7}
	if !sameIntent(d.Apply, &want) {
		t.Fatalf("Apply = %+v, want %+v", d.Apply, want)
	}
	o.Applied = []Applied{{Action: ActionApprove, Step: 2, Key: want.Key}}
	if d := Decide(o); d.Apply != nil {
		t.Fatalf("Apply = %+v once applied, want none", d.Apply)
	}
	// At step 2 (the tool put the Git value back) it applies again.
	o.Rollout.Step = 2
	if d := Decide(o); d.Apply == nil || d.Apply.Key != stepKey(2) || len(d.Apply.Approvers) != 1 || d.Apply.Approvers[0].Keys[0] != "annotation:"+tcSHA+"@2" {
		t.Fatalf("Apply = %+v at step 2, want the approval again", d.Apply)
	}
	// Past its step, it does nothing and says nothing.
	o.Rollout.Step = 3
	if d := Decide(o); d.Apply != nil || len(d.Rejections) != 0 {
		t.Fatalf("decision at step 3 = %+v, want nothing", d)
	}

	// Naming another commit, it approves nothing and says why.
	stale := declaredAt(1, "step=2,revision=9999999", "9999999")
	d = Decide(stale)
	if d.Apply != nil || len(d.Rejections) != 1 || d.Rejections[0].Reason != ReasonOtherRevision ||
		!strings.Contains(d.Rejections[0].Message, "names commit 9999999, the release is of commit "+short(rev)) {
		t.Fatalf("decision = %+v, want an OtherRevision refusal", d)
	}

	// Every step.
	all := declaredAt(1, "step=all,revision="+rev, rev)
	all.Declared.Step = approval.AllSteps
	if d := Decide(all); d.Apply == nil || d.Apply.Action != ActionPromoteFull || d.Apply.Step != 3 {
		t.Fatalf("Apply = %+v, want a full promotion", d.Apply)
	}

	// The commit that set it unknown, or not allowed: refused.
	unknown := declaredAt(1, "step=2,revision="+rev[:8], rev[:8])
	unknown.Declared.Commit, unknown.Declared.NotFound = "", "no commit of branch main sets it"
	if d := Decide(unknown); d.Apply != nil || len(d.Rejections) != 1 || d.Rejections[0].Reason != ReasonUnknownCommit {
		t.Fatalf("decision = %+v, want an UnknownCommit refusal", d)
	}
	strict := declaredAt(1, "step=2,revision="+rev[:8], rev[:8])
	strict.Policy.AllowedCommitters = []string{"rm@example.com"}
	if d := Decide(strict); d.Apply != nil || len(d.Rejections) != 1 || d.Rejections[0].Reason != ReasonNotAllowed {
		t.Fatalf("decision = %+v, want a NotAllowed refusal", d)
	}
}
