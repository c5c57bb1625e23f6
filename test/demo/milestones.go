package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// Kinds of milestone the GitOps story records.
const (
	// milestoneStatus: a commit status appeared on GitHub.
	milestoneStatus = "status"
	// milestoneApplied: Flux applied a commit.
	milestoneApplied = "applied"
	// milestonePaused: the release paused at a step.
	milestonePaused = "paused"
	// milestoneLabel: a label was added on the pull request and delivered.
	milestoneLabel = "label"
	// milestoneReverted: the revert was pushed, Flux suspended.
	milestoneReverted = "reverted"
	// milestoneStable: every pod and all traffic were back on the stable
	// version, with Applied the commit Flux had applied at that moment.
	milestoneStable = "stable"
	// milestoneDone: the story's end state.
	milestoneDone = "done"
)

// milestone is one thing the story saw happen, as its test reads it.
type milestone struct {
	// Kind is one of the milestone* constants.
	Kind string `json:"kind"`
	// At is the time since the story began.
	At time.Duration `json:"at"`
	// Commit is the commit concerned (status, applied, reverted, done: the
	// revert).
	Commit string `json:"commit,omitempty"`
	// State and Description are the commit status's (status, done).
	State       string `json:"state,omitempty"`
	Description string `json:"description,omitempty"`
	// Step is the Rollout's current step (paused, label).
	Step int32 `json:"step,omitempty"`
	// Pods counts the live pods per image tag, all ready (paused, stable,
	// done).
	Pods map[string]int `json:"pods,omitempty"`
	// CanaryWeight is the canary Ingress's weight, 0 without one (paused,
	// stable, done).
	CanaryWeight int `json:"canaryWeight"`
	// StableSelects are the image tags of the pods the stable Service
	// selects (paused, stable, done).
	StableSelects []string `json:"stableSelects,omitempty"`
	// Applied is the commit Flux had applied (stable, done), and
	// Suspended whether its Kustomization was suspended.
	Applied   string `json:"applied,omitempty"`
	Suspended bool   `json:"suspended,omitempty"`
	// Delivery is the receiver's answer to a webhook delivery (label).
	Delivery int `json:"delivery,omitempty"`
}

// milestones records the story's milestones, and writes each to a file as
// a JSON line when a path is set.
type milestones struct {
	mu    sync.Mutex
	start time.Time
	file  *os.File
	all   []milestone
}

// newMilestones returns a record written to path ("" keeps it in memory).
func newMilestones(path string, start time.Time) (*milestones, error) {
	m := &milestones{start: start}
	if path == "" {
		return m, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the milestones file: %w", err)
	}
	m.file = f
	return m, nil
}

// add records m.
func (ms *milestones) add(m milestone) error {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	m.At = time.Since(ms.start).Round(time.Millisecond)
	ms.all = append(ms.all, m)
	if ms.file == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = ms.file.Write(append(b, '\n'))
	return err
}

// close closes the file.
func (ms *milestones) close() error {
	if ms.file == nil {
		return nil
	}
	return ms.file.Close()
}
