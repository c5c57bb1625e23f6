#!/usr/bin/env bash
# Installs Chromium for the browser tests of the web view (test/web), from
# Debian's own package. Does nothing when `chromium` is already on PATH.
# Installing needs root: it uses sudo when not run as root.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "hack/chromium.sh: chromium is not on PATH and apt-get is missing; install Chromium yourself and put 'chromium' on PATH" >&2
	exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "hack/chromium.sh: installing chromium needs root, and sudo is missing" >&2
		exit 1
	fi
	sudo=(sudo)
fi

echo "hack/chromium.sh: installing chromium with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
# One apt-get at a time: make -j runs hack/chromium.sh and hack/prometheus.sh
# side by side, and apt-get fails at once on a lock another one holds.
exec 9>"${TMPDIR:-/tmp}/sluice-apt.lock"
flock 9
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null
