package cluster

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFormatTail(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{name: "fewer lines than asked", in: "a\nb\n", n: 5, want: "  | a\n  | b"},
		{name: "keeps the last lines", in: "a\nb\nc\n", n: 2, want: "  | b\n  | c"},
		{name: "no trailing newline", in: "a", n: 1, want: "  | a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatTail([]byte(tt.in), tt.n); got != tt.want {
				t.Errorf("formatTail() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProcessStop_killsAProcessGroupThatIgnoresSIGTERM(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "stubborn.log")
	// The shell ignores SIGTERM, and so does the sleep it starts in the
	// background; only SIGKILL to the whole process group ends both.
	p, err := startProcess("stubborn", sh, []string{"-c", `trap "" TERM; sleep 60 & echo "child $!"; wait`}, dir, logPath)
	if err != nil {
		t.Fatal(err)
	}
	child := Process{Name: "sleep", PID: childPID(t, logPath)}

	began := time.Now()
	if err := p.stop(200 * time.Millisecond); err != nil {
		t.Fatalf("stop() = %v", err)
	}
	if !p.exited() {
		t.Fatal("stop() returned before the process exited")
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("stop() took %s, want about the grace period", took)
	}
	// SIGKILL went to the whole group, but the kernel tears a process down
	// only once it is scheduled: on a busy machine the child may take a
	// moment to go.
	for deadline := time.Now().Add(10 * time.Second); child.Alive(); {
		if time.Now().After(deadline) {
			t.Errorf("%v, in the stopped process's group, still runs 10s after stop()", child)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.stop(time.Second); err != nil {
		t.Errorf("second stop() = %v, want nil", err)
	}
}

// childPID polls the log at path for the "child PID" line the test's shell
// prints and returns the PID.
func childPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, line := range strings.Split(fileTail(path), "\n") {
			if _, after, ok := strings.Cut(line, "| child "); ok {
				pid, err := strconv.Atoi(strings.TrimSpace(after))
				if err != nil {
					t.Fatalf("parsing %q: %v", line, err)
				}
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("log %s never showed the child's PID", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProcessExitError_quotesTheLog(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	p, err := startProcess("failing", sh, []string{"-c", "echo bind: address already in use; exit 3"}, dir, filepath.Join(dir, "failing.log"))
	if err != nil {
		t.Fatal(err)
	}
	<-p.done
	msg := p.exitError().Error()
	for _, want := range []string{"failing exited unexpectedly", "exit status 3", "address already in use"} {
		if !strings.Contains(msg, want) {
			t.Errorf("exitError() = %q, want it to contain %q", msg, want)
		}
	}
	if !addressInUse(p.logTail()) {
		t.Error("addressInUse() = false for a log reporting a bind failure")
	}
}
