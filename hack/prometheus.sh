#!/usr/bin/env bash
# Installs Prometheus for the analysis tests (controllers/analysis), from
# Debian's own package. Does nothing when `prometheus` is already on PATH.
# The tests start their own server on a loopback port with a temporary
# configuration and data directory; the package's service is not used.
# Installing needs root: it uses sudo when not run as root.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1; then
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "hack/prometheus.sh: prometheus is not on PATH and apt-get is missing; install Prometheus (2.x or later) yourself and put 'prometheus' on PATH" >&2
	exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "hack/prometheus.sh: installing prometheus needs root, and sudo is missing" >&2
		exit 1
	fi
	sudo=(sudo)
fi

echo "hack/prometheus.sh: installing prometheus with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
# One apt-get at a time: make -j runs hack/chromium.sh and hack/prometheus.sh
# side by side, and apt-get fails at once on a lock another one holds.
exec 9>"${TMPDIR:-/tmp}/sluice-apt.lock"
flock 9
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends prometheus >/dev/null
command -v prometheus >/dev/null
