package main

import (
	"reflect"
	"testing"
	"time"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

func TestTally_groupsByKindMostFrequentFirst(t *testing.T) {
	counts := map[requestKey]requestStat{
		{Verb: "PATCH", Resource: "deployments", Namespace: "a", Code: 200}:              {N: 3, Time: 30 * time.Millisecond},
		{Verb: "PATCH", Resource: "deployments", Namespace: "b", Code: 200}:              {N: 1, Time: 10 * time.Millisecond},
		{Verb: "PATCH", Resource: "deployments", Namespace: "a", Code: 200, Empty: true}: {N: 2, Time: 40 * time.Millisecond},
		{Verb: "POST", Resource: "events", Namespace: "a", Code: 201}:                    {N: 6, Time: 6 * time.Millisecond},
		{Verb: "PATCH", Resource: "rollouts/status", Namespace: "a", Code: 409}:          {N: 1, Time: 5 * time.Millisecond},
		{Verb: "LIST", Resource: "replicasets", Namespace: "a", Code: 200}:               {N: 9, Time: 900 * time.Millisecond},
		{Verb: "WATCH", Resource: "replicasets", Code: 0}:                                {N: 1},
	}
	tests := []struct {
		name      string
		kind      func(requestKey) string
		want      []count
		wantTotal int
	}{
		{name: "writes", kind: writeKind, wantTotal: 13, want: []count{
			{Kind: "PATCH deployments", Count: 6, MeanMs: 13.3},
			{Kind: "POST events", Count: 6, MeanMs: 1},
			{Kind: "PATCH rollouts/status", Count: 1, MeanMs: 5},
		}},
		{name: "reads", kind: readKind, wantTotal: 10, want: []count{
			{Kind: "LIST replicasets", Count: 9, MeanMs: 100},
			{Kind: "WATCH replicasets", Count: 1, MeanMs: 0},
		}},
		{name: "empty patches", kind: emptyKind, wantTotal: 2, want: []count{
			{Kind: "PATCH deployments", Count: 2, MeanMs: 20},
		}},
		{name: "failures leave watches out", kind: failedKind, wantTotal: 1, want: []count{
			{Kind: "PATCH rollouts/status 409", Count: 1, MeanMs: 5},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total := tally(counts, tt.kind)
			if !reflect.DeepEqual(got, tt.want) || total != tt.wantTotal {
				t.Errorf("tally = %+v, %d; want %+v, %d", got, total, tt.want, tt.wantTotal)
			}
		})
	}
}

func TestWritesIn_countsOnlyWritesOfTheNamespace(t *testing.T) {
	counts := map[requestKey]requestStat{
		{Verb: "PATCH", Resource: "deployments", Namespace: "a"}: {N: 3},
		{Verb: "DELETE", Resource: "pods", Namespace: "a"}:       {N: 1},
		{Verb: "GET", Resource: "deployments", Namespace: "a"}:   {N: 7},
		{Verb: "PATCH", Resource: "deployments", Namespace: "b"}: {N: 5},
		{Verb: "POST", Resource: "namespaces"}:                   {N: 2},
	}
	for ns, want := range map[string]int{"a": 4, "b": 5, "c": 0} {
		if got := writesIn(counts, ns); got != want {
			t.Errorf("writesIn(%q) = %d, want %d", ns, got, want)
		}
	}
}

func TestCompleted_needsHealthyCompletedAndTheRevision(t *testing.T) {
	rollout := func(phase rolloutsv1beta1.RolloutPhase, state rolloutsv1beta1.CanaryStepState, revision string) *rolloutsv1beta1.Rollout {
		ro := &rolloutsv1beta1.Rollout{}
		ro.Status.Phase = phase
		if state != "" {
			ro.Status.CanaryStatus = &rolloutsv1beta1.CanaryStatus{CanaryRevision: revision}
			ro.Status.CanaryStatus.CurrentStepState = state
		}
		return ro
	}
	healthy, progressing := rolloutsv1beta1.RolloutPhaseHealthy, rolloutsv1beta1.RolloutPhaseProgressing
	done, upgrading := rolloutsv1beta1.CanaryStepStateCompleted, rolloutsv1beta1.CanaryStepStateUpgrade
	tests := []struct {
		name     string
		ro       *rolloutsv1beta1.Rollout
		revision string
		want     bool
	}{
		{name: "completed release of the revision", ro: rollout(healthy, done, "v2"), revision: "v2", want: true},
		{name: "completed release of the old revision", ro: rollout(healthy, done, "v1"), revision: "v2", want: false},
		{name: "any revision", ro: rollout(healthy, done, "v1"), revision: "", want: true},
		{name: "steps done but still finishing", ro: rollout(progressing, done, "v2"), revision: "v2", want: false},
		{name: "mid-step", ro: rollout(progressing, upgrading, "v2"), revision: "v2", want: false},
		{name: "no canary status", ro: rollout(healthy, "", ""), revision: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := completed(tt.ro, tt.revision); got != tt.want {
				t.Errorf("completed(%s, %q) = %v, want %v", describeRollout(tt.ro), tt.revision, got, tt.want)
			}
		})
	}
}
