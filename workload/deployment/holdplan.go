package deployment

import "sort"

// Holding a Deployment on its stable revision (an aborted release) moves
// pods between its ReplicaSets without changing its pod template. The
// Deployment is paused with maxSurge 0 (the Hold gate), and Kubernetes'
// Deployment controller keeps scaling a paused Deployment: with one active
// ReplicaSet it sizes it to spec.replicas; with several it scales them so
// that their sum is spec.replicas (maxSurge being 0), adding or removing the
// difference proportionally to their deployment.kubernetes.io/max-replicas
// annotation, which is spec.replicas on every one of them once it has
// settled, so that each share is 0 and the whole difference goes to the
// largest ReplicaSet (ties: the newer one when adding, the older one when
// removing). So every write sluice makes to one ReplicaSet is followed by
// Kubernetes' complementary move on another, and the planner below chooses
// writes whose complementary move goes the right way:
//   - lower a ReplicaSet of another revision by k when Kubernetes then adds
//     k to the stable one (it is the largest once lowered);
//   - or raise the stable ReplicaSet by k when Kubernetes then removes k
//     from one of another revision (that one is the largest);
//   - when neither does (the sizes are balanced against the tie rules, or
//     the stable ReplicaSet has no pod left and a single active ReplicaSet
//     is always sized back), lower one by k and raise the stable one by k
//     in two writes whose sum is spec.replicas: Kubernetes has nothing to
//     scale. Each write carries the resourceVersion read, so if Kubernetes
//     acts between the two, the second fails or Kubernetes' move makes up
//     for the first; either way no more than k pods move at once.
//
// k is at most the user's maxUnavailable (at least 1) minus the pods
// already unavailable, so that at most that many pods are unavailable at
// any moment, as in the user's own rolling update. docs/deployment-batches.md
// explains it for users.

// rsState is what the hold planner knows of one active (or stable)
// ReplicaSet.
type rsState struct {
	// name identifies it.
	name string
	// replicas is spec.replicas; ready is status.readyReplicas.
	replicas, ready int32
	// stable marks the ReplicaSet of the stable revision; current the one
	// of the Deployment's pod template (Kubernetes' new ReplicaSet).
	stable, current bool
	// newer orders by creation (creation time, then name): a higher value
	// is a newer ReplicaSet.
	newer int
}

// rsWrite sets one ReplicaSet's spec.replicas.
type rsWrite struct {
	name     string
	replicas int32
}

// holdPlan is what one look at a held Deployment does.
type holdPlan struct {
	// writes are applied in order.
	writes []rsWrite
	// done is true once every pod runs the stable revision and is ready.
	done bool
}

// planHold chooses the writes that move pods of sets (whose spec.replicas
// sum to replicas, and one of which is stable) back to the stable
// revision, making at most budget more pods unavailable. A pod of another
// revision that is not ready costs nothing to move: Kubernetes' ReplicaSet
// controller removes the pods that are not ready (pending, unscheduled,
// failing) first, and the stable pod that replaces it is as unavailable as
// it was. So a release whose new pods cannot run (the reason it was
// aborted) moves them back even when they use up maxUnavailable.
func planHold(sets []rsState, replicas, budget int32) holdPlan {
	stable := -1
	var others, free int32
	for i, s := range sets {
		switch {
		case s.stable:
			stable = i
		case s.replicas > 0:
			others += s.replicas
			free = max(free, unready(s))
		}
	}
	if stable < 0 {
		return holdPlan{}
	}
	if others == 0 {
		s := sets[stable]
		return holdPlan{done: s.replicas == replicas && s.ready >= replicas}
	}
	budget = max(budget, 0)
	// fits reports whether lowering set i by k stays within the budget.
	fits := func(i int, k int32) bool { return k-unready(sets[i]) <= budget }
	order := othersBySize(sets)
	for k := min(budget+free, others); k > 0; k-- {
		for _, i := range order {
			if sets[i].replicas < k || !fits(i, k) {
				continue
			}
			try := withReplicas(sets, i, sets[i].replicas-k)
			if movesBack(settle(try, replicas), sets, stable, k) {
				return holdPlan{writes: []rsWrite{{sets[i].name, sets[i].replicas - k}}}
			}
		}
		try := withReplicas(sets, stable, sets[stable].replicas+k)
		after := settle(try, replicas)
		if j := lowered(after, sets); j >= 0 && fits(j, k) && movesBack(after, sets, stable, k) {
			return holdPlan{writes: []rsWrite{{sets[stable].name, sets[stable].replicas + k}}}
		}
	}
	i := order[0]
	k := min(budget+unready(sets[i]), sets[i].replicas)
	if k <= 0 {
		return holdPlan{}
	}
	return holdPlan{writes: []rsWrite{{sets[i].name, sets[i].replicas - k}, {sets[stable].name, sets[stable].replicas + k}}}
}

