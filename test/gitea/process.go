package gitea

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Limits of the log tail quoted in errors.
const (
	tailBytes = 8 << 10
	tailLines = 30
)

// stopGrace is how long Gitea gets to shut down after SIGTERM before it is
// killed.
const stopGrace = 10 * time.Second

// process is the running "gitea web".
type process struct {
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once the process has exited and been reaped
	err     error         // how it exited; read only after done is closed
}

// run runs a gitea command (named name in errors) to completion and returns
// its output; a failure quotes the output.
func run(ctx context.Context, name, bin string, args []string, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, environ(dir)
	cmd.SysProcAttr = sysProcAttr()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("gitea %s: %w\n%s", name, err, formatTail(out, tailLines))
	}
	return string(out), nil
}

// start runs bin with args in dir, its output written to logPath, in its own
// process group (so that a terminal's Ctrl-C does not reach it and stop can
// signal the whole group), killed by the kernel if the thread that started it
// dies.
func start(bin string, args []string, dir, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the log of gitea: %w", err)
	}
	defer func() { _ = logFile.Close() }() // the child holds its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, environ(dir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting gitea: %w", err)
	}
	p := &process{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// environ is Gitea's environment: the caller's, with HOME inside the work
// path so that the git commands Gitea runs read no user configuration.
func environ(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "GITEA_") || strings.HasPrefix(kv, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+dir, "GITEA_WORK_DIR="+dir)
}

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
	return fmt.Errorf("gitea web exited unexpectedly: %w\n%s", err, p.logTail())
}

// stop sends SIGTERM to the process group and, if the process has not
// exited after grace, SIGKILL. It returns once the process is reaped.
func (p *process) stop(grace time.Duration) error {
	if p.exited() {
		return nil
	}
	pid := p.cmd.Process.Pid
	if err := signalGroup(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping gitea (pid %d): %w", pid, err)
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	if err := signalGroup(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing gitea (pid %d): %w", pid, err)
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

// logTail returns the last lines of the process's log, indented, for errors.
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
	return formatTail(data, tailLines) + fmt.Sprintf("\n  (full log: %s)", p.logPath)
}

// formatTail returns the last n lines of data, each prefixed with "  | ".
func formatTail(data []byte, n int) string {
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  | " + strings.Join(lines, "\n  | ")
}
