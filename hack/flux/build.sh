#!/usr/bin/env bash
# Builds Flux's source-controller and kustomize-controller, which the GitOps
# tests run as local processes against the local control plane (test/flux),
# from the Go module proxy into a cache outside the repository, keyed by the
# versions pinned in the wrapper module beside this script. Copies the Flux
# CRDs those controllers serve out of the same modules beside the binaries.
# A second run with the same versions does nothing.
#
# Prints the directory that holds the binaries on its last line of stdout.
# With --check it builds nothing: it prints the directory and exits 3 when
# the binaries or CRDs are not there yet (the test harness uses it, so that
# a test never starts a build of many minutes under go test's timeout).
#
#   SLUICE_CACHE   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/sluice)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${SLUICE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice}"

sc_version="$(awk '$1=="github.com/fluxcd/source-controller" {print $2}' "$here/go.mod" | head -n1)"
kc_version="$(awk '$1=="github.com/fluxcd/kustomize-controller" {print $2}' "$here/go.mod" | head -n1)"
gover="$(go env GOVERSION)"
# Bump recipe whenever the way the binaries are built changes (flags,
# replaces, the CRDs copied), so that a cache built by an older recipe is not
# reused.
recipe=1
key="sc-${sc_version}_kc-${kc_version}_${gover}_r${recipe}"
out="$cache/flux/$key"
mkdir -p "$out"

# Serialise concurrent runs (parallel test packages) on the same cache entry;
# the second run waits and then finds everything built.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$out/.lock"
	flock 9
fi

if [[ "${1:-}" == "--check" ]]; then
	echo "$out"
	for f in source-controller kustomize-controller crds/.complete; do
		[[ -e "$out/$f" ]] || exit 3
	done
	exit 0
fi

log() { printf '==> %s\n' "$*" >&2; }

# build OUTPUT PACKAGE
build() {
	local name="$1" pkg="$2"
	if [[ -x "$out/$name" ]]; then
		return 0
	fi
	log "building $name ($pkg) into $out; the first build takes minutes"
	local start=$SECONDS
	(cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/$name.tmp.$$" "$pkg")
	mv "$out/$name.tmp.$$" "$out/$name"
	log "built $name in $((SECONDS - start))s"
}

build source-controller github.com/fluxcd/source-controller
build kustomize-controller github.com/fluxcd/kustomize-controller

# The CRDs ship in the controllers' modules (config/crd/bases). Both
# controllers' informers need every source kind source-controller serves
# (kustomize-controller watches GitRepository, OCIRepository, Bucket and
# ExternalArtifact), so all of them are installed; copy them beside the
# binaries so the test harness needs no module cache at run time.
if [[ ! -f "$out/crds/.complete" ]]; then
	rm -rf "$out/crds.tmp.$$"
	mkdir -p "$out/crds.tmp.$$"
	for mod in github.com/fluxcd/source-controller github.com/fluxcd/kustomize-controller; do
		dir="$(cd "$here" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' "$mod")"
		cp "$dir"/config/crd/bases/*.yaml "$out/crds.tmp.$$/"
	done
	chmod 0644 "$out/crds.tmp.$$"/*.yaml
	touch "$out/crds.tmp.$$/.complete"
	rm -rf "$out/crds"
	mv "$out/crds.tmp.$$" "$out/crds"
fi
echo "$out"
