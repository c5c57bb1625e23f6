// Command sluice-cluster runs the local Kubernetes control plane of package
// test/cluster (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok with fake nodes) for the demo, benchmarks and
// trying things by hand.
//
// Usage:
//
//	sluice-cluster build
//	sluice-cluster up [--dir DIR] [--nodes N] [--detach] [--timeout D]
//	sluice-cluster down [--dir DIR]
//
// up starts a cluster and prints an `export KUBECONFIG=...` line. It stays in
// the foreground supervising the processes until SIGINT or SIGTERM, or with
// --detach runs the supervisor in the background and returns once the
// cluster is ready. down stops the cluster in DIR. DIR defaults to
// $SLUICE_CACHE/cluster, with SLUICE_CACHE defaulting to
// ${XDG_CACHE_HOME:-$HOME/.cache}/sluice.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// usage is printed for -h and for an unknown command.
const usage = `usage:
  sluice-cluster build                 build or find the control-plane binaries
  sluice-cluster up [flags]            start a cluster and supervise it
  sluice-cluster down [--dir DIR]      stop the cluster in DIR

Run "sluice-cluster up -h" for up's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command in args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "build":
		err = buildCommand(args[1:], stdout, stderr)
	case "up":
		err = upCommand(args[1:], stdout, stderr)
	case "down":
		err = downCommand(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "sluice-cluster: unknown command %q\n%s", args[0], usage)
		return 2
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errInterrupted):
		return 130
	case err != nil:
		fmt.Fprintf(stderr, "sluice-cluster %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// errInterrupted reports a command ended by SIGINT or SIGTERM.
var errInterrupted = errors.New("interrupted")

// defaultDir returns the default state directory, beside the binary cache
// that hack/controlplane/build.sh uses and outside the repository.
func defaultDir() string {
	if cache := os.Getenv("SLUICE_CACHE"); cache != "" {
		return filepath.Join(cache, "cluster")
	}
	if cache, err := os.UserCacheDir(); err == nil {
		return filepath.Join(cache, "sluice", "cluster")
	}
	return filepath.Join(os.TempDir(), "sluice", "cluster")
}

// newFlagSet returns a flag set for a command that reports errors to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("sluice-cluster "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}
