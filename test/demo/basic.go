package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/sluice/app"
	"github.com/sluice-dev/sluice/examples"
	"github.com/sluice-dev/sluice/release/approval"
)

// runBasic runs the kubectl-only release: it starts the control plane and
// sluice, applies examples/multi-batch-deployment, changes the image from
// v1 to v2 and approves each paused step, alternating the two ways a user
// approves.
func runBasic(ctx context.Context, o options, out io.Writer, st *stack) error {
	begin := time.Now()
	fmt.Fprintln(out, "sluice demo: a multi-batch release of a 10-pod Deployment on a local control plane")
	bin, err := st.clusterBinaries(ctx)
	if err != nil {
		return err
	}
	if err := st.startCluster(ctx, bin); err != nil {
		return err
	}
	if err := st.startManager(ctx, false); err != nil {
		return err
	}
	fmt.Fprintf(out, "Ready in %s\n\n", time.Since(begin).Round(100*time.Millisecond))

	d, objs, err := newDemo(st, o, out)
	if err != nil {
		return err
	}
	if err := d.apply(ctx, objs); err != nil {
		return err
	}
	d.note("Applied examples/%s: Namespace %s, Deployment %s (%s), Rollout %s", examples.MultiBatchDeploymentDir,
		d.key.Namespace, d.key.Name, d.oldImage, d.key.Name)
	final, err := d.run(ctx)
	d.screen.close()
	if err != nil {
		return err
	}
	summarize(out, final, time.Since(d.start))
	if o.keep {
		return keepBasic(ctx, out, st, d)
	}
	return nil
}

// newDemo decodes the example and prepares the demo of its release, from
// its image to the same image tagged v2.
func newDemo(st *stack, o options, out io.Writer) (*demo, []client.Object, error) {
	scheme, err := app.Scheme()
	if err != nil {
		return nil, nil, err
	}
	objs, err := examples.MultiBatchDeployment(scheme)
	if err != nil {
		return nil, nil, err
	}
	var dep *appsv1.Deployment
	for _, obj := range objs {
		if x, ok := obj.(*appsv1.Deployment); ok {
			dep = x
		}
	}
	if dep == nil || len(dep.Spec.Template.Spec.Containers) == 0 {
		return nil, nil, errors.New("the example has no Deployment with a container")
	}
	cl, err := client.New(st.cluster.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, err
	}
	ct := dep.Spec.Template.Spec.Containers[0]
	d := &demo{
		runner:    &runner{screen: newScreen(out, o.plain), pace: o.pace, timeout: waitTimeout, failed: st.cluster.Failed(), start: time.Now()},
		c:         cl,
		key:       types.NamespacedName{Namespace: dep.Namespace, Name: dep.Name},
		container: ct.Name, oldImage: ct.Image, newImage: withTag(ct.Image, "v2"),
	}
	d.title = fmt.Sprintf("Rollout %s/%s: releasing %s", dep.Namespace, dep.Name, d.newImage)
	return d, objs, nil
}

// summarize prints the end state of a completed release and the approvals
// sluice recorded.
func summarize(out io.Writer, s *snapshot, took time.Duration) {
	ro, d := s.rollout, s.deployment
	fmt.Fprintf(out, "\nRelease complete after %s: %s\n", took.Round(100*time.Millisecond), ro.Status.Message)
	_, held := d.Annotations[rolloutsv1beta1.DeploymentOriginalAnnotation]
	fmt.Fprintf(out, "Deployment %s handed back: paused=%v, %s, %s, minReadySeconds %d, %s annotation present=%v\n",
		d.Name, d.Spec.Paused, d.Spec.Strategy.Type, rollingBounds(d), d.Spec.MinReadySeconds, rolloutsv1beta1.DeploymentOriginalAnnotation, held)
	printApprovals(out, ro)
	fmt.Fprintln(out)
}

// printApprovals lists the approvals recorded on the Rollout.
func printApprovals(out io.Writer, ro *rolloutsv1beta1.Rollout) {
	records, err := approval.Records(ro.Annotations[rolloutsv1beta1.ApprovalsAnnotation])
	if err != nil {
		fmt.Fprintf(out, "The approvals record is unreadable: %v\n", err)
		return
	}
	fmt.Fprintf(out, "Approvals recorded on Rollout %s (annotation %s):\n", ro.Name, rolloutsv1beta1.ApprovalsAnnotation)
	for _, r := range records {
		at := "-"
		if r.At != nil {
			at = r.At.Local().Format("15:04:05")
		}
		fmt.Fprintf(out, "  step %d  revision %s  by %-14s via %-12s at %s\n", r.Step, r.Revision, r.By, r.Via, at)
	}
}

// keepBasic leaves the cluster and sluice running until ctx ends or the
// cluster fails, and says how to use them meanwhile.
func keepBasic(ctx context.Context, out io.Writer, st *stack, d *demo) error {
	ns, name := d.key.Namespace, d.key.Name
	fmt.Fprintf(out, `The control plane and sluice keep running. In another terminal:

  export KUBECONFIG=%s
  kubectl -n %s get rollout,deployment,pods
  kubectl -n %s set image deployment/%s %s=%s
  kubectl -n %s get rollout %s -w
  go run ./cmd/kubectl-sluice status %s -n %s

Approve paused steps as examples/%s/README.md shows.
Press Ctrl-C here to stop sluice and the control plane.
`, st.cluster.KubeconfigPath(), ns, ns, name, d.container, withTag(d.newImage, "v3"), ns, name, name, ns, examples.MultiBatchDeploymentDir)
	select {
	case <-ctx.Done():
		return nil
	case err := <-st.cluster.Failed():
		return fmt.Errorf("the local control plane failed: %w", err)
	}
}
