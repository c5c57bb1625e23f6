// Package flux runs Flux's source-controller and kustomize-controller, the
// real ones, as local processes against a local control plane
// (test/cluster), so that the GitOps tests exercise the loop sluice's users
// run: a commit pushed to a Git server, a GitRepository that fetches it and
// a Kustomization that applies it with server-side apply, labels what it
// applied with kustomize.toolkit.fluxcd.io/name and /namespace, records
// status.lastAppliedRevision, prunes what left Git and corrects drift on
// every interval.
//
// The binaries and Flux's CRDs are built from the Go module proxy by
// hack/flux/build.sh (`make flux`) into a cache outside the repository.
// Start never builds them: a cache without them fails with the command that
// builds them. Build runs that command (the demo does, on its first run).
//
// Start installs the CRDs, starts source-controller (its artifact server on
// a free loopback port, advertised at that address, its storage in the
// state directory) and kustomize-controller, each in its own process group
// with its output in a log file of the state directory, and waits until
// both are ready. Stop ends exactly the processes Start began. On Linux a
// test binary that dies takes them with it (a parent-death signal).
//
//	f, err := flux.Start(ctx, flux.Options{Kubeconfig: c.KubeconfigPath()})
//	...
//	defer f.Stop()
//	f.CreateGitRepository(ctx, flux.GitRepository{Namespace: ns, Name: "shop", URL: repo.URL(), Branch: "main"})
//	f.CreateKustomization(ctx, flux.Kustomization{Namespace: ns, Name: "apps", Source: "shop", Path: "./apps"})
//	f.WaitApplied(ctx, ns, "apps", sha)
package flux
