package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/cmd/kubectl-sluice/internal/view"
)

// The output formats of get.
const (
	outputTable = ""
	outputWide  = "wide"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

func newGetCommand(o *options) *cobra.Command {
	get := &cobra.Command{
		Use:   "get",
		Short: "List Rollouts",
		Args:  cobra.NoArgs,
	}
	var allNamespaces bool
	var output string
	rollouts := &cobra.Command{
		Use:     "rollouts [NAME]",
		Aliases: []string{"rollout", "ro"},
		Short:   "List Rollouts with their phase, step, state, workload, revision and ready pods",
		Example: `  kubectl sluice get rollouts -n shop
  kubectl sluice get ro -A -o wide
  kubectl sluice get rollout web -n shop -o yaml`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeRollouts(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch output {
			case outputTable, outputWide, outputJSON, outputYAML:
			default:
				return fmt.Errorf("output format %q is not supported: use wide, json or yaml", output)
			}
			if allNamespaces && len(args) == 1 {
				return fmt.Errorf("a Rollout name and -A do not go together: name the namespace with -n instead")
			}
			s, err := o.session()
			if err != nil {
				return err
			}
			return runGet(cmd.Context(), s, o.streams.Out, args, allNamespaces, output)
		},
	}
	rollouts.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "List the Rollouts of every namespace")
	rollouts.Flags().StringVarP(&output, "output", "o", "", "Output format: wide, json or yaml")
	get.AddCommand(rollouts)
	return get
}

func runGet(ctx context.Context, s *session, out io.Writer, args []string, all bool, output string) error {
	var items []rolloutsv1beta1.Rollout
	if len(args) == 1 {
		ro, err := s.rollout(ctx, args[0])
		if err != nil {
			return err
		}
		items = []rolloutsv1beta1.Rollout{*ro}
	} else {
		list := &rolloutsv1beta1.RolloutList{}
		var opts []client.ListOption
		if !all {
			opts = append(opts, client.InNamespace(s.namespace))
		}
		if err := s.c.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("listing rollouts: %w", err)
		}
		items = list.Items
	}
	switch output {
	case outputJSON, outputYAML:
		return printObjects(out, items, len(args) == 1, output)
	}
	if len(items) == 0 {
		where := "namespace " + s.namespace
		if all {
			where = "any namespace"
		}
		fmt.Fprintf(out, "No Rollouts found in %s\n", where)
		return nil
	}
	now := time.Now()
	rows := make([]view.Row, 0, len(items))
	for i := range items {
		ro := &items[i]
		ws, _ := workloadStatus(ctx, s, ro)
		rows = append(rows, view.RowOf(ro, ws, now))
	}
	return view.WriteTable(out, rows, view.Columns{Namespace: all, Wide: output == outputWide})
}

// printObjects prints one Rollout, or a list of them, as JSON or YAML,
// without managed fields.
func printObjects(out io.Writer, items []rolloutsv1beta1.Rollout, one bool, output string) error {
	for i := range items {
		items[i].APIVersion = rolloutsv1beta1.GroupVersion.String()
		items[i].Kind = "Rollout"
		items[i].ManagedFields = nil
	}
	var obj any = &rolloutsv1beta1.RolloutList{Items: items}
	if one {
		obj = &items[0]
	} else {
		list := obj.(*rolloutsv1beta1.RolloutList)
		list.APIVersion = rolloutsv1beta1.GroupVersion.String()
		list.Kind = "RolloutList"
	}
	var b []byte
	var err error
	if output == outputJSON {
		b, err = json.MarshalIndent(obj, "", "    ")
		b = append(b, '\n')
	} else {
		b, err = yaml.Marshal(obj)
	}
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// completeRollouts completes the names of the Rollouts of the namespace.
func completeRollouts(o *options) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		s, err := o.session()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		list := &rolloutsv1beta1.RolloutList{}
		if err := s.c.List(cmd.Context(), list, client.InNamespace(s.namespace)); err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names := make([]cobra.Completion, 0, len(list.Items))
		for i := range list.Items {
			names = append(names, list.Items[i].Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
