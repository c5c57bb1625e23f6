package plugin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	analysisv1alpha1 "github.com/sluice-dev/sluice/api/analysis/v1alpha1"
	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// session is a command's connection to the cluster: a client and the
// namespace the kubeconfig flags chose.
type session struct {
	c         client.WithWatch
	namespace string
}

// onRollout is the RunE of a command whose one argument names a Rollout:
// it connects, reads the Rollout and hands both to run.
func (o *options) onRollout(run func(cmd *cobra.Command, s *session, ro *rolloutsv1beta1.Rollout) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		s, err := o.session()
		if err != nil {
			return err
		}
		ro, err := s.rollout(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return run(cmd, s, ro)
	}
}

// session connects with the kubeconfig flags.
func (o *options) session() (*session, error) {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg.UserAgent = FieldManager
	ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := analysisv1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := rolloutsv1beta1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	return &session{c: c, namespace: ns}, nil
}

// rollout reads the Rollout name of the session's namespace. Its errors
// say how to find the right one.
func (s *session) rollout(ctx context.Context, name string) (*rolloutsv1beta1.Rollout, error) {
	ro := &rolloutsv1beta1.Rollout{}
	err := s.c.Get(ctx, types.NamespacedName{Namespace: s.namespace, Name: name}, ro)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("rollout %s/%s not found: list the Rollouts with kubectl sluice get rollouts -n %s, or of every namespace with -A",
			s.namespace, name, s.namespace)
	case err != nil:
		return nil, fmt.Errorf("reading rollout %s/%s: %w", s.namespace, name, err)
	}
	return ro, nil
}

// patchRollout applies a JSON merge patch of patch to ro, as the plugin's
// field manager, and updates ro to the result.
func (s *session) patchRollout(ctx context.Context, ro *rolloutsv1beta1.Rollout, patch map[string]any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := s.c.Patch(ctx, ro, client.RawPatch(types.MergePatchType, b), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("patching rollout %s/%s: %w", ro.Namespace, ro.Name, err)
	}
	return nil
}
