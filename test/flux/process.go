package flux

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a controller may take to exit after SIGTERM before
// it gets SIGKILL.
const stopGrace = 10 * time.Second

// Limits of the log tail quoted in errors.
const (
	tailBytes = 8 << 10
	tailLines = 30
)

// process is one running Flux controller.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once the process has exited and been reaped
	err     error         // how it exited; read only after done is closed
}

// startProcess runs bin with args and env (added to this process's
// environment) in dir, its output appended to logPath, in its own process
// group so that a terminal's Ctrl-C does not reach it and stop can signal
// the whole group.
func startProcess(name, bin string, args, env []string, dir, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the log of %s: %w", name, err)
	}
	defer func() { _ = logFile.Close() }() // the child holds its own descriptor
	fmt.Fprintf(logFile, "==> %s %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))

	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid returns the process ID, which is also its process group's ID.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes how the process ended, with the end of its log. Call
// it only after done is closed.
func (p *process) exitError() error {
	err := p.err
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("%s exited: %w\n%s", p.name, err, p.logTail())
}

// stop sends SIGTERM to the process group and, if the process has not
// exited after grace, SIGKILL. It returns once the process is reaped.
func (p *process) stop(grace time.Duration) error {
	if p.exited() {
		return nil
	}
	if err := signalGroup(p.pid(), syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping %s (pid %d): %w", p.name, p.pid(), err)
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	if err := signalGroup(p.pid(), syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing %s (pid %d): %w", p.name, p.pid(), err)
	}
	<-p.done
	return nil
}

// signalGroup sends sig to the process group led by pid. A group that is
// already gone is not an error.
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// logTail returns the last lines of the process's log, each prefixed with
// "  | ", or a note saying why it cannot.
func (p *process) logTail() string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return fmt.Sprintf("  (no log: %v)", err)
	}
	defer func() { _ = f.Close() }()
	if info, err := f.Stat(); err == nil && info.Size() > tailBytes {
		if _, err := f.Seek(-tailBytes, io.SeekEnd); err != nil {
			return fmt.Sprintf("  (reading %s: %v)", p.logPath, err)
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("  (reading %s: %v)", p.logPath, err)
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return "  | " + strings.Join(lines, "\n  | ") + fmt.Sprintf("\n  (full log: %s)", p.logPath)
}
