package flux

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
)

// StartForTests starts Flux for the tests of one package (from its
// TestMain): its state and logs in a new temporary directory named by
// prefix, progress on stderr under go test -v. Finish stops it.
func StartForTests(ctx context.Context, kubeconfig, prefix string) (*Flux, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	var progress io.Writer
	if testing.Verbose() {
		progress = os.Stderr
	}
	return Start(ctx, Options{Kubeconfig: kubeconfig, Dir: dir, Log: progress})
}

// Finish stops f once the tests ran with exit code code, and returns it: the
// directory and the controllers' logs are kept, and named on stderr, when a
// test failed, and removed otherwise. A nil f does nothing.
func (f *Flux) Finish(code int) int {
	if f == nil {
		return code
	}
	if err := f.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "Flux's logs are kept in %s\n", f.Dir())
		return code
	}
	if err := os.RemoveAll(f.Dir()); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return code
}
