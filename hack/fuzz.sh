#!/usr/bin/env bash
# Runs every fuzz target of the main module for a bounded time each.
# A crasher makes the run fail; Go keeps its input under the package's
# testdata/fuzz/<Target>/ so that `go test` replays it from then on: fix the
# bug and commit that file.
#
#   FUZZTIME   how long each target runs (default 30s; CI uses less)
#   FUZZPKGS   packages to search for targets (default ./...)
#
# Go 1.26's fuzzing coordinator can fail a target at the end of a duration
# -fuzztime with a bare "context deadline exceeded" and no input
# (golang/go#75804, fixed in Go 1.27): the deadline of -fuzztime escapes the
# check meant to treat it as a normal stop. A failure that wrote no new input
# under testdata/fuzz/<Target>/ and printed that line is run again, up to
# twice; any other failure, or one that keeps coming, fails the run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fuzztime="${FUZZTIME:-30s}"
pkgs="${FUZZPKGS:-./...}"

# The packages whose test files declare a fuzz target.
mapfile -t dirs < <(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
if [[ ${#dirs[@]} -eq 0 ]]; then
	echo "make fuzz: no fuzz targets found" >&2
	exit 1
fi

# corpus lists the inputs Go has kept for a target.
corpus() { ls "$1/testdata/fuzz/$2" 2>/dev/null | sort || true; }

# fuzz_one runs one target; on the coordinator's deadline race (no new input,
# the bare deadline line) it runs it again.
fuzz_one() {
	local pkg="$1" target="$2" attempt before out
	for attempt in 1 2 3; do
		before="$(corpus "$pkg" "$target")"
		out="$(mktemp)"
		if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$out"; then
			rm -f "$out"
			return 0
		fi
		if [[ "$(corpus "$pkg" "$target")" != "$before" ]] || ! grep -qx '[[:space:]]*context deadline exceeded' "$out"; then
			rm -f "$out"
			return 1
		fi
		rm -f "$out"
		printf '==> %s %s: the fuzzing coordinator stopped on its own deadline without an input (golang/go#75804); attempt %d of 3\n' "$pkg" "$target" "$attempt"
	done
	return 1
}

failed=()
count=0
for dir in "${dirs[@]}"; do
	pkg="./${dir#./}"
	if [[ "$pkgs" != "./..." ]] && ! grep -qw -- "$pkg" <<<"$pkgs"; then
		continue
	fi
	mapfile -t targets < <(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
	for target in "${targets[@]}"; do
		count=$((count + 1))
		printf '==> fuzzing %s %s for %s\n' "$pkg" "$target" "$fuzztime"
		if ! fuzz_one "$pkg" "$target"; then
			failed+=("$pkg $target")
		fi
	done
done

echo "==> fuzzed $count targets for $fuzztime each"
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "make fuzz: these targets failed (a failing input is kept under the package's testdata/fuzz/):" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
