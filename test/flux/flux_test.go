package flux_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/gitops/appliedcommit"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/flux"
	"github.com/sluice-dev/sluice/test/gitserver"
	"github.com/sluice-dev/sluice/test/poll"
)

var suite struct {
	cluster *cluster.Cluster
	git     *gitserver.Server
}

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{Nodes: 1}, func(c *cluster.Cluster) error {
		suite.cluster = c
		var err error
		suite.git, err = gitserver.Start(gitserver.Options{})
		return err
	}))
}

// deployment is the manifest of the Deployment web at image tag.
func deployment(tag string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: example/web:%s
`, tag)
}

// Given Flux started on the control plane, a GitRepository on the test Git
// server and a Kustomization of its apps folder
// When a Deployment is pushed, then changed
// Then Flux applies each commit, labelled with its Kustomization
// When someone edits the live Deployment by hand
// Then Flux's next apply puts Git's value back (drift correction)
// When the Kustomization is suspended and a change pushed
// Then nothing is applied until it is resumed
// When the manifest leaves Git
// Then Flux prunes the Deployment
// When Flux is stopped
// Then every process it started is gone.
func TestFlux_appliesPushesCorrectsDriftAndStopsWhatItStarted(t *testing.T) {
	ctx := poll.Context(t)
	var progress io.Writer
	if testing.Verbose() {
		progress = os.Stderr
	}
	f, err := flux.Start(ctx, flux.Options{Kubeconfig: suite.cluster.KubeconfigPath(), Dir: t.TempDir(), Log: progress})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = f.Stop()
		}
	})
	const ns = "flux-harness"
	if err := suite.cluster.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	repo, err := suite.git.CreateRepo("harness.git", "main")
	if err != nil {
		t.Fatal(err)
	}
	push := func(msg string, c gitserver.Change) string {
		t.Helper()
		c.Message = msg
		sha, err := repo.Commit("main", c)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	first := push("Add web", gitserver.Change{Files: map[string]string{"apps/web.yaml": deployment("v1"), "README.md": "web\n"}})
	if err := f.CreateGitRepository(ctx, flux.GitRepository{Namespace: ns, Name: "web", URL: repo.URL()}); err != nil {
		t.Fatal(err)
	}
	if err := f.CreateKustomization(ctx, flux.Kustomization{Namespace: ns, Name: "apps", Source: "web", Path: "./apps", TargetNamespace: ns}); err != nil {
		t.Fatal(err)
	}

	// Then Flux applies the first commit, labelled with its Kustomization.
	if err := f.WaitApplied(ctx, ns, "apps", first); err != nil {
		t.Fatal(err)
	}
	d := image(t, f.Client(), ns, "v1")
	if d.Labels[appliedcommit.FluxNameLabel] != "apps" || d.Labels[appliedcommit.FluxNamespaceLabel] != ns {
		t.Errorf("labels of the applied Deployment = %v, want %s=apps and %s=%s", d.Labels, appliedcommit.FluxNameLabel, appliedcommit.FluxNamespaceLabel, ns)
	}

	// When the image is changed in Git.
	second := push("Bump web to v2", gitserver.Change{Files: map[string]string{"apps/web.yaml": deployment("v2")}})
	// Then Flux applies it at its next interval.
	if err := f.WaitApplied(ctx, ns, "apps", second); err != nil {
		t.Fatal(err)
	}
	image(t, f.Client(), ns, "v2")

	// When someone edits the live object by hand.
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"example/web:hand-edited"}]}}}}`)
	if err := f.Client().Patch(ctx, &appsv1.Deployment{ObjectMeta: d.ObjectMeta}, client.RawPatch(types.StrategicMergePatchType, patch), client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	// Then Flux re-applies the same commit and puts v2 back.
	waitImage(t, f.Client(), ns, "v2")

	// When the Kustomization is suspended and a change pushed.
	if err := f.Suspend(ctx, ns, "apps"); err != nil {
		t.Fatal(err)
	}
	third := push("Bump web to v3", gitserver.Change{Files: map[string]string{"apps/web.yaml": deployment("v3")}})
	if err := f.RequestReconcile(ctx, flux.GitRepositoryGVK, ns, "web"); err != nil {
		t.Fatal(err)
	}
	waitArtifact(t, f, ns, "web", third)
	// Then it is not applied: over three further intervals v2 stays.
	for range 3 {
		if got, err := f.AppliedRevision(ctx, ns, "apps"); err != nil || got != second {
			t.Fatalf("applied revision while suspended = %s (%v), want %s", got, err, second)
		}
		image(t, f.Client(), ns, "v2")
		waitAfter(t, flux.DefaultInterval)
	}
	// Until it is resumed.
	if err := f.Resume(ctx, ns, "apps"); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitApplied(ctx, ns, "apps", third); err != nil {
		t.Fatal(err)
	}
	image(t, f.Client(), ns, "v3")

	// When the manifest leaves Git, Flux prunes the Deployment.
	gone := push("Remove web", gitserver.Change{Delete: []string{"apps/web.yaml"}, Files: map[string]string{"apps/.keep": ""}})
	if err := f.WaitApplied(ctx, ns, "apps", gone); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the Deployment pruned", func() (bool, string) {
		err := f.Client().Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, &appsv1.Deployment{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Sprint(err)
	})

	// When Flux is stopped, every process group it started is gone.
	pids := f.PIDs()
	if len(pids) != 2 {
		t.Fatalf("pids = %v, want source-controller and kustomize-controller", pids)
	}
	stopped = true
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process group %d after Stop: %v, want it gone", pid, err)
		}
	}
}

// A cache without the binaries fails with the command that builds them.
func TestBinaries_missing_saysHowToBuildThem(t *testing.T) {
	t.Setenv(flux.EnvFluxDir, t.TempDir())
	_, err := flux.Binaries(context.Background())
	if err == nil || !strings.Contains(err.Error(), "make flux") {
		t.Fatalf("Binaries with an empty directory: %v, want an error naming make flux", err)
	}
}

// image reads the Deployment web and fails unless its image is at tag.
func image(t *testing.T, c client.Client, ns, tag string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "example/web:"+tag {
		t.Fatalf("image = %s, want example/web:%s", got, tag)
	}
	return d
}

// waitImage waits until the Deployment web runs image tag.
func waitImage(t *testing.T, c client.Client, ns, tag string) {
	t.Helper()
	poll.Until(t, "image "+tag, func() (bool, string) {
		d := &appsv1.Deployment{}
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
			return false, err.Error()
		}
		got := d.Spec.Template.Spec.Containers[0].Image
		return got == "example/web:"+tag, got
	})
}

// waitArtifact waits until source-controller has fetched commit sha.
func waitArtifact(t *testing.T, f *flux.Flux, ns, name, sha string) {
	t.Helper()
	if err := f.WaitFetched(poll.Context(t), ns, name, sha); err != nil {
		t.Fatal(err)
	}
}

// waitAfter waits until d has passed: how a test observes that something
// does not happen over a span of time.
func waitAfter(t *testing.T, d time.Duration) {
	t.Helper()
	end := time.Now().Add(d)
	poll.Until(t, "the end of "+d.String(), func() (bool, string) { return time.Now().After(end), "" })
}
