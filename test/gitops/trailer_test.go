package gitops

import (
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// Story 2: a commit on the watched branch with the trailer
// "Sluice-Approve: <namespace>/checkout step=2" approves up to step 2 when
// the policy's conditions hold: signed by a key of the configured keyring,
// by an allowed committer. An unsigned commit, and one signed by a key
// outside the keyring, approve nothing.
func TestGitGate_approveBySignedCommitTrailer(t *testing.T) {
	release, releasePub, err := gitserver.NewOpenPGPKey("Release Manager", "rm@example.com")
	if err != nil {
		t.Fatal(err)
	}
	stranger, _, err := gitserver.NewOpenPGPKey("Stranger", "rm@example.com")
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, func(g *gitopsv1alpha1.GitGate) {
		g.Spec.Approval.SigningKeysSecretRef = &meta.LocalObjectReference{Name: "release-keys"}
		g.Spec.Approval.AllowedCommitters = []string{"rm@example.com"}
		mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: "release-keys"}, Data: map[string][]byte{"openpgp": releasePub}})
	})
	_, merge := w.mergePullRequest("Bump checkout to v2", "dev", "dev", map[string]string{manifest: deploymentYAML("v2")})
	w.waitApplied(merge)
	w.waitStep(1, rolloutsv1beta1.CanaryStepStatePaused)
	w.waitDeploymentSplit(3, 1)

	approve := "Approve checkout\n\nSluice-Approve: " + w.ns + "/checkout step=2 revision=" + merge[:10]
	author := &object.Signature{Name: "Release Manager", Email: "rm@example.com"}
	// When an unsigned commit and one signed by an unknown key carry the trailer.
	unsigned, err := w.repo.Commit("main", gitserver.Change{Message: approve, Files: map[string]string{"NOTES.md": "a\n"}, Author: author})
	if err != nil {
		t.Fatal(err)
	}
	w.mirror("main", unsigned)
	forged, err := w.repo.Commit("main", gitserver.Change{Message: approve, Files: map[string]string{"NOTES.md": "b\n"}, Author: author,
		Signer: gitserver.OpenPGPSigner(stranger)})
	if err != nil {
		t.Fatal(err)
	}
	w.mirror("main", forged)
	// Then both are refused, and the release stays at step 1.
	w.waitEvent("Rollout", "checkout", "UnverifiedCommit", "in commit ")
	w.waitGate("both commits refused", func(g *gitopsv1alpha1.GitGate) bool {
		return refused(g, "UnverifiedCommit", unsigned[:12]+": ", "commit is not signed") &&
			refused(g, "UnverifiedCommit", forged[:12]+": ", "signed by a key not in the keyring")
	})
	if ro := w.rollout(); ro.Status.CurrentStepIndex != 1 || len(w.approvals()) != 0 {
		t.Fatalf("step %d with approvals %+v, want step 1 and none", ro.Status.CurrentStepIndex, w.approvals())
	}
	if pods := w.podsByImage(); pods["v1"] != 3 || pods["v2"] != 1 {
		t.Fatalf("pods %v, want 3 of v1 and 1 of v2", pods)
	}
	// And Flux has applied the branch head, so its Kustomization no longer
	// names the commit being released.
	w.waitApplied(forged)

	// When the release manager pushes the trailer signed with their key.
	signed, err := w.repo.Commit("main", gitserver.Change{Message: approve, Files: map[string]string{"NOTES.md": "c\n"}, Author: author,
		Signer: gitserver.OpenPGPSigner(release)})
	if err != nil {
		t.Fatal(err)
	}
	w.mirror("main", signed)

	// Then steps 1 and 2 are approved: the release passes step 2 without
	// stopping and completes; the Rollout records the signer via git-trailer;
	// the statuses stay on the merge commit.
	w.waitRollout("Healthy", func(r *rolloutsv1beta1.Rollout) bool { return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy })
	w.waitDeployment("v2", 4)
	got := w.approvals()
	if len(got) != 2 {
		t.Fatalf("approvals = %+v, want steps 1 and 2", got)
	}
	for i, a := range got {
		if a.Step != int32(i+1) || a.By != "rm@example.com" || a.Via != "git-trailer" {
			t.Errorf("approval %d = %+v, want step %d by rm@example.com via git-trailer", i, a, i+1)
		}
	}
	w.waitStatus(merge, "success", "released: 3/3 steps done")
}

// refused tells whether the gate lists a refusal with reason whose message
// contains every part.
func refused(g *gitopsv1alpha1.GitGate, reason string, parts ...string) bool {
	for _, b := range g.Status.Rollouts {
	next:
		for _, r := range b.Refused {
			if r.Reason != reason {
				continue
			}
			for _, p := range parts {
				if !strings.Contains(r.Message, p) {
					continue next
				}
			}
			return true
		}
	}
	return false
}
