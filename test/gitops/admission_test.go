package gitops

import (
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
)

// Given GitGates with an approval policy
// When one is created with a policy that cannot work
// Then the API server refuses it, naming the field and the fix; the valid
// ones are accepted.
func TestGitGate_approvalPolicy_invalidRefusedNamingTheField(t *testing.T) {
	github := &gitopsv1alpha1.GitHubRepository{Repository: "acme/shop", SecretRef: meta.LocalObjectReference{Name: "token"}}
	for _, tt := range []struct {
		name    string
		policy  gitopsv1alpha1.ApprovalPolicy
		github  *gitopsv1alpha1.GitHubRepository
		wantErr []string
	}{
		{"two approvers, approvals for a day, code owners and a team", gitopsv1alpha1.ApprovalPolicy{MinApprovals: 2,
			ExpireAfter: &metav1.Duration{Duration: 24 * time.Hour},
			RequiredApprovers: []gitopsv1alpha1.RequiredApprovers{
				{Name: "owners", CodeOwners: true},
				{Name: "security", Steps: []int32{3}, Teams: []string{"acme/security"}, MinApprovals: 2},
			}}, github, nil},
		{"a set of nobody", gitopsv1alpha1.ApprovalPolicy{RequiredApprovers: []gitopsv1alpha1.RequiredApprovers{{Name: "empty", Steps: []int32{2}}}}, github,
			[]string{"spec.approval.requiredApprovers[0]", "name users, teams or codeOwners"}},
		{"more approvals than users", gitopsv1alpha1.ApprovalPolicy{RequiredApprovers: []gitopsv1alpha1.RequiredApprovers{{Users: []string{"alice"}, MinApprovals: 2}}}, github,
			[]string{"spec.approval.requiredApprovers[0].minApprovals", "minApprovals is more than the users listed"}},
		{"step 0", gitopsv1alpha1.ApprovalPolicy{RequiredApprovers: []gitopsv1alpha1.RequiredApprovers{{Users: []string{"alice"}, Steps: []int32{0}}}}, github,
			[]string{"spec.approval.requiredApprovers[0].steps[0]"}},
		{"a team that is not org/team", gitopsv1alpha1.ApprovalPolicy{RequiredApprovers: []gitopsv1alpha1.RequiredApprovers{{Teams: []string{"security"}}}}, github,
			[]string{"spec.approval.requiredApprovers[0].teams[0]"}},
		{"no quorum", gitopsv1alpha1.ApprovalPolicy{MinApprovals: -1}, github, []string{"spec.approval.minApprovals"}},
		{"a quorum too large", gitopsv1alpha1.ApprovalPolicy{MinApprovals: 11}, github, []string{"spec.approval.minApprovals"}},
		{"required approvers without a host", gitopsv1alpha1.ApprovalPolicy{RequiredApprovers: []gitopsv1alpha1.RequiredApprovers{{Users: []string{"alice"}}}}, nil,
			[]string{"spec.approval.requiredApprovers", "needs spec.scm or spec.github"}},
		{"a quorum from Git alone", gitopsv1alpha1.ApprovalPolicy{MinApprovals: 2}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &gitopsv1alpha1.GitGate{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shop"},
				Spec: gitopsv1alpha1.GitGateSpec{
					Git: gitopsv1alpha1.GitSource{URL: "https://git.example.com/acme/shop.git"}, GitHub: tt.github, Approval: tt.policy,
					RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "shop"}},
				},
			}
			err := suite.c.Create(ctxFor(t), g, client.DryRunAll)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}
