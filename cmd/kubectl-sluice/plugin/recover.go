package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/release/coverage"
	"github.com/sluice-dev/sluice/traffic"
	"github.com/sluice-dev/sluice/traffic/providers"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/kinds"
)

func newRecoverCommand(o *options) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "recover ROLLOUT",
		Short: "Hand a Rollout's workload, Services and routes back to Kubernetes, without sluice's controller",
		Long: `Hand everything a Rollout's release holds back to Kubernetes, in the order
that keeps every Service serving, with sluice's controller stopped, crashed
or gone (docs/recovery.md):

  1. each stable Service of its trafficRoutings gets its own selector back
     (sluice narrowed it to the stable revision, which would select no pod
     once Kubernetes finishes the rollout);
  2. each route is restored (the canary Ingress deleted, an HTTPRoute's
     rules and a Lua-routed object written back);
  3. the canary Services are deleted;
  4. the workload is handed back with its restore patch: Kubernetes'
     own controller finishes the rollout with the user's strategy.

It uses the same code as sluice's controller and can be repeated.
docs/recovery.md gives the same steps in plain kubectl, and what to do
before sluice runs again.`,
		Example:           `  kubectl sluice recover web -n shop`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeRollouts(o),
		RunE: o.onRollout(func(cmd *cobra.Command, s *session, ro *rolloutsv1beta1.Rollout) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return runRecover(ctx, s.c, o.streams.Out, ro)
		}),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long to keep trying")
	return cmd
}

// recoverStep is one stage of the recovery, repeated until done.
type recoverStep struct {
	what string
	do   func(ctx context.Context) (bool, error)
}

// runRecover hands ro's workload, Services and routes back, stage by
// stage: a stage starts once the one before is done.
func runRecover(ctx context.Context, c client.Client, out io.Writer, ro *rolloutsv1beta1.Rollout) error {
	steps, err := recoverSteps(c, ro)
	if err != nil {
		return err
	}
	for _, st := range steps {
		var last error
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			done, err := st.do(ctx)
			if err != nil {
				last = err
				return false, nil // a conflict or a transient error: look again
			}
			return done, nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", st.what, errors.Join(err, last))
		}
		_, _ = fmt.Fprintf(out, "%s: done\n", st.what)
	}
	_, _ = fmt.Fprintf(out, "Rollout %s/%s handed back: Kubernetes finishes the rollout of %s %s\n", ro.Namespace, ro.Name, ro.Spec.WorkloadRef.Kind, ro.Spec.WorkloadRef.Name)
	return nil
}

func recoverSteps(c client.Client, ro *rolloutsv1beta1.Rollout) ([]recoverStep, error) {
	var refs []rolloutsv1beta1.TrafficRoutingRef
	disable := false
	if cs := ro.Spec.Strategy.Canary; cs != nil {
		refs, disable = cs.TrafficRoutings, cs.DisableGenerateCanaryService
	} else if bg := ro.Spec.Strategy.BlueGreen; bg != nil {
		refs, disable = bg.TrafficRoutings, bg.DisableGenerateCanaryService
	}
	owner := *metav1.NewControllerRef(ro, rolloutsv1beta1.GroupVersion.WithKind("Rollout"))
	var services []traffic.Services
	var routes []traffic.Provider
	for _, ref := range refs {
		t := traffic.Target{Namespace: ro.Namespace, Rollout: ro.Name, Owner: owner, Ref: ref, DisableCanaryService: disable}
		ps, err := providers.New(providers.Deps{Client: c, Reader: c}, t)
		if err != nil {
			return nil, fmt.Errorf("trafficRoutings entry of Service %s: %w", ref.Service, err)
		}
		routes = append(routes, ps...)
		services = append(services, providers.Services(providers.Deps{Client: c, Reader: c}, t))
	}
	releaser, err := kinds.New(c, c, workload.Target{Namespace: ro.Namespace, Ref: ro.Spec.WorkloadRef, Style: coverage.Style(ro)})
	if err != nil {
		return nil, fmt.Errorf("workload %s %s: %w", ro.Spec.WorkloadRef.Kind, ro.Spec.WorkloadRef.Name, err)
	}
	all := func(n int, do func(i int, ctx context.Context) (bool, error)) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			done := true
			for i := range n {
				ok, err := do(i, ctx)
				if err != nil {
					return false, err
				}
				done = done && ok
			}
			return done, nil
		}
	}
	return []recoverStep{
		{"Restoring the stable Services' selectors", all(len(services), func(i int, ctx context.Context) (bool, error) { return services[i].RestoreStable(ctx) })},
		{"Restoring the routes", all(len(routes), func(i int, ctx context.Context) (bool, error) { return routes[i].Finalize(ctx) })},
		{"Deleting the canary Services", all(len(services), func(i int, ctx context.Context) (bool, error) { return services[i].RemoveCanary(ctx) })},
		{"Handing the workload back", func(ctx context.Context) (bool, error) {
			_, err := releaser.Finalize(ctx, false)
			if err != nil {
				return false, err
			}
			// Finalize reports done as soon as it wrote; done is when a
			// second look finds nothing left to write.
			st, err := releaser.Status(ctx)
			if err != nil {
				return false, err
			}
			return st.InProgressRollout == "", nil
		}},
	}, nil
}
