package kinds

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
	"github.com/sluice-dev/sluice/workload"
	"github.com/sluice-dev/sluice/workload/partition"
	"github.com/sluice-dev/sluice/workload/revisions"
)

// gameServerSet is an example kind: a StatefulSet-like CRD released by
// name, with a partition like a StatefulSet's, watched from the start. It
// is added to the table as a newcomer would add a kind: one row, built from
// its adapter package (here workload/partition) and nothing else.
func gameServerSet(holds *int) Kind {
	gk := schema.GroupKind{Group: "games.example.com", Kind: "GameServerSet"}
	p := partition.StatefulSet(gk)
	hold := partition.HoldFor(p)
	return Kind{
		GroupKind: gk, Resource: "gameserversets", WebhookVersion: "v1",
		Type:   rolloutsv1beta1.WorkloadTypeStatefulSet,
		Styles: []rolloutsv1beta1.RollingStyleType{rolloutsv1beta1.BlueGreenRollingStyle},
		New: func(c client.Client, reader client.Reader, t workload.Target) (workload.Releaser, error) {
			return partition.New(c, reader, p, schema.FromAPIVersionAndKind(t.Ref.APIVersion, t.Ref.Kind), keyOf(t)), nil
		},
		Hold: func(old, updated *unstructured.Unstructured, rollout string) (bool, string, error) {
			*holds++
			return hold(old, updated, rollout)
		},
		Revisions: revisions.ControllerRevisions,
		Watch: func() client.Object {
			o := &metav1.PartialObjectMetadata{}
			o.SetGroupVersionKind(gk.WithVersion("v1"))
			return o
		},
	}
}

// Given the table with the example row added
// Then every answer the rest of sluice reads from the table includes the
// kind: it is known (and no longer a custom candidate), listed in the
// known kinds and the blue-green kinds, held by its row's hold with a
// webhook rule for its resource, released by its row's adapter in its
// styles, watched from the start, its revisions read from its row; and
// the built-in table says none of it.
func TestTable_exampleKind_comesFromItsRowAlone(t *testing.T) {
	holds := 0
	row := gameServerSet(&holds)
	ref := rolloutsv1beta1.ObjectRef{APIVersion: "games.example.com/v1", Kind: "GameServerSet", Name: "arena"}
	gvk := row.GroupKind.WithVersion("v1")
	tb := append(builtin(), row)

	if !tb.known(ref) || tb.customCandidate(row.GroupKind) {
		t.Errorf("known = %v, custom candidate = %v; want a kind known by name", tb.known(ref), tb.customCandidate(row.GroupKind))
	}
	if got := tb.knownKinds(); !strings.HasSuffix(got, ", games.example.com/GameServerSet") {
		t.Errorf("knownKinds() = %q, want it to end with the example kind", got)
	}
	if ok, which := tb.releasedBlueGreen("GameServerSet"); !ok || which != "Deployments, CloneSets and GameServerSets" {
		t.Errorf("releasedBlueGreen(GameServerSet) = %v, %q", ok, which)
	}
	if ok, why := tb.supported(ref, rolloutsv1beta1.BlueGreenRollingStyle); !ok {
		t.Errorf("supported(blue-green) = false: %s", why)
	}
	if ok, _ := tb.supported(ref, rolloutsv1beta1.CanaryRollingStyle); ok {
		t.Error("supported(canary) = true; the row does not list the Canary style")
	}

	rules := tb.webhookRules()
	last := rules[len(rules)-1]
	if !slices.Equal(last.APIGroups, []string{"games.example.com"}) || !slices.Equal(last.APIVersions, []string{"v1"}) ||
		!slices.Equal(last.Resources, []string{"gameserversets"}) || len(rules) != len(builtin().webhookRules())+1 {
		t.Errorf("webhookRules() end with %+v, want one rule for games.example.com/v1 gameserversets", last)
	}

	hold, ok := tb.holdFor(row.GroupKind)
	if !ok {
		t.Fatal("holdFor(GameServerSet): no hold")
	}
	if _, _, err := hold(newGameServerSet("v1"), newGameServerSet("v2"), "arena"); err != nil || holds != 1 {
		t.Errorf("the hold held through its row %d times (error %v), want once", holds, err)
	}

	rel, err := tb.newReleaser(nil, nil, workload.Target{Namespace: "games", Ref: ref})
	if _, isPartition := rel.(*partition.Releaser); err != nil || !isPartition {
		t.Errorf("newReleaser() = %T, %v; want the row's partition adapter", rel, err)
	}

	watched := tb.watched()
	if w := watched[len(watched)-1]; w.GroupKind != row.GroupKind || w.Watch().GetObjectKind().GroupVersionKind() != gvk ||
		!tb.watchedFromStart(row.GroupKind) {
		t.Errorf("watched() ends with %s, want the example kind watched from the start", w.GroupKind)
	}
	if got := tb.keptIn(gvk); got != row.Revisions {
		t.Errorf("keptIn(%s) = %s, want the row's %s", gvk, got, row.Revisions)
	}
	if tb.workloadType(ref) != row.Type {
		t.Errorf("workloadType = %s, want the row's %s", tb.workloadType(ref), row.Type)
	}

	if Known(ref) || WatchedFromStart(row.GroupKind) || strings.Contains(KnownKinds(), "GameServerSet") {
		t.Error("the built-in table names the example kind")
	}
}

// newGameServerSet is a GameServerSet labelled for releases, with image.
func newGameServerSet(image string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "games.example.com/v1", "kind": "GameServerSet",
		"metadata": map[string]any{"name": "arena", "namespace": "games",
			"labels": map[string]any{rolloutsv1beta1.WorkloadTypeLabel: rolloutsv1beta1.WorkloadTypeStatefulSet}},
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "game", "image": image}}}},
		},
	}}
}
