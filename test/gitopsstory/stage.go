// Package gitopsstory holds what the GitOps user stories on a Git host
// (test/gitopsgitea on a real Gitea, test/gitopsgitlab on the fake GitLab)
// wait for and check on the cluster, whatever the host: the Rollout
// "checkout" of gitopsworld's manifests pausing, moving on and being
// aborted, its pods, the record of its approvals, the GitGate "shop" and
// what it refused, and Flux re-applying a commit. The stories' hosts differ;
// what the cluster shows of a release does not.
//
// It is test support, not used by sluice.
package gitopsstory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/approval"
	"github.com/sluice-dev/sluice/test/flux"
	"github.com/sluice-dev/sluice/test/kube"
	"github.com/sluice-dev/sluice/test/poll"
)

// The images of checkout's two versions in gitopsworld's manifests.
const (
	V1 = "shop/checkout:v1"
	V2 = "shop/checkout:v2"
)

// The names the stories give their objects in each namespace.
const (
	// Gate is the GitGate's name.
	Gate = "shop"
	// Rollout is the Rollout's (and its workload's) name.
	Rollout = "checkout"
	// Kustomization is the name of the Flux Kustomization applying ./apps.
	Kustomization = "apps"
)

// Stage is the cluster the stories run on: its client and Flux.
type Stage struct {
	// C reads and writes the control plane.
	C client.Client
	// Flux applies the stories' repositories.
	Flux *flux.Flux
}

// Rollout returns the Rollout of ns.
func (s Stage) Rollout(t *testing.T, ns string) *rolloutsv1beta1.Rollout {
	t.Helper()
	ro := &rolloutsv1beta1.Rollout{}
	if err := s.C.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: Rollout}, ro); err != nil {
		t.Fatal(err)
	}
	return ro
}

// WaitRollout waits until the Rollout of ns satisfies cond (what says how)
// and returns it.
func (s Stage) WaitRollout(t *testing.T, ns, what string, cond func(*rolloutsv1beta1.Rollout) bool) *rolloutsv1beta1.Rollout {
	t.Helper()
	var ro *rolloutsv1beta1.Rollout
	poll.Until(t, "rollout "+what, func() (bool, string) {
		ro = s.Rollout(t, ns)
		b, _ := json.Marshal(ro.Status)
		return cond(ro), string(b)
	})
	return ro
}

// WaitStep waits until the release in ns is paused at step.
func (s Stage) WaitStep(t *testing.T, ns string, step int32) *rolloutsv1beta1.Rollout {
	t.Helper()
	return s.WaitRollout(t, ns, fmt.Sprintf("paused at step %d", step), func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.CurrentStepIndex == step && r.Status.CurrentStepState == rolloutsv1beta1.CanaryStepStatePaused
	})
}

// WaitReleased waits until the release in ns completed its last step.
func (s Stage) WaitReleased(t *testing.T, ns string) *rolloutsv1beta1.Rollout {
	t.Helper()
	return s.WaitRollout(t, ns, "Healthy, every step done", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.CanaryStatus != nil &&
			r.Status.CanaryStatus.CurrentStepState == rolloutsv1beta1.CanaryStepStateCompleted
	})
}

// WaitAborted waits until the release in ns is aborted and held on the
// stable revision.
func (s Stage) WaitAborted(t *testing.T, ns string) *rolloutsv1beta1.Rollout {
	t.Helper()
	return s.WaitRollout(t, ns, "aborted and held on stable", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseAborted && r.Status.Aborted != nil && r.Status.Aborted.Held
	})
}

// WaitHealthyAgain waits until the Rollout of ns is Healthy and no longer
// aborted (a revert synced).
func (s Stage) WaitHealthyAgain(t *testing.T, ns string) *rolloutsv1beta1.Rollout {
	t.Helper()
	return s.WaitRollout(t, ns, "Healthy, no longer aborted", func(r *rolloutsv1beta1.Rollout) bool {
		return r.Status.Phase == rolloutsv1beta1.RolloutPhaseHealthy && r.Status.Aborted == nil
	})
}

// AfterPause waits until the clock is a whole second past the pause of
// ro's step, so that a label added now is newer than the pause (hosts and
// Kubernetes keep whole seconds).
func AfterPause(t *testing.T, ro *rolloutsv1beta1.Rollout) {
	t.Helper()
	at := ro.Status.CanaryStatus.LastUpdateTime
	if at == nil {
		t.Fatalf("step %d paused without a time in the status", ro.Status.CurrentStepIndex)
	}
	poll.Until(t, "a second past the pause", func() (bool, string) {
		return time.Now().Truncate(time.Second).After(at.Time), "paused at " + at.String()
	})
}

// Approvals returns the Rollout's record of applied approvals
// (sluice.dev/approvals).
func (s Stage) Approvals(t *testing.T, ns string) []approval.Approval {
	t.Helper()
	records, err := approval.Records(s.Rollout(t, ns).Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	return records
}

// GitGate returns the GitGate of ns.
func (s Stage) GitGate(t *testing.T, ns string) *gitopsv1alpha1.GitGate {
	t.Helper()
	g := &gitopsv1alpha1.GitGate{}
	if err := s.C.Get(poll.Context(t), types.NamespacedName{Namespace: ns, Name: Gate}, g); err != nil {
		t.Fatal(err)
	}
	return g
}

// WaitGate waits until the GitGate of ns satisfies cond (what says how) and
// returns it.
func (s Stage) WaitGate(t *testing.T, ns, what string, cond func(*gitopsv1alpha1.GitGate) bool) *gitopsv1alpha1.GitGate {
	t.Helper()
	var g *gitopsv1alpha1.GitGate
	poll.Until(t, "the gate "+what, func() (bool, string) {
		g = s.GitGate(t, ns)
		b, _ := json.Marshal(g.Status)
		return cond(g), string(b)
	})
	return g
}

// WaitGateReady waits until the GitGate of ns is Ready with one Rollout
// bound, and logs its status when the story fails.
func (s Stage) WaitGateReady(t *testing.T, ns string) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		g := &gitopsv1alpha1.GitGate{}
		if err := s.C.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: Gate}, g); err == nil {
			b, _ := json.Marshal(g.Status)
			t.Logf("GitGate status: %s", b)
		}
	})
	s.WaitGate(t, ns, "Ready with one Rollout", func(g *gitopsv1alpha1.GitGate) bool {
		return apimeta.IsStatusConditionTrue(g.Status.Conditions, meta.ReadyCondition) && g.Status.BoundRollouts == 1
	})
}

