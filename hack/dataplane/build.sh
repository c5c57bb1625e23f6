#!/usr/bin/env bash
# Builds sluice-dataplane, the reduced Traefik proxy the data-plane tests
# (test/dataplane) send requests through, from the Go module proxy into a
# cache outside the repository, keyed by the Traefik version pinned in the
# wrapper module beside this script. A second run with the same version does
# nothing.
#
# Prints the directory that holds the binary on its last line of stdout.
#
#   SLUICE_CACHE   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/sluice)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${SLUICE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice}"

traefik_version="$(awk '($1=="require" && $2=="github.com/traefik/traefik/v3") {print $3} $1=="github.com/traefik/traefik/v3" {print $2}' "$here/go.mod")"
gover="$(go env GOVERSION)"
# Bump recipe whenever main.go or the build flags change, so that a
# binary built by an older recipe is not reused.
recipe=3
out="$cache/dataplane/traefik-${traefik_version}_${gover}_r${recipe}"
mkdir -p "$out"

if command -v flock >/dev/null 2>&1; then
	exec 9>"$out/.lock"
	flock 9
fi

if [[ ! -x "$out/sluice-dataplane" ]]; then
	printf '==> building sluice-dataplane (Traefik %s) into %s; the first build takes minutes\n' "$traefik_version" "$out" >&2
	start=$SECONDS
	(cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/sluice-dataplane.tmp.$$" .)
	mv "$out/sluice-dataplane.tmp.$$" "$out/sluice-dataplane"
	printf '==> built sluice-dataplane in %ss\n' "$((SECONDS - start))" >&2
fi
echo "$out"
