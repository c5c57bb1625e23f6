package gitopsgitea

import (
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/test/poll"
)

// Given GitGates naming their host in spec.scm
// When one is created with a host it cannot use
// Then the API server refuses it, naming the field and the fix; the valid
// ones (a GitLab group path, Gitea with its server) are accepted.
func TestGitGate_scmSpec_invalidRefusedNamingTheField(t *testing.T) {
	secret := meta.LocalObjectReference{Name: "token"}
	github := &gitopsv1alpha1.GitHubRepository{Repository: "acme/shop", SecretRef: secret}
	for _, tt := range []struct {
		name    string
		scm     *gitopsv1alpha1.SCMRepository
		github  *gitopsv1alpha1.GitHubRepository
		wantErr []string
	}{
		{"both spec.scm and spec.github", &gitopsv1alpha1.SCMRepository{Provider: gitopsv1alpha1.SCMGitHub, Repository: "acme/shop", SecretRef: secret}, github,
			[]string{"set spec.scm or spec.github, not both"}},
		{"gitea without its server", &gitopsv1alpha1.SCMRepository{Provider: gitopsv1alpha1.SCMGitea, Repository: "acme/shop", SecretRef: secret}, nil,
			[]string{"spec.scm", "apiURL is required for gitea"}},
		{"a group path on github", &gitopsv1alpha1.SCMRepository{Provider: gitopsv1alpha1.SCMGitHub, Repository: "acme/platform/shop", SecretRef: secret}, nil,
			[]string{"spec.scm", "repository must be owner/name on github and gitea"}},
		{"an unknown host", &gitopsv1alpha1.SCMRepository{Provider: "bitbucket", Repository: "acme/shop", SecretRef: secret}, nil,
			[]string{"spec.scm.provider", "bitbucket", `"github", "gitea", "gitlab"`}},
		{"a GitLab group path", &gitopsv1alpha1.SCMRepository{Provider: gitopsv1alpha1.SCMGitLab, Repository: "acme/platform/shop", SecretRef: secret}, nil, nil},
		{"Gitea with its server", &gitopsv1alpha1.SCMRepository{Provider: gitopsv1alpha1.SCMGitea, Repository: "acme/shop", APIURL: "https://gitea.example.com/", SecretRef: secret}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &gitopsv1alpha1.GitGate{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shop"},
				Spec: gitopsv1alpha1.GitGateSpec{
					Git: gitopsv1alpha1.GitSource{URL: "https://git.example.com/acme/shop.git"}, GitHub: tt.github, SCM: tt.scm,
					RolloutSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "shop"}},
				},
			}
			err := suite.c.Create(poll.Context(t), g, client.DryRunAll)
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
