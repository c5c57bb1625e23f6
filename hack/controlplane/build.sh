#!/usr/bin/env bash
# Builds the local control plane (kube-apiserver, kube-controller-manager,
# kube-scheduler, etcd, kwok) from the Go module proxy into a cache outside
# the repository, keyed by the versions pinned in the wrapper modules beside
# this script. A second run with the same versions does nothing.
#
# Prints the directory that holds the binaries on its last line of stdout.
#
#   SLUICE_CACHE   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/sluice)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${SLUICE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice}"

k8s_version="$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$here/kubernetes/go.mod")"
etcd_version="$(awk '$1=="require" && $2=="go.etcd.io/etcd/server/v3" {print $3}' "$here/etcd/go.mod")"
kwok_version="$(awk '$1=="require" && $2=="sigs.k8s.io/kwok" {print $3}' "$here/kwok/go.mod")"
gover="$(go env GOVERSION)"
# Bump recipe whenever the way the binaries are built changes (flags, ldflags),
# so that a cache built by an older recipe is not reused.
recipe=2
key="k8s-${k8s_version}_etcd-${etcd_version}_kwok-${kwok_version}_${gover}_r${recipe}"
out="$cache/controlplane/$key"
mkdir -p "$out"

# Serialise concurrent runs (parallel test packages) on the same cache entry;
# the second run waits and then finds everything built.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$out/.lock"
	flock 9
fi

# Stamp the Kubernetes version into the binaries; without it they report
# v0.0.0-master and clients that parse the server version (kubectl, Helm's
# kubeVersion constraints) misbehave.
k8s_minor="${k8s_version#v*.}"
k8s_minor="${k8s_minor%%.*}"
k8s_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	k8s_ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor -X $pkg.gitTreeState=clean"
done

log() { printf '==> %s\n' "$*" >&2; }

# build MODULE_DIR OUTPUT PACKAGE [EXTRA_LDFLAGS]
build() {
	local dir="$1" name="$2" pkg="$3" ldflags="-s -w ${4:-}"
	if [[ -x "$out/$name" ]]; then
		return 0
	fi
	log "building $name ($pkg) into $out; the first build takes minutes"
	local start=$SECONDS
	(cd "$here/$dir" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$out/$name.tmp.$$" "$pkg")
	mv "$out/$name.tmp.$$" "$out/$name"
	log "built $name in $((SECONDS - start))s"
}

build etcd etcd go.etcd.io/etcd/server/v3
build kwok kwok sigs.k8s.io/kwok/cmd/kwok
build kubernetes kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$k8s_ldflags"
build kubernetes kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$k8s_ldflags"
build kubernetes kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$k8s_ldflags"

# kwok's stage definitions (how fake nodes and pods change state) ship in its
# module; copy them beside the binary so the cluster package needs no module
# cache at run time. pod/chaos fails the container of a pod labelled
# pod-container-running-failed.stage.kwok.x-k8s.io=true (exit code 1, or the
# pod's .../exit-code annotation) instead of completing it: the analysis
# tests make a Job fail that way. A file written before pod/chaos was added
# is written again.
if [[ ! -f "$out/kwok-stages.yaml" ]] || ! grep -q 'name: pod-container-running-failed$' "$out/kwok-stages.yaml"; then
	kwok_dir="$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
	for stage in node/fast node/heartbeat-with-lease pod/fast pod/chaos; do
		for f in "$kwok_dir/kustomize/stage/$stage/"*.yaml; do
			[[ "$(basename "$f")" == kustomization.yaml ]] && continue
			echo "---"
			cat "$f"
		done
	done >"$out/kwok-stages.yaml.tmp.$$"
	mv "$out/kwok-stages.yaml.tmp.$$" "$out/kwok-stages.yaml"
fi
echo "$out"
