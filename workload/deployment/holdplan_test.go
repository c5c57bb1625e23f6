package deployment

import (
	"fmt"
	"math/rand"
	"testing"
)

// sets builds ReplicaSets oldest first: the stable one, then the others
// (the last is the current template's).
func sets(stable int32, others ...int32) []rsState {
	out := []rsState{{name: "stable", replicas: stable, ready: stable, stable: true, newer: 0}}
	for i, n := range others {
		out = append(out, rsState{name: fmt.Sprintf("rs%d", i+1), replicas: n, ready: n, newer: i + 1, current: i == len(others)-1})
	}
	return out
}

func TestSettle_asKubernetesScalesAPausedDeployment(t *testing.T) {
	tests := []struct {
		name string
		in   []rsState
		want []int32
	}{
		{"lowered new: the larger stable gets the difference", sets(5, 3), []int32{7, 3}},
		{"lowered new to a tie: the newer one gets it back", sets(1, 1), []int32{1, 2}},
		{"raised stable: the larger new loses the difference", sets(4, 8), []int32{4, 6}},
		{"raised stable to a tie: the older (stable) loses it", sets(2, 2), []int32{1, 2}},
		{"one active ReplicaSet is sized to replicas", sets(0, 8), []int32{0, 10}},
		{"the stable one alone is sized to replicas", sets(6, 0), []int32{10, 0}},
		{"a saturated new ReplicaSet scales the others to 0", sets(2, 10), []int32{0, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replicas := int32(10)
			if tt.name == "lowered new to a tie: the newer one gets it back" || tt.name == "raised stable to a tie: the older (stable) loses it" {
				replicas = 3
			}
			got := settle(tt.in, replicas)
			for i, w := range tt.want {
				if got[i].replicas != w {
					t.Fatalf("settled %v, want %v", sizes(got), tt.want)
				}
			}
		})
	}
}

// unreadyNew marks n pods of the current template's ReplicaSet not ready.
func unreadyNew(s []rsState, n int32) []rsState {
	s[len(s)-1].ready -= n
	return s
}

func sizes(s []rsState) []int32 {
	out := make([]int32, len(s))
	for i := range s {
		out[i] = s[i].replicas
	}
	return out
}

func TestPlanHold(t *testing.T) {
	tests := []struct {
		name     string
		in       []rsState
		replicas int32
		budget   int32
		want     []rsWrite
		done     bool
	}{
		{"balanced: lower the new one, the stable one gets them", sets(5, 5), 10, 2, []rsWrite{{"rs1", 3}}, false},
		{"new larger by more than the budget: raise the stable one", sets(2, 8), 10, 2, []rsWrite{{"stable", 4}}, false},
		{"new larger by one with a budget of one: raise the stable one", sets(1, 3), 4, 1, []rsWrite{{"stable", 2}}, false},
		{"new larger by the budget: no single write goes the right way, so a pair", sets(1, 2), 3, 1,
			[]rsWrite{{"rs1", 1}, {"stable", 2}}, false},
		{"no stable pod left: a pair", sets(0, 10), 10, 2, []rsWrite{{"rs1", 8}, {"stable", 2}}, false},
		{"the last pods: the new one to 0", sets(8, 2), 10, 2, []rsWrite{{"rs1", 0}}, false},
		{"three revisions against the tie rules: a pair on the largest", sets(3, 3, 4), 10, 2,
			[]rsWrite{{"rs2", 2}, {"stable", 5}}, false},
		{"no budget: wait", sets(5, 5), 10, 0, nil, false},
		{"no budget, new pods that cannot run: they go back, costing nothing", unreadyNew(sets(5, 5), 2), 10, 0, []rsWrite{{"rs1", 3}}, false},
		{"a budget and unready new pods: both", unreadyNew(sets(5, 5), 2), 10, 1, []rsWrite{{"rs1", 2}}, false},
		{"every pod on stable and ready: done", sets(10, 0), 10, 2, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := planHold(tt.in, tt.replicas, tt.budget)
			if got.done != tt.done || fmt.Sprint(got.writes) != fmt.Sprint(tt.want) {
				t.Fatalf("plan %+v, want writes %v done %v", got, tt.want, tt.done)
			}
		})
	}
}

// TestPlanHold_alwaysConverges: from any split of a Deployment's pods
// between its stable ReplicaSet and up to two others, applying the plan and
// Kubernetes' scaling, look after look, moves every pod back to the stable
// ReplicaSet, never more than the budget per look and never losing a pod.
func TestPlanHold_alwaysConverges(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	for trial := range 2000 {
		replicas := int32(1 + rnd.Intn(12))
		budget := int32(1 + rnd.Intn(3))
		n := 1 + rnd.Intn(2)
		others := make([]int32, n)
		left := replicas
		for i := range others {
			others[i] = int32(rnd.Intn(int(left) + 1))
			left -= others[i]
		}
		s := sets(left, others...)
		for look := 0; ; look++ {
			if look > int(replicas)*3+5 {
				t.Fatalf("trial %d (replicas %d budget %d): not converged: %v", trial, replicas, budget, sizes(s))
			}
			p := planHold(s, replicas, budget)
			if p.done {
				break
			}
			before := s[0].replicas
			for _, w := range p.writes {
				for i := range s {
					if s[i].name == w.name {
						s[i].replicas, s[i].ready = w.replicas, w.replicas
					}
				}
			}
			s = settle(s, replicas)
			var sum int32
			for i := range s {
				s[i].ready = s[i].replicas
				sum += s[i].replicas
			}
			moved := s[0].replicas - before
			if sum != replicas || moved < 1 || moved > budget {
				t.Fatalf("trial %d (replicas %d budget %d): a look moved %d pods, total %d: %v", trial, replicas, budget, moved, sum, sizes(s))
			}
		}
	}
}