// unready counts the pods of s that are not ready.
func unready(s rsState) int32 { return max(s.replicas-s.ready, 0) }

// lowered is the ReplicaSet that has fewer pods in after than in before
// (-1: none).
func lowered(after, before []rsState) int {
	for i := range after {
		if after[i].replicas < before[i].replicas {
			return i
		}
	}
	return -1
}

// othersBySize lists the active ReplicaSets that are not stable, largest
// first (ties: newer first).
func othersBySize(sets []rsState) []int {
	var out []int
	for i, s := range sets {
		if !s.stable && s.replicas > 0 {
			out = append(out, i)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if sets[out[a]].replicas != sets[out[b]].replicas {
			return sets[out[a]].replicas > sets[out[b]].replicas
		}
		return sets[out[a]].newer > sets[out[b]].newer
	})
	return out
}

// movesBack reports whether after, the sizes Kubernetes settles on, has k
// more pods on the stable ReplicaSet than before and k fewer elsewhere.
func movesBack(after, before []rsState, stable int, k int32) bool {
	return after[stable].replicas == before[stable].replicas+k
}

func withReplicas(sets []rsState, i int, n int32) []rsState {
	out := append([]rsState(nil), sets...)
	out[i].replicas = n
	return out
}

// settle returns the sizes Kubernetes' Deployment controller gives sets, the
// ReplicaSets of a paused RollingUpdate Deployment of replicas pods with
// maxSurge 0 whose active ReplicaSets carry max-replicas == replicas (see
// scale() in Kubernetes' pkg/controller/deployment/sync.go). A ReplicaSet
// of the current template that has replicas pods counts as saturated
// (Kubernetes also wants them available, which sluice's caller cannot
// judge ahead: assuming it is the cautious answer).
func settle(sets []rsState, replicas int32) []rsState {
	out := append([]rsState(nil), sets...)
	for range 8 { // Kubernetes resyncs after each of its writes
		var active []int
		var sum int32
		for i, s := range out {
			if s.replicas > 0 {
				active = append(active, i)
				sum += s.replicas
			}
		}
		switch {
		case len(active) == 0:
			i := newest(out)
			if i < 0 || out[i].replicas == replicas {
				return out
			}
			out[i].replicas = replicas
			continue
		case len(active) == 1:
			if out[active[0]].replicas == replicas {
				return out
			}
			out[active[0]].replicas = replicas
			continue
		}
		if c := current(out); c >= 0 && out[c].replicas == replicas {
			for _, i := range active {
				if i != c {
					out[i].replicas = 0
				}
			}
			continue
		}
		add := replicas - sum
		if add == 0 {
			return out
		}
		sort.SliceStable(active, func(a, b int) bool {
			x, y := out[active[a]], out[active[b]]
			if x.replicas != y.replicas {
				return x.replicas > y.replicas
			}
			if add > 0 {
				return x.newer > y.newer
			}
			return x.newer < y.newer
		})
		out[active[0]].replicas = max(out[active[0]].replicas+add, 0)
	}
	return out
}

// newest is the ReplicaSet Kubernetes sizes when none is active: the
// current one, or else the newest.
func newest(sets []rsState) int {
	if c := current(sets); c >= 0 {
		return c
	}
	best := -1
	for i, s := range sets {
		if best < 0 || s.newer > sets[best].newer {
			best = i
		}
	}
	return best
}

func current(sets []rsState) int {
	for i, s := range sets {
		if s.current {
			return i
		}
	}
	return -1
}