// WaitRefused waits until the gate of ns refuses an intent for reason, its
// message containing text, and returns the refusal.
func (s Stage) WaitRefused(t *testing.T, ns, reason, text string) gitopsv1alpha1.RefusedIntent {
	t.Helper()
	var found gitopsv1alpha1.RefusedIntent
	s.WaitGate(t, ns, "refusing "+reason, func(g *gitopsv1alpha1.GitGate) bool {
		for _, b := range g.Status.Rollouts {
			for _, r := range b.Refused {
				if r.Reason == reason && strings.Contains(r.Message, text) {
					found = r
					return true
				}
			}
		}
		return false
	})
	return found
}

// WaitPods waits until checkout's live pods in ns are want (image -> count).
func (s Stage) WaitPods(t *testing.T, ns string, want map[string]int) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("pods %v", want), func() (bool, string) {
		got := kube.PodImages(t, s.C, ns, Rollout)
		if len(got) != len(want) {
			return false, fmt.Sprint(got)
		}
		for image, n := range want {
			if got[image] != n {
				return false, fmt.Sprint(got)
			}
		}
		return true, ""
	})
}

// AssertTemplate checks that checkout's pod template in ns is still at
// image, as Git has it: sluice never rewrites it.
func (s Stage) AssertTemplate(t *testing.T, ns, image string) {
	t.Helper()
	d := kube.Deployment(t, s.C, ns, Rollout)
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Fatalf("pod template at %s, want %s (Git's): sluice must not change it", got, image)
	}
}

// AssertStaysAborted checks for a few seconds that the release in ns stays
// aborted with n pods of V1 and nothing released again.
func (s Stage) AssertStaysAborted(t *testing.T, ns string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if ro := s.Rollout(t, ns); ro.Status.Phase != rolloutsv1beta1.RolloutPhaseAborted {
			t.Fatalf("no longer aborted: phase %s, %s", ro.Status.Phase, ro.Status.Message)
		}
		if pods := kube.PodImages(t, s.C, ns, Rollout); pods[V1] != n || len(pods) != 1 {
			t.Fatalf("pods %v while aborted, want %d of %s", pods, n, V1)
		}
	}
}

// AssertHoldsAgainstReapplies has Flux apply the same commit twice more
// (drift correction) and checks after each that the template is still
// Git's (template) and the release stays aborted with 4 pods of V1.
func (s Stage) AssertHoldsAgainstReapplies(t *testing.T, ns, template string) {
	t.Helper()
	for range 2 {
		if err := s.Flux.Reapply(poll.Context(t), ns, Kustomization); err != nil {
			t.Fatal(err)
		}
		s.AssertTemplate(t, ns, template)
		s.AssertStaysAborted(t, ns, 4)
	}
}

// Describe logs, when the story failed, what the workload of ns and Flux
// hold.
func (s Stage) Describe(t *testing.T, ns string) {
	if !t.Failed() {
		return
	}
	ctx := context.Background()
	d := &appsv1.Deployment{}
	if err := s.C.Get(ctx, types.NamespacedName{Namespace: ns, Name: Rollout}, d); err == nil {
		b, _ := json.Marshal(d.Status)
		t.Logf("Deployment: generation %d, image %s, paused %v, status %s", d.Generation, d.Spec.Template.Spec.Containers[0].Image, d.Spec.Paused, b)
	}
	ro := &rolloutsv1beta1.Rollout{}
	if err := s.C.Get(ctx, types.NamespacedName{Namespace: ns, Name: Rollout}, ro); err == nil {
		b, _ := json.Marshal(ro.Status)
		t.Logf("Rollout status: %s", b)
	}
	applied, err := s.Flux.AppliedRevision(ctx, ns, Kustomization)
	t.Logf("Flux applied %s (%v)", applied, err)
}

// FluxApplies has Flux apply ./apps of branch (main when empty) of the
// repository at url into ns (a GitRepository "shop" and a Kustomization
// "apps" in ns, at Flux's short test interval) and waits until it applied
// the commit sha.
func (s Stage) FluxApplies(t *testing.T, ns, url, branch, sha string) {
	t.Helper()
	ctx := poll.Context(t)
	if err := s.Flux.CreateGitRepository(ctx, flux.GitRepository{Namespace: ns, Name: Gate, URL: url, Branch: branch}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flux.CreateKustomization(ctx, flux.Kustomization{Namespace: ns, Name: Kustomization, Source: Gate, Path: "./apps", TargetNamespace: ns}); err != nil {
		t.Fatal(err)
	}
	s.WaitApplied(t, ns, sha)
}

// WaitApplied waits until Flux applied the commit sha into ns.
func (s Stage) WaitApplied(t *testing.T, ns, sha string) {
	t.Helper()
	if err := s.Flux.WaitApplied(poll.Context(t), ns, Kustomization, sha); err != nil {
		t.Fatal(err)
	}
}
