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
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null
