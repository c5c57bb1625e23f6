#!/usr/bin/env bash
# Builds Gitea, the Git host the Gitea/Forgejo tests (test/gitea) run against,
# from the Go module proxy into a cache outside the repository, keyed by the
# Gitea version pinned in the wrapper module beside this script. A second run
# with the same version does nothing.
#
# Gitea built this way (without the bindata tag) reads its options (locales,
# labels, licences, gitignores) from STATIC_ROOT_PATH at run time; they are
# copied from the module beside the binary, so the tests need no module cache.
#
# Prints the directory that holds the binary and its options on its last line
# of stdout. With --check it builds nothing: it prints the directory and exits
# 0 when the build is there, 3 when it is not (test/gitea uses this to fail
# with the fix instead of building for minutes inside a test).
#
#   SLUICE_CACHE   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/sluice)
set -euo pipefail

check=false
if [[ "${1:-}" == "--check" ]]; then
	check=true
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${SLUICE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice}"

gitea_version="$(awk '$1=="require" && $2=="code.gitea.io/gitea" {print $3}' "$here/go.mod")"
gover="$(go env GOVERSION)"
# Bump recipe whenever the way the binary is built changes (tags, ldflags, the
# files copied beside it), so that a cache built by an older recipe is not
# reused.
recipe=1
tags="sqlite sqlite_unlock_notify"
out="$cache/gitea/gitea-${gitea_version}_${gover}_r${recipe}"

if $check; then
	echo "$out"
	[[ -x "$out/gitea" && -d "$out/static/options/locale" ]] || exit 3
	exit 0
fi
mkdir -p "$out"

# Serialise concurrent runs (parallel test packages) on the same cache entry;
# the second run waits and then finds everything built.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$out/.lock"
	flock 9
fi

log() { printf '==> %s\n' "$*" >&2; }

if [[ ! -x "$out/gitea" ]]; then
	log "building gitea (code.gitea.io/gitea $gitea_version) into $out; the first build takes minutes"
	start=$SECONDS
	# cgo: the sqlite tag links the C SQLite driver. main.Version makes the
	# server report its real version, which the Go SDK checks per feature.
	(cd "$here" && CGO_ENABLED=1 GOFLAGS=-mod=mod go build -trimpath -tags "$tags" \
		-ldflags "-s -w -X 'main.Version=${gitea_version#v}' -X 'main.Tags=$tags'" \
		-o "$out/gitea.tmp.$$" code.gitea.io/gitea)
	mv "$out/gitea.tmp.$$" "$out/gitea"
	log "built gitea in $((SECONDS - start))s"
fi

# The options Gitea loads from STATIC_ROOT_PATH (locale files first: without
# them it refuses to start), copied out of the module.
if [[ ! -d "$out/static" ]]; then
	gitea_dir="$(cd "$here" && go list -m -f '{{.Dir}}' code.gitea.io/gitea)"
	rm -rf "$out/static.tmp.$$"
	mkdir -p "$out/static.tmp.$$"
	cp -R "$gitea_dir/options" "$out/static.tmp.$$/options"
	chmod -R u+w "$out/static.tmp.$$"
	mv "$out/static.tmp.$$" "$out/static"
fi
echo "$out"
