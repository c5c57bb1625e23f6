package fakeoperators

import "sort"

// clonePod is what the CloneSet double's plan knows of one live pod.
type clonePod struct {
	name string
	// updated is true for a pod of the update revision.
	updated bool
	// available is true for a pod ready for at least minReadySeconds.
	available bool
}

// cloneSetInput is what one reconcile of the CloneSet double sees.
type cloneSetInput struct {
	// replicas is spec.replicas.
	replicas int
	// expected is how many pods the partition lets run the update
	// revision: replicas minus the partition.
	expected int
	// surge and unavailable are maxSurge and maxUnavailable resolved
	// against replicas.
	surge, unavailable int
	// paused is spec.updateStrategy.paused: no pod is updated.
	paused bool
	// pods are the live pods.
	pods []clonePod
}

// cloneSetPlan is what the double does in one reconcile.
type cloneSetPlan struct {
	// remove names the pods to delete.
	remove []string
	// createUpdated and createCurrent count the pods to create on the
	// update and on the current revision.
	createUpdated, createCurrent int
}

// planCloneSet is the TEST DOUBLE's reading of OpenKruise's documented
// CloneSet update rules, nothing more:
//   - the partition bounds the pods of the update revision (never lowering
//     those already updated);
//   - old pods beyond what the partition keeps are removed, and pods beyond
//     replicas, but a pod goes only while the available pods that stay are
//     at least replicas - maxUnavailable (pods not available go first);
//   - missing pods are created, of the update revision while the partition
//     allows, and pods of the update revision are created above replicas up
//     to replicas + maxSurge (so with maxSurge the new pods come first and
//     the old ones go as they become available).
func planCloneSet(in cloneSetInput) cloneSetPlan {
	var updated, old []clonePod
	available := 0
	for _, p := range in.pods {
		if p.available {
			available++
		}
		if p.updated {
			updated = append(updated, p)
		} else {
			old = append(old, p)
		}
	}
	targetUpdated := min(max(len(updated), in.expected), in.replicas)
	if in.paused {
		targetUpdated = min(len(updated), in.replicas)
	}
	candidates := excess(old, len(old)-(in.replicas-targetUpdated))
	candidates = append(candidates, excess(updated, len(updated)-targetUpdated)...)
	var plan cloneSetPlan
	floor := in.replicas - in.unavailable
	removedUpdated := 0
	for _, p := range candidates {
		switch {
		case p.available && available <= floor, !p.available && available < floor:
			continue
		case p.available:
			available--
		}
		plan.remove = append(plan.remove, p.name)
		if p.updated {
			removedUpdated++
		}
	}
	total := len(in.pods) - len(plan.remove)
	onUpdate := len(updated) - removedUpdated
	grow := func() bool { return !in.paused && onUpdate < in.expected }
	for ; total < in.replicas; total++ {
		if grow() {
			plan.createUpdated++
			onUpdate++
			continue
		}
		plan.createCurrent++
	}
	for ; grow() && total < in.replicas+in.surge; total++ {
		plan.createUpdated++
		onUpdate++
	}
	return plan
}

// excess returns the n pods of pods to remove first: those not available,
// then by name.
func excess(pods []clonePod, n int) []clonePod {
	if n <= 0 {
		return nil
	}
	sorted := append([]clonePod(nil), pods...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].available != sorted[j].available {
			return !sorted[i].available
		}
		return sorted[i].name < sorted[j].name
	})
	return sorted[:min(n, len(sorted))]
}
