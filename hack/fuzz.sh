#!/usr/bin/env bash
# Runs every fuzz target of the main module for a bounded time each.
# A crasher makes the run fail; Go keeps its input under the package's
# testdata/fuzz/<Target>/ so that `go test` replays it from then on: fix the
# bug and commit that file.
#
#   FUZZTIME   how long each target runs (default 30s; CI uses less)
#   FUZZPKGS   packages to search for targets (default ./...)
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
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"; then
			failed+=("$pkg $target")
		fi
	done
done

echo "==> fuzzed $count targets for $fuzztime each"
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "make fuzz: these targets found a failing input (kept under the package's testdata/fuzz/):" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
