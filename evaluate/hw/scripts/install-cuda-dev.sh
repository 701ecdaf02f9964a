#!/bin/sh
# Puts what placer's `cuda` build tag compiles and links against in DIR
# (default ~/.cache/placer/cuda-dev): cuda.h, cublas_v2.h and the rest of
# CUDA's headers in DIR/include, and the driver API's link stub
# (libcuda.so, whose soname is libcuda.so.1) in DIR/lib. cuBLAS itself is
# not linked (placer loads it at run time), so nothing else is needed.
#
# They come from Debian's nvidia-cuda-dev (CUDA 11.8 on bookworm, in the
# non-free component): apt-get downloads the package (774 MB, no
# dependencies) through a private apt state under DIR/apt, whose one
# source is the system's own Debian archive (the address and keyring of
# the system's apt sources for this release) with only its non-free
# component (Ubuntu: multiverse); the system's sources, package lists and
# installed packages are left alone, and no root is needed. Only the
# headers (13 MB) and the stub are kept. About 80 s on this project's
# machine, most of it unpacking the package. Used by `make cuda` and
# `make test`; a no-op when DIR already holds them, and when the system
# has cuda.h and cublas_v2.h (/usr/include, /usr/local/cuda/include),
# which the build then uses.
set -eu

DIR="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/placer/cuda-dev}"

for d in /usr/include /usr/local/cuda/include; do
	if [ -f "$d/cuda.h" ] && [ -f "$d/cublas_v2.h" ]; then
		exit 0
	fi
done
if [ -f "$DIR/include/cuda.h" ] && [ -f "$DIR/include/cublas_v2.h" ] && [ -f "$DIR/lib/libcuda.so" ]; then
	exit 0
fi

fail() {
	echo "install-cuda-dev: $*" >&2
	exit 1
}

command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 ||
	fail "cuda.h not found and no apt-get: install the CUDA toolkit's headers (cuda.h, cublas_v2.h) under /usr/local/cuda"
[ -r /etc/os-release ] || fail "no /etc/os-release: cannot tell the release to fetch nvidia-cuda-dev for"
. /etc/os-release
codename="${VERSION_CODENAME:-}"
[ -n "$codename" ] || fail "/etc/os-release names no VERSION_CODENAME"
case "${ID:-}" in
debian) components="non-free" ;;
ubuntu) components="multiverse" ;;
*) fail "nvidia-cuda-dev comes from Debian or Ubuntu; this is ${ID:-an unknown system}: install the CUDA toolkit's headers under /usr/local/cuda" ;;
esac

# The system's own archive for this release: the first source whose suites
# include "$codename" itself, from deb822 files (*.sources) or one-line
# entries (sources.list, *.list). Prints "URI<TAB>keyring".
archive() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v want="$codename" '
			function flush() {
				if (uri != "" && deb && has) { printf "%s\t%s\n", uri, key; found = 1; exit }
				uri = ""; key = ""; deb = 0; has = 0
			}
			/^[ \t]*$/ { flush(); next }
			/^[ \t]*#/ { next }
			tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == want) has = 1 }
			tolower($1) == "signed-by:" { key = ($2 ~ /^\//) ? $2 : "" }
			END { if (!found) flush() }
		' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v want="$codename" '
			$1 == "deb" {
				key = ""; i = 2
				if ($2 ~ /^\[/) {
					for (; i <= NF; i++) {
						if ($i ~ /^\[?signed-by=/) { key = $i; sub(/^\[?signed-by=/, "", key); sub(/\]$/, "", key) }
						if ($i ~ /\]$/) { i++; break }
					}
				}
				if ($(i + 1) == want) { printf "%s\t%s\n", $i, key; exit }
			}
		' "$f"
	done
}
line="$(archive | head -n 1)"
[ -n "$line" ] || fail "no apt source for $codename in /etc/apt/sources.list or /etc/apt/sources.list.d: cannot tell where Debian's archive is"
uri="$(printf '%s' "$line" | cut -f1)"
key="$(printf '%s' "$line" | cut -f2)"

apt="$DIR/apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$DIR/include" "$DIR/lib"
{
	echo "# Written by placer's install-cuda-dev.sh from the system's apt sources ($uri), with the components nvidia-cuda-dev needs."
	echo "Types: deb"
	echo "URIs: $uri"
	echo "Suites: $codename $codename-updates"
	echo "Components: $components"
	[ -z "$key" ] || echo "Signed-By: $key"
} >"$apt/parts/placer.sources"
: >"$apt/sources.list"
set -- -o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts" \
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Debug::NoLocking=true"
if [ "$(id -u)" = 0 ]; then
	set -- "$@" -o "APT::Sandbox::User=root" # the _apt user cannot write under a root-owned $DIR
fi

echo "install-cuda-dev: fetching Debian's nvidia-cuda-dev ($codename, from $uri) for CUDA's headers, into $DIR" >&2
apt-get "$@" -qq update || fail "apt-get update of $uri ($codename $components) failed"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get "$@" -qq download nvidia-cuda-dev 2>/dev/null) ||
	fail "apt-get download nvidia-cuda-dev failed: is it in $uri $codename $components?"
dpkg-deb -x "$tmp"/nvidia-cuda-dev_*.deb "$tmp/x"
[ -f "$tmp/x/usr/include/cuda.h" ] && [ -f "$tmp/x/usr/include/cublas_v2.h" ] ||
	fail "nvidia-cuda-dev has no usr/include/cuda.h and cublas_v2.h"
stub="$(ls "$tmp"/x/usr/lib/*/stubs/libcuda.so 2>/dev/null | head -n 1)"
[ -n "$stub" ] || fail "nvidia-cuda-dev has no stubs/libcuda.so"
cp -R "$tmp/x/usr/include/." "$DIR/include/"
cp "$stub" "$DIR/lib/libcuda.so"
dpkg-deb -f "$tmp"/nvidia-cuda-dev_*.deb Version >"$DIR/version"
rm -rf "$apt/cache"
echo "install-cuda-dev: CUDA $(cat "$DIR/version") headers in $DIR/include, libcuda.so stub in $DIR/lib" >&2
