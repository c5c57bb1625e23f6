package cluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// flakyBinary fails like a server whose port was taken on its first run and
// serves (sleeps, after touching $1.ready) on later runs. It must not exec
// sleep: the process would change its name, and Process.Alive checks it.
const flakyBinary = `#!/bin/sh
if [ ! -f "$1" ]; then
	touch "$1"
	echo "listen tcp 127.0.0.1:1234: bind: address already in use"
	exit 1
fi
touch "$1.ready"
sleep 60
`

func TestStartServing_portTakenMeanwhile_retriesWithNewPorts(t *testing.T) {
	binDir, stateDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(binDir, "flaky"), []byte(flakyBinary), 0o755); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	c, err := newCluster(Options{Dir: stateDir, BinDir: binDir, Log: &progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	marker := filepath.Join(stateDir, "ran-once")
	var seenPorts [][]int

	err = c.startServing(t.Context(), "flaky", 2, 10*time.Second, func(ports []int) ([]string, condition) {
		seenPorts = append(seenPorts, ports)
		return []string{marker}, func(context.Context) (bool, error) {
			_, err := os.Stat(marker + ".ready")
			return err == nil, err
		}
	})

	if err != nil {
		t.Fatalf("startServing() = %v", err)
	}
	if len(seenPorts) != 2 || len(seenPorts[0]) != 2 {
		t.Fatalf("ports per attempt = %v, want two attempts with two ports each", seenPorts)
	}
	if !strings.Contains(progress.String(), "retrying with new ports") {
		t.Errorf("progress %q does not mention the retry", progress.String())
	}
	procs, err := Processes(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 1 || !procs[0].Alive() {
		t.Errorf("recorded processes = %v, want only the running second attempt", procs)
	}
}
