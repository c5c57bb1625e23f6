package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/test/flux"
)

// childArgs names the environment variable that makes the test binary run
// the demo itself, with these arguments (a JSON list), instead of the
// tests: the test then sees everything the demo's process writes, as a
// user's terminal does.
const childArgs = "SLUICE_DEMO_CHILD_ARGS"

func TestMain(m *testing.M) {
	if raw, ok := os.LookupEnv(childArgs); ok {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		os.Exit(exitCode(args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// noise is what must never appear in the demo's output: controller-runtime's
// warning that no logger was set (with its stack trace), any stack trace,
// klog's lines ("E1201 21:34:42.123456 ...") and the standard logger's
// ("2026/12/01 21:34:42 request: ..."), which the Git server writes for every
// request.
var noise = []*regexp.Regexp{
	regexp.MustCompile(`\[controller-runtime\]`),
	regexp.MustCompile(`log\.SetLogger`),
	regexp.MustCompile(`(?m)^goroutine \d+ \[`),
	regexp.MustCompile(`Detected at:`),
	regexp.MustCompile(`(?m)^panic: `),
	regexp.MustCompile(`\.go:\d+ \+0x[0-9a-f]+`),
	regexp.MustCompile(`(?m)^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ `),
	regexp.MustCompile(`(?m)^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d `),
}

// `make demo`, run without pauses and without a terminal, tells the whole
// GitOps story on the local control plane with real Flux: the pending
// status of step 1 on the merge commit, the reviewer's label moving the
// release to step 2, the revert putting every pod and all traffic back on
// the stable version while Flux still has the merge applied, and the final
// success on the revert commit. And it prints nothing but the story: no
// stack trace, no library's log line.
func TestGitOpsDemo_tellsTheWholeStoryAndNothingElse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	// The demo builds Flux on its first run; a test does not wait that long.
	if _, err := flux.Binaries(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "milestones.jsonl")
	args, _ := json.Marshal([]string{"--pace=0", "--plain", "--dir=" + filepath.Join(dir, "state"), "--record=" + record})
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+string(args))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	t.Logf("the demo took %s", time.Since(began).Round(time.Second))
	if err != nil {
		t.Fatalf("the demo failed: %v\nstderr:\n%s\nstdout (last lines):\n%s", err, stderr.String(), tail(stdout.String(), 40))
	}

	// Then its process wrote nothing on stderr and nothing but the story on
	// stdout.
	if stderr.Len() > 0 {
		t.Errorf("the demo wrote to stderr:\n%s", stderr.String())
	}
	for _, re := range noise {
		if loc := re.FindStringIndex(stdout.String()); loc != nil {
			t.Errorf("the output contains %q (matching %s):\n%s", lineAt(stdout.String(), loc[0]), re, tail(stdout.String(), 20))
		}
	}
	// And it shows the statuses as GitHub does.
	for _, want := range []string{
		"● pending sluice/demo/checkout — step 1/3 paused",
		"● pending sluice/demo/checkout — step 2/3 paused",
		"✗ failure sluice/demo/checkout — ",
		"✓ success sluice/demo/checkout — ",
		"Logs: sluice ",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the output lacks %q", want)
		}
	}

	recorded := readMilestones(t, record)
	merge := recorded.first(t, milestoneApplied, func(milestone) bool { return true }).Commit
	revert := recorded.first(t, milestoneReverted, func(milestone) bool { return true }).Commit

	// The merge commit's statuses: step 1 paused, then step 2 paused, then
	// failure, which comes after the revert was pushed.
	pending1 := recorded.index(t, "status pending step 1/3 paused on the merge", func(m milestone) bool {
		return m.Kind == milestoneStatus && m.Commit == merge && m.State == "pending" && strings.Contains(m.Description, "step 1/3 paused")
	})
	pending2 := recorded.index(t, "status pending step 2/3 paused on the merge", func(m milestone) bool {
		return m.Kind == milestoneStatus && m.Commit == merge && m.State == "pending" && strings.Contains(m.Description, "step 2/3 paused")
	})
	reverted := recorded.index(t, "the revert pushed", func(m milestone) bool { return m.Kind == milestoneReverted })
	failure := recorded.index(t, "status failure on the merge", func(m milestone) bool {
		return m.Kind == milestoneStatus && m.Commit == merge && m.State == "failure"
	})
	if pending1 >= pending2 || pending2 >= reverted || reverted >= failure {
		t.Errorf("merge statuses out of order: step 1 paused #%d, step 2 paused #%d, revert pushed #%d, failure #%d", pending1, pending2, reverted, failure)
	}

	// Step 1 paused with one pod and a quarter of the requests on v2; the
	// label, delivered and answered 200, moved the release to step 2.
	step1 := recorded.first(t, milestonePaused, func(m milestone) bool { return m.Step == 1 })
	label := recorded.index(t, "the label", func(m milestone) bool { return m.Kind == milestoneLabel && m.Step == 1 })
	step2 := recorded.index(t, "step 2 paused", func(m milestone) bool { return m.Kind == milestonePaused && m.Step == 2 })
	if !sameCounts(step1.Pods, map[string]int{stableTag: 3, newTag: 1}) || step1.CanaryWeight != 25 {
		t.Errorf("at step 1: pods %v, canary weight %d; want 3 of v1, 1 of v2, weight 25", step1.Pods, step1.CanaryWeight)
	}
	if recorded[label].Delivery != 200 || label >= step2 {
		t.Errorf("label delivery answered %d at #%d, step 2 paused at #%d: want 200, before step 2", recorded[label].Delivery, label, step2)
	}
	if m := recorded[step2]; !sameCounts(m.Pods, map[string]int{stableTag: 2, newTag: 2}) || m.CanaryWeight != 50 {
		t.Errorf("at step 2: pods %v, canary weight %d; want 2 and 2, weight 50", m.Pods, m.CanaryWeight)
	}

	// Before Flux synced the revert (still applying the merge, suspended),
	// every pod ran v1 and all traffic went to v1.
	stable := recorded.index(t, "pods and traffic on stable", func(m milestone) bool { return m.Kind == milestoneStable })
	if m := recorded[stable]; m.Applied != merge || !m.Suspended || !sameCounts(m.Pods, map[string]int{stableTag: 4}) ||
		m.CanaryWeight != 0 || !slices.Equal(m.StableSelects, []string{stableTag}) {
		t.Errorf("back on stable: %+v; want Flux still at the merge %s and suspended, 4 pods of v1, weight 0, the Service selecting v1", m, merge)
	}
	synced := recorded.index(t, "Flux applied the revert", func(m milestone) bool { return m.Kind == milestoneApplied && m.Commit == revert })
	if stable >= synced {
		t.Errorf("back on stable at #%d, after Flux applied the revert at #%d", stable, synced)
	}

	// At the end the revert commit's status is success, Flux applied it,
	// and everything runs v1.
	done := recorded.first(t, milestoneDone, func(milestone) bool { return true })
	if done.Commit != revert || done.State != "success" || done.Applied != revert || !sameCounts(done.Pods, map[string]int{stableTag: 4}) || done.CanaryWeight != 0 {
		t.Errorf("end: %+v; want success on the revert %s, applied, 4 pods of v1, weight 0", done, revert)
	}
}

// timeline is the milestones the demo recorded, in order.
type timeline []milestone

func readMilestones(t *testing.T, path string) timeline {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out timeline
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m milestone
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("milestone %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// index returns the position of the first milestone that matches, failing
// the test (naming what) when none does.
func (s timeline) index(t *testing.T, what string, match func(milestone) bool) int {
	t.Helper()
	for i, m := range s {
		if match(m) {
			return i
		}
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	t.Fatalf("no milestone: %s; the story:\n%s", what, b)
	return -1
}

// first returns the first milestone of kind that matches.
func (s timeline) first(t *testing.T, kind string, match func(milestone) bool) milestone {
	t.Helper()
	return s[s.index(t, kind, func(m milestone) bool { return m.Kind == kind && match(m) })]
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// lineAt returns the line of s holding offset i.
func lineAt(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		return s[start:]
	}
	return s[start : i+end]
}
