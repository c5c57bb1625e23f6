package dataplane

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// The repository of the data-plane stories on the fake GitHub, and the
// token its GitGate uses.
const (
	ghRepo   = "acme/web"
	botToken = "sluice-bot-token"
)

// commitGate puts the release of image in ns under a GitGate, as a GitOps
// team has it: a commit that sets image, on a local Git server and
// mirrored on a fake GitHub (validated against GitHub's OpenAPI
// description), a GitGate of ns binding its Rollouts and posting commit
// statuses there, and the Deployment web naming the commit in its
// sluice.dev/revision annotation, as a GitOps tool applying it would. It
// returns the fake and the commit; the image itself is set by the story.
func commitGate(t *testing.T, ns, image string) (*githubfake.Server, string) {
	t.Helper()
	ctx := ctxFor(t)
	git, err := gitserver.Start(gitserver.Options{})
	if err != nil {
		t.Fatalf("starting the Git server: %v", err)
	}
	t.Cleanup(func() { _ = git.Close() })
	gh, err := githubfake.New(t)
	if err != nil {
		t.Fatalf("starting the fake GitHub: %v", err)
	}
	t.Cleanup(gh.Close)
	gh.CreateRepo(ghRepo, "main", map[string]string{"README.md": "web\n"})
	gh.AddToken(botToken, "sluice-bot")
	gh.SetRole(ghRepo, "sluice-bot", githubfake.RoleWrite)
	repo, err := git.CreateRepo(ns+".git", "main")
	if err != nil {
		t.Fatalf("creating the repository: %v", err)
	}
	sha, err := repo.Commit("main", gitserver.Change{Message: "Release " + image, Files: map[string]string{"apps/web.yaml": "image: " + image + "\n"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (gitopsworld.Repo{Git: repo, GitHub: gh, Name: ghRepo}).Mirror("main", sha); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "github"}, StringData: map[string]string{"token": botToken}},
		&gitopsv1alpha1.GitGate{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: gitopsv1alpha1.GitGateSpec{
				Git:      gitopsv1alpha1.GitSource{URL: repo.URL(), Branch: "main"},
				GitHub:   &gitopsv1alpha1.GitHubRepository{Repository: ghRepo, APIURL: gh.URL, SecretRef: meta.LocalObjectReference{Name: "github"}},
				Revision: gitopsv1alpha1.RevisionSource{From: gitopsv1alpha1.RevisionAnnotation},
				Interval: metav1.Duration{Duration: time.Second},
			},
		},
	} {
		if err := suite.c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T: %v", obj, err)
		}
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{gitopsv1alpha1.DefaultRevisionAnnotation: sha}}})
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	if err := suite.c.Patch(ctx, d, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("annotating the deployment with its commit: %v", err)
	}
	return gh, sha
}

// waitCommitStatus waits until the newest status of the Rollout web of ns
// on sha has state and a description that has every one of parts.
func waitCommitStatus(t *testing.T, gh *githubfake.Server, ns, sha, state string, parts ...string) githubfake.Status {
	t.Helper()
	var found githubfake.Status
	eventually(t, fmt.Sprintf("status %s on %s saying %q", state, sha[:12], parts), func() (bool, string) {
		for _, s := range gh.Statuses(ghRepo, sha) {
			if s.Context != "sluice/"+ns+"/web" {
				continue
			}
			found = s
			ok := s.State == state
			for _, p := range parts {
				ok = ok && strings.Contains(s.Description, p)
			}
			return ok, fmt.Sprintf("%s %q", s.State, s.Description)
		}
		return false, "no status"
	})
	return found
}
