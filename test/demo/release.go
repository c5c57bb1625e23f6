package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// demo drives one release of the example Deployment and shows it.
type demo struct {
	*runner
	c client.Client
	// key names both the Rollout and the Deployment.
	key types.NamespacedName
	// container, oldImage and newImage say what the release changes.
	container, oldImage, newImage string
	title                         string
}

// approver is one way a user approves a paused step.
type approver struct {
	// how describes the way, for the panel.
	how string
	// approve approves the paused step and returns the command a user would
	// type for the same effect.
	approve func(ctx context.Context, d *demo, s *snapshot, step int32) (string, error)
}

// approvers alternate: step 1 through the annotation, step 2 the way
// kubectl-kruise does it, and so on.
func approvers() []approver {
	return []approver{
		{how: "with the annotation", approve: approveByAnnotation},
		{how: "with a status patch, as kubectl-kruise does", approve: approveByStatus},
	}
}

// apply creates the example's objects, waiting for a new namespace's default
// ServiceAccount before creating what goes into it.
func (d *demo) apply(ctx context.Context, objs []client.Object) error {
	for _, obj := range objs {
		if err := d.c.Create(ctx, obj, client.FieldOwner("kubectl-create")); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
		if ns, ok := obj.(*corev1.Namespace); ok {
			sa := types.NamespacedName{Namespace: ns.Name, Name: "default"}
			if err := d.until(ctx, "the default ServiceAccount of namespace "+ns.Name, func(ctx context.Context) (bool, error) {
				return d.c.Get(ctx, sa, &corev1.ServiceAccount{}) == nil, nil
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// run releases the new image through every step of the Rollout, approving
// each paused step after d.pace, and returns the completed snapshot.
func (d *demo) run(ctx context.Context) (*snapshot, error) {
	s, err := d.watch(ctx, "the Deployment to be available", []string{
		"Kubernetes starts the pods (kwok plays the kubelet); sluice labels the Deployment so that its webhook sees updates.",
	}, settled)
	if err != nil {
		return nil, err
	}
	d.note("Deployment %s: %d/%d pods available; Rollout %s is %s", d.key.Name, s.deployment.Status.AvailableReplicas,
		*s.deployment.Spec.Replicas, d.key.Name, s.rollout.Status.Phase)
	if err := d.countdown(ctx, []string{
		"A user releases a new version: kubectl -n " + d.key.Namespace + " set image deployment/" + d.key.Name + " " + d.container + "=" + d.newImage,
	}, "changes the image"); err != nil {
		return nil, err
	}

	if err := d.setImage(ctx); err != nil {
		return nil, err
	}
	d.note("Changed the image, as a user would: kubectl -n %s set image deployment/%s %s=%s", d.key.Namespace, d.key.Name, d.container, d.newImage)

	approved := map[int32]bool{}
	for i := 0; ; i++ {
		s, err = d.watch(ctx, "the next paused step", []string{
			"sluice's webhook held the update (the Deployment is paused); sluice releases each step's pods through Kubernetes' own rolling update.",
			"A step then pauses for an approval, except the last one, which releases every pod; then sluice hands the Deployment back.",
		}, func(s *snapshot) bool { return released(s, d.newImage) || pausedAt(s) > 0 && !approved[pausedAt(s)] })
		if err != nil {
			return nil, err
		}
		if released(s, d.newImage) {
			d.screen.draw(s.frame(d.title, []string{
				"Nothing: every pod runs " + imageTag(d.newImage) + ", the Deployment is handed back to Kubernetes unchanged,",
				"and the Rollout waits for the next release.",
			}))
			return s, nil
		}
		step := pausedAt(s)
		revision := s.canaryRevision()
		d.note("Step %d/%d paused: %s", step, len(s.rollout.Spec.Strategy.Canary.Steps), podSummary(s))
		a := approvers()[i%len(approvers())]
		if err := d.countdown(ctx, d.approvalHelp(s, step), "approves "+a.how); err != nil {
			return nil, err
		}
		command, err := a.approve(ctx, d, s, step)
		if err != nil {
			return nil, err
		}
		approved[step] = true
		d.note("Approved step %d: %s", step, command)
		if s, err = d.watch(ctx, fmt.Sprintf("the approval of step %d to be recorded", step), []string{
			"sluice applies the approval and records it in the Rollout's " + rolloutsv1beta1.ApprovalsAnnotation + " annotation.",
		}, func(s *snapshot) bool { return recorded(s, step, revision) != nil }); err != nil {
			return nil, err
		}
		r := recorded(s, step, revision)
		d.note("Recorded in %s: step %d of revision %s, by %s, via %s, at %s", rolloutsv1beta1.ApprovalsAnnotation,
			r.Step, r.Revision, r.By, r.Via, r.At.Local().Format("15:04:05"))
	}
}

// countdown redraws the panel with next for d.pace, saying when the demo
// will do what: "In 3s the demo <does>."
func (d *demo) countdown(ctx context.Context, next []string, does string) error {
	end := time.Now().Add(d.pace)
	for {
		left := time.Until(end)
		if left <= 0 {
			return nil
		}
		s, err := observe(ctx, d.c, d.key)
		if err != nil {
			return err
		}
		f := s.frame(d.title, next)
		f.Countdown = fmt.Sprintf("In %ds the demo %s.", (left+time.Second-1)/time.Second, does)
		d.screen.draw(f)
		if err := d.sleep(ctx, min(tick, left)); err != nil {
			return err
		}
	}
}

// approvalHelp says how a user approves step.
func (d *demo) approvalHelp(s *snapshot, step int32) []string {
	return []string{
		"A user checks the new pods, then approves the step with either of:",
		"  kubectl-kruise rollout approve rollout/" + d.key.Name + " -n " + d.key.Namespace,
		"  " + d.annotateCommand(s, step),
	}
}

// setImage changes the container's image the way kubectl set image does.
func (d *demo) setImage(ctx context.Context) error {
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []map[string]string{{"name": d.container, "image": d.newImage}}}}}})
	obj := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: d.key.Namespace, Name: d.key.Name}}
	if err := d.c.Patch(ctx, obj, client.RawPatch(types.StrategicMergePatchType, patch), client.FieldOwner("kubectl-set")); err != nil {
		return fmt.Errorf("setting the image: %w", err)
	}
	return nil
}

