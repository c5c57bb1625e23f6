package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gitopsv1alpha1 "github.com/sluice-dev/sluice/api/gitops/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/gitops/receiver"
)

// RecordPress records a press of a button of sluice's check run (a check_run
// requested_action delivery the receiver verified) on the GitGates it concerns, on whichever
// replica received it: GitHub offers no API to read past presses, so the record on the
// GitGate is how the leader learns of it. A gate records it when it is bound to the
// delivery's repository, lives in the namespace of the Rollout the check run names
// (external_id "namespace/name"), binds that Rollout, and its own webhook secret signed the
// delivery; the record is signed with that secret (receiver.SignedPress). The write reads the
// gate afresh and carries its resourceVersion, so that presses recorded at once on several
// replicas are all kept (a conflict reads again and merges). Changing the annotation wakes
// the gate's reconcile. A press no gate takes (another App's check run, or a Rollout no gate
// binds) is logged and dropped; an error means a gate could not record it, and the receiver
// then answers 503 so that GitHub's redelivery counts.
func (r *Reconciler) RecordPress(ctx context.Context, e receiver.Event) error {
	log := ctrl.LoggerFrom(ctx).WithValues("repository", e.Repository, "delivery", e.Delivery, "checkRun", e.CheckRun)
	p, err := receiver.PressOf(e, r.Clock.Now())
	if err != nil {
		log.Info("Ignoring a check run button press that is not sluice's", "reason", err.Error())
		return nil
	}
	ns, name, _ := strings.Cut(p.Rollout, "/")
	ro := &rolloutsv1beta1.Rollout{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, ro); err != nil {
		if client.IgnoreNotFound(err) == nil {
			log.Info("Ignoring a check run button press of a Rollout that does not exist", "rollout", p.Rollout)
			return nil
		}
		return fmt.Errorf("reading rollout %s: %w", p.Rollout, err)
	}
	gates, err := r.gatesOfRepository(ctx, e.Repository)
	if err != nil {
		return err
	}
	var errs []error
	recorded := 0
	for i := range gates {
		gg := &gates[i]
		if gg.Namespace != ns || gg.Spec.Suspend || !gg.Binds(ro.Labels) {
			continue
		}
		secrets := r.webhookSecretsOf(ctx, []gitopsv1alpha1.GitGate{*gg}, false, false)
		if len(secrets) == 0 || !e.SignedWith(secrets[0].Value) {
			continue
		}
		if err := r.addPress(ctx, client.ObjectKeyFromObject(gg), p.Sign(secrets[0].Value)); err != nil {
			errs = append(errs, err)
			continue
		}
		recorded++
	}
	if recorded == 0 && len(errs) == 0 {
		log.Info("No GitGate took the check run button press: none binds the Rollout with the secret that signed the delivery", "rollout", p.Rollout)
	}
	return errors.Join(errs...)
}

// addPress adds sp to the presses annotation of the gate key: read uncached (a write that
// depends on what was read), merged, and written with the resourceVersion read; a conflict
// reads again.
func (r *Reconciler) addPress(ctx context.Context, key client.ObjectKey, sp receiver.SignedPress) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		gg := &gitopsv1alpha1.GitGate{}
		if err := r.APIReader.Get(ctx, key, gg); err != nil {
			return err
		}
		list, err := receiver.DecodePresses(gg.GetAnnotations()[receiver.PressesAnnotation])
		if err != nil {
			list = nil // a damaged record is replaced: its presses did not verify anyway
		}
		list, added := receiver.AddPress(list, sp)
		if !added {
			return nil // a redelivery of a press recorded already
		}
		base := gg.DeepCopy()
		ann := gg.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[receiver.PressesAnnotation] = receiver.EncodePresses(list)
		gg.SetAnnotations(ann)
		return r.Client.Patch(ctx, gg, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldManager))
	})
	if err != nil {
		return fmt.Errorf("recording a check run button press on gitgate %s: %w", key, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Recorded a check run button press", "gitgate", key, "delivery", sp.Delivery, "by", sp.By, "button", sp.Identifier)
	return nil
}
