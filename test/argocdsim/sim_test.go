package argocdsim_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/sluice-dev/sluice/gitops/appliedcommit"
	"github.com/sluice-dev/sluice/test/argocdsim"
	"github.com/sluice-dev/sluice/test/cluster"
	"github.com/sluice-dev/sluice/test/gitserver"
	"github.com/sluice-dev/sluice/test/poll"
)

var suite struct {
	cluster *cluster.Cluster
	c       client.Client
	git     *gitserver.Server
}

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{Nodes: 1}, func(c *cluster.Cluster) error {
		suite.cluster = c
		s := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(s); err != nil {
			return err
		}
		if err := apiextensionsv1.AddToScheme(s); err != nil {
			return err
		}
		var err error
		if suite.c, err = client.New(c.RESTConfig(), client.Options{Scheme: s}); err != nil {
			return err
		}
		if err := argocdsim.InstallCRD(context.Background(), suite.c); err != nil {
			return err
		}
		suite.git, err = gitserver.Start(gitserver.Options{})
		return err
	}))
}

const manifests = `apiVersion: apps/v1
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
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
`

// Given an Application with automated sync and self-heal on a path of the
// test Git server, applying the default way (client-side apply)
// Then the first commit is applied by argocd-controller with the
// last-applied annotation and the tracking id, and sluice's revision
// resolver finds the commit through the Application
// When a live field is edited by hand
// Then the next refresh puts Git's value back, and nothing is written while
// nothing drifts
// When automated sync is off, drift stays until a manual sync
// When a new commit is pushed, it is applied and becomes the revision.
func TestSim_clientSideApply_syncsHealsAndRecordsTheRevision(t *testing.T) {
	run(t, "argocdsim-csa", false)
}

// The same with the ServerSideApply=true sync option: the fields are owned
// by argocd-controller through server-side apply.
func TestSim_serverSideApply_syncsHealsAndRecordsTheRevision(t *testing.T) {
	run(t, "argocdsim-ssa", true)
}

func run(t *testing.T, ns string, ssa bool) {
	ctx := poll.Context(t)
	if err := suite.cluster.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	repo, err := suite.git.CreateRepo(ns+".git", "main")
	if err != nil {
		t.Fatal(err)
	}
	first, err := repo.Commit("main", gitserver.Change{Message: "Add web", Files: map[string]string{"apps/web/all.yaml": fmt.Sprintf(manifests, "v1"), "README.md": "x\n"}})
	if err != nil {
		t.Fatal(err)
	}
	sim, err := argocdsim.Start(ctx, argocdsim.Options{
		Client: suite.c, Name: ns, RepoURL: repo.URL(), Path: "apps/web", Destination: ns, ServerSideApply: ssa,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Stop)

	// Then the first commit is applied, tracked and recorded.
	d := deployment(t, ns)
	if got, want := d.Annotations[appliedcommit.ArgoCDTrackingAnnotation], ns+":apps/Deployment:"+ns+"/web"; got != want {
		t.Errorf("tracking id = %q, want %q", got, want)
	}
	svc := &corev1.Service{}
	if err := suite.c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, svc); err != nil {
		t.Fatal(err)
	}
	if got, want := svc.Annotations[appliedcommit.ArgoCDTrackingAnnotation], ns+":/Service:"+ns+"/web"; got != want {
		t.Errorf("service tracking id = %q, want %q", got, want)
	}
	_, hasLast := d.Annotations[argocdsim.LastAppliedAnnotation]
	wantOp := metav1.ManagedFieldsOperationUpdate
	if ssa {
		wantOp = metav1.ManagedFieldsOperationApply
	}
	if hasLast == ssa {
		t.Errorf("last-applied annotation present = %t with server-side apply %t", hasLast, ssa)
	}
	if !managedBy(d, argocdsim.FieldManager, wantOp) {
		t.Errorf("managed fields %+v, want an %s by %s", d.ManagedFields, wantOp, argocdsim.FieldManager)
	}
	rev, err := appliedcommit.Resolver{Reader: suite.c}.Of(ctx, d, appliedcommit.Options{Source: appliedcommit.SourceArgoCD})
	if err != nil || rev.SHA != first {
		t.Fatalf("revision through the Application = %+v, %v; want %s", rev, err, first)
	}

	// When nothing drifts, passes write nothing.
	gen, heals, passes := d.Generation, sim.Heals(), sim.Passes()
	poll.Until(t, "two more passes", func() (bool, string) { return sim.Passes() >= passes+2, fmt.Sprint(sim.Passes(), sim.Err()) })
	if d := deployment(t, ns); d.Generation != gen || sim.Heals() != heals {
		t.Errorf("the Deployment was written (generation %d -> %d, heals %d -> %d) with nothing drifted", gen, d.Generation, heals, sim.Heals())
	}

	// When the image is edited by hand, self-heal puts it back.
	edit(t, ns, "hand-edited")
	waitImage(t, ns, "v1")

	// When automated sync is off, drift stays until a manual sync.
	sim.SetAutomated(false)
	edit(t, ns, "hand-edited")
	passes = sim.Passes()
	end := time.Now().Add(3 * argocdsim.DefaultInterval)
	poll.Until(t, "three intervals", func() (bool, string) { return time.Now().After(end), "" })
	if img := deployment(t, ns).Spec.Template.Spec.Containers[0].Image; img != "example/web:hand-edited" || sim.Passes() != passes {
		t.Fatalf("image %s after %d passes with automated sync off, want the hand edit kept and no pass", img, sim.Passes()-passes)
	}
	if err := sim.SyncNow(ctx); err != nil {
		t.Fatal(err)
	}
	waitImage(t, ns, "v1")
	sim.SetAutomated(true)

	// When a new commit is pushed, it is applied and recorded.
	second, err := repo.Commit("main", gitserver.Change{Message: "Bump web", Files: map[string]string{"apps/web/all.yaml": fmt.Sprintf(manifests, "v2")}})
	if err != nil {
		t.Fatal(err)
	}
	waitImage(t, ns, "v2")
	poll.Until(t, "the Application at the new commit", func() (bool, string) {
		rev, err := appliedcommit.Resolver{Reader: suite.c}.Of(ctx, deployment(t, ns), appliedcommit.Options{Source: appliedcommit.SourceArgoCD})
		return err == nil && rev.SHA == second, fmt.Sprint(rev, err)
	})
	// The pass writes the Application's status before it returns the
	// revision to the sim, so the sim may say so a moment later.
	poll.Until(t, "the sim at the new commit", func() (bool, string) {
		return sim.Revision() == second && sim.Err() == nil, fmt.Sprintf("sim at %s (%v), want %s", sim.Revision(), sim.Err(), second)
	})
}

func deployment(t *testing.T, ns string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := suite.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// edit sets the image of the live Deployment, as kubectl edit would.
func edit(t *testing.T, ns, tag string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"example/web:%s"}]}}}}`, tag)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	if err := suite.c.Patch(context.Background(), d, client.RawPatch(types.StrategicMergePatchType, patch), client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
}

func waitImage(t *testing.T, ns, tag string) {
	t.Helper()
	poll.Until(t, "image "+tag, func() (bool, string) {
		d := &appsv1.Deployment{}
		if err := suite.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
			return false, err.Error()
		}
		img := d.Spec.Template.Spec.Containers[0].Image
		return img == "example/web:"+tag, img
	})
}

func managedBy(d *appsv1.Deployment, manager string, op metav1.ManagedFieldsOperationType) bool {
	for _, f := range d.ManagedFields {
		if f.Manager == manager && f.Operation == op {
			return true
		}
	}
	return false
}
