package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/examples"
	"github.com/sluice-dev/sluice/test/flux"
	"github.com/sluice-dev/sluice/test/githubfake"
	"github.com/sluice-dev/sluice/test/gitopsworld"
	"github.com/sluice-dev/sluice/test/gitserver"
)

// The setting of the GitOps story.
const (
	// ghRepo is the repository on the GitHub stand-in; gitRepoName the
	// same repository on the Git server.
	ghRepo      = "acme/shop"
	gitRepoName = "shop.git"
	// demoNamespace holds the app, the Flux objects and the GitGate.
	demoNamespace = "demo"
	// appName names the Deployment, its Service and Ingress, and the Rollout.
	appName = "checkout"
	// gateName, gitRepository and kustomization name the GitGate and the
	// Flux objects.
	gateName      = "shop"
	gitRepository = "shop"
	kustomization = "apps"
	// deploymentFile is the manifest a release changes.
	deploymentFile = "apps/deployment.yaml"
	// fluxInterval is how often Flux fetches the branch and applies it
	// again (correcting drift) when nothing asks it sooner.
	fluxInterval = time.Minute
	// gitopsTimeout bounds each wait of the story: Flux and sluice on a
	// loaded machine can be slow.
	gitopsTimeout = 5 * time.Minute
)

// The people of the story, and the credentials on GitHub.
const (
	// botLogin and botToken are sluice's own GitHub identity.
	botLogin = "sluice-bot"
	botToken = "sluice-bot-token"
	// developer opens the pull request, lead merges it, reviewer (write
	// access) approves with the label.
	developer     = "dev"
	lead          = "lead"
	reviewer      = "reviewer"
	reviewerToken = "reviewer-token"
	// webhookSecret signs GitHub's webhook deliveries to sluice.
	webhookSecret = "demo-webhook-secret"
)

// The tags of the story's release.
const (
	stableTag = "v1"
	newTag    = "v2"
)

// shopFiles is the repository's first commit.
//
//go:embed shop
var shopFiles embed.FS

// firstCommit returns the files of the repository's first commit.
func firstCommit() (map[string]string, error) {
	files := map[string]string{}
	err := fs.WalkDir(shopFiles, "shop", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := shopFiles.ReadFile(path)
		if err != nil {
			return err
		}
		files[strings.TrimPrefix(path, "shop/")] = string(b)
		return nil
	})
	return files, err
}

// withImageTag returns the manifest with the image's tag from changed to
// to.
func withImageTag(manifest, from, to string) string {
	return strings.Replace(manifest, "/checkout:"+from+"\n", "/checkout:"+to+"\n", 1)
}

// platformYAML is what the platform team applies once, outside the app's
// repository: the Secrets sluice reads and the GitGate that binds the
// Rollout to the repository.
func platformYAML(gitURL, apiURL string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: github, namespace: %[1]s}
stringData: {token: %[2]s}
---
apiVersion: v1
kind: Secret
metadata: {name: github-webhook, namespace: %[1]s}
stringData: {token: %[3]s}
---
apiVersion: gitops.sluice.dev/v1alpha1
kind: GitGate
metadata: {name: %[4]s, namespace: %[1]s}
spec:
  git: {url: %[5]s, branch: main}
  github: {repository: %[6]s, apiURL: %[7]s, secretRef: {name: github}}
  rolloutSelector:
    matchLabels: {app.kubernetes.io/part-of: shop}
  revision: {from: Flux}
  approval: {minPermission: write}
  webhookSecretRef: {name: github-webhook}
  interval: 1m
