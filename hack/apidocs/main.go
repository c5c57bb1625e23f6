// Command apidocs writes the API reference (docs/api-reference.md) from the
// Go types of sluice's APIs: their doc comments, JSON field names, types,
// kubebuilder validation markers and the constants of enum types. `make
// generate` runs it, so the reference never drifts from the types.
//
// Usage:
//
//	go run ./hack/apidocs OUTPUT PACKAGE_DIR...
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: apidocs OUTPUT PACKAGE_DIR...")
		os.Exit(2)
	}
	var pkgs []*apiPackage
	for _, dir := range os.Args[2:] {
		p, err := load(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "apidocs: %s: %v\n", dir, err)
			os.Exit(1)
		}
		pkgs = append(pkgs, p)
	}
	var b strings.Builder
	render(&b, pkgs)
	if err := os.WriteFile(os.Args[1], []byte(b.String()), 0o644); err != nil { //nolint:gosec // documentation, world-readable
		fmt.Fprintf(os.Stderr, "apidocs: %v\n", err)
		os.Exit(1)
	}
}
