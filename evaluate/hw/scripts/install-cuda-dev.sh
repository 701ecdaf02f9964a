#!/bin/sh
# Installs what placer's `cuda` build tag compiles and links against:
# cuda.h, cublas_v2.h, libcuda and libcublas. On Debian they come with
# nvidia-cuda-dev from the non-free component, which this script enables
# in a separate sources file (the system's own sources are not touched)
# when no configured source offers the package. It installs no kernel
# driver (--no-install-recommends): the headers and the user-space
# libraries are enough to build; running the binary needs a GPU host.
# Used by `make cuda`; a no-op when cuda.h and cublas_v2.h are present.
set -eu

for d in /usr/include /usr/local/cuda/include; do
	if [ -f "$d/cuda.h" ] && [ -f "$d/cublas_v2.h" ]; then
		exit 0
	fi
done

if ! command -v apt-get >/dev/null 2>&1; then
	echo "cuda.h not found and no apt-get: install the CUDA toolkit (headers, libcuda, libcublas) under /usr/local/cuda" >&2
	exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

candidate() {
	apt-cache policy nvidia-cuda-dev 2>/dev/null | grep -q 'Candidate: [0-9]'
}

if ! candidate; then
	$SUDO apt-get update
fi
if ! candidate; then
	. /etc/os-release
	if [ "${ID:-}" != "debian" ]; then
		echo "nvidia-cuda-dev is not available from the configured apt sources (Ubuntu: enable multiverse); install the CUDA toolkit" >&2
		exit 1
	fi
	codename="${VERSION_CODENAME:-bookworm}"
	echo "enabling Debian contrib/non-free in /etc/apt/sources.list.d/placer-nonfree.sources for nvidia-cuda-dev" >&2
	$SUDO tee /etc/apt/sources.list.d/placer-nonfree.sources >/dev/null <<SOURCES
# Added by placer's make cuda (evaluate/hw/scripts/install-cuda-dev.sh): nvidia-cuda-dev is in non-free.
Types: deb
URIs: http://deb.debian.org/debian
Suites: $codename $codename-updates
Components: contrib non-free non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
	$SUDO apt-get update
fi
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nvidia-cuda-dev
