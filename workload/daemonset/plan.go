package daemonset

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podView is what a release needs to know about one pod of a DaemonSet.
type podView struct {
	// Name and UID identify the pod; ResourceVersion is the version read.
	// Both guard its deletion: a pod that changed since it was read (it
	// became ready, or is already going) is not deleted on that read.
	Name            string
	UID             types.UID
	ResourceVersion string
	// Node is the node the pod is bound to; empty while it is unscheduled.
	Node string
	// Revision is the pod's controller-revision-hash.
	Revision string
	// Ready is the pod's Ready condition.
	Ready bool
	// Leaving is true for a pod being deleted or that has terminated: the
	// DaemonSet controller replaces it with a pod of the update revision.
	Leaving bool
}

// viewOf reads the release-relevant facts of pod.
func viewOf(pod *corev1.Pod) podView {
	v := podView{
		Name:            pod.Name,
		UID:             pod.UID,
		ResourceVersion: pod.ResourceVersion,
		Node:            pod.Spec.NodeName,
		Revision:        pod.Labels[appsv1.DefaultDaemonSetUniqueLabelKey],
		Leaving: pod.DeletionTimestamp != nil ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed,
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			v.Ready = c.Status == corev1.ConditionTrue
		}
	}
	return v
}

// tally is a DaemonSet's pods counted node by node against its update
// revision. A node counts once: updated when it runs a live pod of the
// update revision, old when it runs only live pods of other revisions, and
// in flight when its pods are all leaving or it has none yet (the
// DaemonSet controller then creates a pod of the update revision there).
type tally struct {
	// Updated and UpdatedReady count the nodes running the update
	// revision, and those whose pod of it is ready.
	Updated, UpdatedReady int32
	// Old are the live pods to replace, one per node.
	Old []podView
	// InFlight counts the nodes whose pod is being replaced.
	InFlight int32
	// Unavailable counts the nodes without a ready live pod.
	Unavailable int32
	// Extra counts live pods beyond one per node and leaving pods: while
	// any remains, the DaemonSet controller has work to do.
	Extra int32
	// Live counts the live pods.
	Live int32
}

// count tallies pods against the update revision update, for a DaemonSet
// that should run replicas pods (status.desiredNumberScheduled).
func count(pods []podView, update string, replicas int32) tally {
	byNode := map[string][]podView{}
	var nodes []string
	for _, p := range pods {
		key := p.Node
		if key == "" {
			key = "pod/" + p.Name // unscheduled: a node of its own
		}
		if _, ok := byNode[key]; !ok {
			nodes = append(nodes, key)
		}
		byNode[key] = append(byNode[key], p)
	}
	var t tally
	for _, node := range nodes {
		var updated, old *podView
		live := int32(0)
		for i, p := range byNode[node] {
			if p.Leaving {
				t.Extra++
				continue
			}
			live++
			switch {
			case p.Revision == update && (updated == nil || p.Ready && !updated.Ready):
				updated = &byNode[node][i]
			case p.Revision != update && (old == nil || !p.Ready && old.Ready):
				old = &byNode[node][i]
			}
		}
		t.Live += live
		t.Extra += max(live-1, 0)
		switch {
		case updated != nil:
			t.Updated++
			if updated.Ready {
				t.UpdatedReady++
			} else {
				t.Unavailable++
			}
		case old != nil:
			t.Old = append(t.Old, *old)
			if !old.Ready {
				t.Unavailable++
			}
		default:
			t.InFlight++
			t.Unavailable++
		}
	}
	if missing := replicas - int32(len(nodes)); missing > 0 { //nolint:gosec // one node per pod at most
		t.InFlight += missing
		t.Unavailable += missing
	}
	return t
}

// settled reports whether the DaemonSet runs exactly one live pod on each
// of its replicas nodes and none is coming or going.
func (t tally) settled(replicas int32) bool {
	return t.Extra == 0 && t.InFlight == 0 && t.Updated+int32(len(t.Old)) == replicas //nolint:gosec // pod counts fit
}

// toDelete picks the old pods to delete so that desired nodes run, or are
// about to run, the update revision, without more than maxUnavailable nodes
// lacking a ready pod at once. Nodes in flight count towards desired and
// against maxUnavailable, so calling it again before the DaemonSet
// controller has replaced the pods deletes nothing more. Pods of neither
// the update nor the stable revision go first (a release restarted for a
// newer revision: the pods of the one it replaced must go anyway, and
// replacing them first keeps every stable pod until the batch needs it);
// then unready old pods, which cost no availability (they serve nothing);
// then ready ones, in the order of their node names, as long as
// maxUnavailable allows. stable is the release's stable revision ("": not
// known, no pod goes first for it).
func (t tally) toDelete(desired, maxUnavailable int32, stable string) []podView {
	need := desired - t.Updated - t.InFlight
	if need <= 0 {
		return nil
	}
	old := append([]podView(nil), t.Old...)
	superseded := func(p podView) bool { return stable != "" && p.Revision != stable }
	sort.SliceStable(old, func(i, j int) bool {
		if superseded(old[i]) != superseded(old[j]) {
			return superseded(old[i])
		}
		if old[i].Ready != old[j].Ready {
			return !old[i].Ready
		}
		if old[i].Node != old[j].Node {
			return old[i].Node < old[j].Node
		}
		return old[i].Name < old[j].Name
	})
	unavailable := t.Unavailable
	var out []podView
	for _, p := range old {
		if int32(len(out)) >= need { //nolint:gosec // pod counts fit
			break
		}
		if p.Ready {
			if unavailable >= maxUnavailable {
				break
			}
			unavailable++
		}
		out = append(out, p)
	}
	return out
}

// stableCandidate is the revision a release replaces: the one most live old
// pods run (ties go to the smaller hash, for a stable answer), or, when no
// pod runs another revision than the update one, the DaemonSet's previous
// revision.
func stableCandidate(t tally, previous string) string {
	n := map[string]int{}
	best := ""
	for _, p := range t.Old {
		n[p.Revision]++
		if c := n[p.Revision]; best == "" || c > n[best] || c == n[best] && p.Revision < best {
			best = p.Revision
		}
	}
	if best != "" {
		return best
	}
	return previous
}