`, demoNamespace, botToken, webhookSecret, gateName, gitURL, ghRepo, apiURL)
}

// setUp builds the setting: the repository on the Git server and on GitHub
// with its first commit, GitHub's people and webhook, Flux applying the
// repository's apps/ folder into the namespace, and the GitGate. It returns
// once the first commit runs, every pod of stableTag ready, and the GitGate
// is bound.
func (s *story) setUp(ctx context.Context) error {
	st := s.st
	if err := s.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoNamespace}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", demoNamespace, err)
	}
	gh := st.github
	gh.CreateRepo(ghRepo, "main", map[string]string{"README.md": "shop\n"})
	gh.AddToken(botToken, botLogin)
	gh.SetRole(ghRepo, botLogin, githubfake.RoleWrite)
	gh.AddToken(reviewerToken, reviewer)
	gh.SetRole(ghRepo, reviewer, githubfake.RoleWrite)
	gh.SetRole(ghRepo, lead, githubfake.RoleMaintain)
	gh.AddHook(ghRepo, st.hookURL, []byte(webhookSecret))
	repo, err := st.git.CreateRepo(gitRepoName, "main")
	if err != nil {
		return err
	}
	s.repo = gitopsworld.Repo{Git: repo, GitHub: gh, Name: ghRepo}
	files, err := firstCommit()
	if err != nil {
		return err
	}
	s.files = files
	first, err := repo.Commit("main", gitserver.Change{Message: "Add checkout", Files: files})
	if err != nil {
		return err
	}
	if err := s.repo.Mirror("main", first); err != nil {
		return err
	}
	s.first = first
	s.note("Git: %s holds commit %s \"Add checkout\" (apps/: Deployment, Service, Ingress and Rollout %s), mirrored on GitHub as %s",
		repo.URL(), short(first), appName, ghRepo)

	if err := st.flux.CreateGitRepository(ctx, flux.GitRepository{Namespace: demoNamespace, Name: gitRepository, URL: repo.URL(), Interval: fluxInterval}); err != nil {
		return err
	}
	if err := st.flux.CreateKustomization(ctx, flux.Kustomization{Namespace: demoNamespace, Name: kustomization, Source: gitRepository,
		Path: "./apps", TargetNamespace: demoNamespace, Interval: fluxInterval}); err != nil {
		return err
	}
	if _, err := s.watch(ctx, "Flux to apply the first commit", []string{
		"Flux's GitRepository " + gitRepository + " fetches main; its Kustomization " + kustomization + " applies apps/ into namespace " + demoNamespace + ".",
	}, func(w *world) bool { return w.applied == first && settled(w.snapshot) }); err != nil {
		return err
	}
	s.note("Flux applied %s: %d pods of %s ready; Rollout %s is Healthy", short(first), 4, stableTag, appName)

	objs, err := examples.Decode([]byte(platformYAML(repo.URL(), gh.URL)), s.scheme)
	if err != nil {
		return fmt.Errorf("decoding the GitGate and its Secrets: %w", err)
	}
	for _, obj := range objs {
		if err := s.c.Create(ctx, obj, client.FieldOwner("kubectl-create")); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if err := s.until(ctx, "the GitGate to bind the Rollout", func(ctx context.Context) (bool, error) {
		g := &gitopsv1alpha1.GitGate{}
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: demoNamespace, Name: gateName}, g); err != nil {
			return false, err
		}
		return apimeta.IsStatusConditionTrue(g.Status.Conditions, "Ready") && g.Status.BoundRollouts == 1, nil
	}); err != nil {
		return err
	}
	s.note("GitGate %s binds Rollout %s to %s@main; GitHub delivers its webhooks, signed, to sluice at %s", gateName, appName, ghRepo, st.hookURL)
	return nil
}

// newStory prepares the story on the running stack.
func newStory(o options, out io.Writer, st *stack) (*story, error) {
	scheme, err := app.Scheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(st.cluster.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	record, err := newMilestones(o.record, start)
	if err != nil {
		return nil, err
	}
	return &story{
		runner: &runner{screen: newScreen(out, o.plain), pace: o.pace, timeout: gitopsTimeout, failed: st.cluster.Failed(), alive: st.failed, start: start},
		out:    out, st: st, c: c, scheme: scheme, record: record,
		key:      types.NamespacedName{Namespace: demoNamespace, Name: appName},
		statuses: &statusWatch{gh: st.github, repo: ghRepo},
	}, nil
}