// approveByAnnotation approves up to step with sluice.dev/approve, as
// kubectl annotate does; sluice's webhook records who wrote it.
func approveByAnnotation(ctx context.Context, d *demo, s *snapshot, step int32) (string, error) {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		rolloutsv1beta1.ApproveAnnotation: fmt.Sprint(step)}}})
	obj := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: d.key.Namespace, Name: d.key.Name}}
	if err := d.c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-annotate")); err != nil {
		return "", fmt.Errorf("approving step %d through the annotation: %w", step, err)
	}
	return d.annotateCommand(s, step), nil
}

// annotateCommand is the kubectl command that approves step through the
// annotation; it needs --overwrite once the Rollout carries one.
func (d *demo) annotateCommand(s *snapshot, step int32) string {
	cmd := fmt.Sprintf("kubectl annotate rollout %s -n %s %s=%d", d.key.Name, d.key.Namespace, rolloutsv1beta1.ApproveAnnotation, step)
	if _, ok := s.rollout.Annotations[rolloutsv1beta1.ApproveAnnotation]; ok {
		cmd += " --overwrite"
	}
	return cmd
}

// approveByStatus approves the paused step the way kubectl-kruise rollout
// approve does: a merge patch of the status subresource.
func approveByStatus(ctx context.Context, d *demo, _ *snapshot, step int32) (string, error) {
	patch := []byte(`{"status":{"canaryStatus":{"currentStepState":"StepReady"}}}`)
	obj := &rolloutsv1beta1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: d.key.Namespace, Name: d.key.Name}}
	if err := d.c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("kubectl-kruise")); err != nil {
		return "", fmt.Errorf("approving step %d through the status: %w", step, err)
	}
	return fmt.Sprintf("kubectl-kruise rollout approve rollout/%s -n %s", d.key.Name, d.key.Namespace), nil
}

// watch redraws the panel with next until done holds for a snapshot, and
// returns that snapshot. It fails after waitTimeout, naming what, or when
// the control plane fails or ctx ends.
func (d *demo) watch(ctx context.Context, what string, next []string, done func(*snapshot) bool) (*snapshot, error) {
	var last *snapshot
	err := d.until(ctx, what, func(ctx context.Context) (bool, error) {
		s, err := observe(ctx, d.c, d.key)
		if err != nil {
			return false, err
		}
		last = s
		d.screen.draw(s.frame(d.title, next))
		return done(s), nil
	})
	return last, err
}
