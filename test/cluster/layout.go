package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// layout is a cluster state directory and names everything inside it.
type layout string

// dir returns the state directory itself.
func (l layout) dir() string { return string(l) }

// pkiDir holds the CA, certificates and keys.
func (l layout) pkiDir() string { return filepath.Join(l.dir(), "pki") }

// pki returns the path of a file in pkiDir.
func (l layout) pki(file string) string { return filepath.Join(l.pkiDir(), file) }

// kubeconfig is the admin kubeconfig, the one users and tests load.
func (l layout) kubeconfig() string { return filepath.Join(l.dir(), "kubeconfig") }

// kubeconfigDir holds one kubeconfig per control-plane client.
func (l layout) kubeconfigDir() string { return filepath.Join(l.dir(), "kubeconfigs") }

// componentKubeconfig is the kubeconfig of the client with the identity name.
func (l layout) componentKubeconfig(name string) string {
	return filepath.Join(l.kubeconfigDir(), name+".kubeconfig")
}

// schedulerConfig is kube-scheduler's configuration file.
func (l layout) schedulerConfig() string {
	return filepath.Join(l.kubeconfigDir(), "kube-scheduler.yaml")
}

// etcdDir is etcd's data directory.
func (l layout) etcdDir() string { return filepath.Join(l.dir(), "etcd") }

// logDir holds one log file per process.
func (l layout) logDir() string { return filepath.Join(l.dir(), "logs") }

// logFile is where the process name writes its stdout and stderr.
func (l layout) logFile(name string) string { return filepath.Join(l.logDir(), name+".log") }

// pidsFile records the running processes, for Processes.
func (l layout) pidsFile() string { return filepath.Join(l.dir(), "pids") }

// reset removes the state a previous cluster left in the directory, so every
// start begins with fresh credentials and an empty etcd, and recreates the
// folders. It removes only what a cluster writes: the directory may hold
// other files (a supervisor's log, for one).
func (l layout) reset() error {
	var errs []error
	for _, p := range []string{l.pkiDir(), l.kubeconfig(), l.kubeconfigDir(), l.etcdDir(), l.logDir(), l.pidsFile()} {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
		}
	}
	for _, d := range []string{l.pkiDir(), l.kubeconfigDir(), l.logDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			errs = append(errs, fmt.Errorf("creating %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}
