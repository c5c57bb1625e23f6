package e2e

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutsv1beta1 "github.com/sluice-dev/sluice/api/rollouts/v1beta1"
)

// dumpOnFailure logs the release-relevant objects of ns when t fails, so a
// failed scenario can be understood from its output alone.
func dumpOnFailure(t *testing.T, ns string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx := context.Background()
		lists := []client.ObjectList{&appsv1.DeploymentList{}, &appsv1.ReplicaSetList{}, &appsv1.StatefulSetList{},
			&rolloutsv1beta1.RolloutList{}, &rolloutsv1beta1.BatchReleaseList{}}
		for _, l := range lists {
			if err := suite.c.List(ctx, l, client.InNamespace(ns)); err != nil {
				t.Logf("listing %T: %v", l, err)
				continue
			}
			b, _ := json.MarshalIndent(l, "", " ")
			t.Logf("%T:\n%s", l, b)
		}
		// The pods and the events, a line each: who deleted or created
		// which pod when, and what sluice reported, in order.
		pods := &corev1.PodList{}
		if err := suite.c.List(ctx, pods, client.InNamespace(ns)); err == nil {
			for _, p := range pods.Items {
				t.Logf("pod %s: labels %v, phase %s, deleting %v, created %s", p.Name, p.Labels, p.Status.Phase, p.DeletionTimestamp != nil,
					p.CreationTimestamp.Format(time.RFC3339))
			}
		}
		events := &corev1.EventList{}
		if err := suite.c.List(ctx, events, client.InNamespace(ns)); err == nil {
			sort.SliceStable(events.Items, func(i, j int) bool { return eventTime(&events.Items[i]).Before(eventTime(&events.Items[j])) })
			for _, e := range events.Items {
				t.Logf("event %s %s %s/%s %s: %s", eventTime(&e).Format("15:04:05.000"), e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
			}
		}
	})
}

// eventTime is when an event happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
