package cluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Process is a control-plane process recorded in a state directory.
type Process struct {
	// Name is the component: etcd, kube-apiserver, kwok, ...
	Name string
	// PID is its process ID, which is also its process group ID.
	PID int
}

// String returns "name (pid N)".
func (p Process) String() string {
	return fmt.Sprintf("%s (pid %d)", p.Name, p.PID)
}

// Alive reports whether the process still runs. On Linux it also checks
// that the PID still belongs to the named binary, so a recycled PID does not
// count, and that the process is not a zombie waiting to be reaped.
func (p Process) Alive() bool {
	if p.PID <= 0 {
		return false
	}
	if runtime.GOOS == "linux" {
		stat, err := os.ReadFile(filepath.Join("/proc/"+strconv.Itoa(p.PID), "stat"))
		if err != nil {
			return false
		}
		comm, state, ok := parseProcStat(stat)
		return ok && state != 'Z' && state != 'X' && comm == truncateComm(p.Name)
	}
	err := syscall.Kill(p.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// parseProcStat extracts the command name and state from /proc/PID/stat,
// whose second field is "(comm)" and may itself contain spaces and ")".
func parseProcStat(stat []byte) (comm string, state byte, ok bool) {
	open := bytes.IndexByte(stat, '(')
	closing := bytes.LastIndexByte(stat, ')')
	if open < 0 || closing < open || closing+2 >= len(stat) {
		return "", 0, false
	}
	return string(stat[open+1 : closing]), stat[closing+2], true
}

// truncateComm shortens name as the kernel does for a command name.
func truncateComm(name string) string {
	const maxComm = 15
	if len(name) > maxComm {
		return name[:maxComm]
	}
	return name
}

// Processes returns the processes the cluster in dir started, in start
// order, as recorded in dir/pids. The file is removed when the cluster stops
// cleanly, so a missing file means no cluster, not an error. Use
// Process.Alive to tell which still run.
func Processes(dir string) ([]Process, error) {
	data, err := os.ReadFile(layout(dir).pidsFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading pids file: %w", err)
	}
	procs, err := parsePIDs(data)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", layout(dir).pidsFile(), err)
	}
	return procs, nil
}

// parsePIDs parses lines of "PID NAME".
func parsePIDs(data []byte) ([]Process, error) {
	var procs []Process
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		pidText, name, found := strings.Cut(text, " ")
		pid, err := strconv.Atoi(pidText)
		if !found || err != nil || pid <= 0 || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("line %d: want \"PID NAME\", got %q", line, text)
		}
		procs = append(procs, Process{Name: strings.TrimSpace(name), PID: pid})
	}
	return procs, sc.Err()
}

// formatPIDs renders procs as parsePIDs reads them.
func formatPIDs(procs []Process) []byte {
	var b bytes.Buffer
	for _, p := range procs {
		fmt.Fprintf(&b, "%d %s\n", p.PID, p.Name)
	}
	return b.Bytes()
}

// writePIDs replaces the pids file atomically, so a reader never sees a
// partial list.
func writePIDs(l layout, procs []Process) error {
	tmp := l.pidsFile() + ".tmp"
	if err := os.WriteFile(tmp, formatPIDs(procs), 0o600); err != nil {
		return fmt.Errorf("writing pids file: %w", err)
	}
	if err := os.Rename(tmp, l.pidsFile()); err != nil {
		return fmt.Errorf("writing pids file: %w", err)
	}
	return nil
}

// runningProcesses returns the recorded processes of dir that still run.
func runningProcesses(dir string) ([]Process, error) {
	procs, err := Processes(dir)
	if err != nil {
		return nil, err
	}
	var alive []Process
	for _, p := range procs {
		if p.Alive() {
			alive = append(alive, p)
		}
	}
	return alive, nil
}
