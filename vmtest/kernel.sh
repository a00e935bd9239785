#!/usr/bin/env bash
# vmtest/kernel.sh CACHE_DIR: make sure a Debian LTS 6.1 kernel is unpacked under CACHE_DIR
# and print its directory (CACHE_DIR/kernel-<uname -r>/, holding boot/vmlinuz-* and
# lib/modules/<uname -r>/ with a modules.dep).
#
# Which kernel: VMTEST_KERNEL (e.g. "6.1.0-57-amd64", or just "57") pins one; otherwise the
# newest linux-image-6.1.0-NN-amd64 that apt knows. A kernel already in the cache is never
# downloaded again. When apt's lists know no such kernel, or the download fails, it runs
# apt-get update once (as root) and retries; without apt the newest cached kernel is used.
# Exit 2 (with the reason on stderr) when no kernel can be had: the caller turns that into
# a SKIP, not a failure.
set -euo pipefail

cache=${1:?usage: kernel.sh CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# The newest cached kernel, if any (directories are only renamed into place when complete).
newest_cached() {
	local d
	d=$(find "$cache" -maxdepth 1 -name 'kernel-6.1.0-*-amd64' -type d -printf '%f\n' | sort -V | tail -n1)
	[[ -n $d ]] && echo "$cache/$d"
}

# newest_known: the highest linux-image-6.1.0-NN-amd64 in apt's lists (pkgnames is fast;
# -dbg, -unsigned and meta packages fall out of the pattern).
newest_known() {
	apt-cache pkgnames linux-image-6.1.0- 2>/dev/null |
		sed -nE 's/^linux-image-(6\.1\.0-[0-9]+-amd64)$/\1/p' | sort -V | tail -n1
}
# refresh: apt-get update, once, when root and apt's lists lack or no longer match the
# mirror (a fresh machine, or a kernel ABI bump that removed the old package).
refreshed=
refresh() {
	[[ -z $refreshed && $(id -u) -eq 0 ]] || return 1
	refreshed=1
	echo "vmtest: apt-get update" >&2
	apt-get update -qq >/dev/null 2>&1 || true
}
# use_cached WHY: fall back to the newest cached kernel, or give up (exit 2 = SKIP).
use_cached() {
	local d
	if [[ -z ${VMTEST_KERNEL:-} ]] && d=$(newest_cached); then
		echo "vmtest: $1; using cached $(basename "$d")" >&2
		echo "$d"
		exit 0
	fi
	echo "$1" >&2
	exit 2
}
# download VER: fetch the package into $tmp. The signed image is what linux-image-amd64
# installs; -unsigned holds the same kernel and modules, a fallback for mirrors without it.
download() {
	local pkg
	for pkg in "linux-image-$1" "linux-image-$1-unsigned"; do
		if (cd "$tmp" && apt-get download "$pkg") >>"$tmp/apt.log" 2>&1; then
			got=$pkg
			return 0
		fi
	done
	return 1
}
# cached VER: print the cache directory of VER and stop, if it is complete.
cached() {
	local dir="$cache/kernel-$1"
	if [[ -f $dir/boot/vmlinuz-$1 && -f $dir/lib/modules/$1/modules.dep ]]; then
		echo "$dir"
		exit 0
	fi
}

if [[ -n ${VMTEST_KERNEL:-} ]]; then
	ver=$VMTEST_KERNEL
	[[ $ver =~ ^[0-9]+$ ]] && ver="6.1.0-$ver-amd64"
else
	ver=$(newest_known)
	[[ -z $ver ]] && refresh && ver=$(newest_known)
	[[ -n $ver ]] || use_cached "no linux-image-6.1.0-NN-amd64 package known to apt (Debian 12 sources needed)"
fi
cached "$ver"

tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
got=
if ! download "$ver" && refresh; then
	[[ -z ${VMTEST_KERNEL:-} ]] && ver=$(newest_known) && cached "$ver"
	download "$ver" || true
fi
[[ -n $got ]] || use_cached "cannot download linux-image-$ver: $(grep -m1 '^E:' "$tmp/apt.log")"
dir="$cache/kernel-$ver"
echo "vmtest: downloaded $got, unpacking" >&2

dpkg-deb -x "$tmp"/*.deb "$tmp/root"
# The package ships no modules.dep (depmod runs at install time). Generate it here with
# busybox's depmod, so that the host need not have kmod installed.
busybox depmod -b "$tmp/root" "$ver"
rm -rf "$tmp/root/usr"   # only changelogs and docs
mv "$tmp/root" "$dir"

# Keep the cache bounded (~400 MB a kernel): drop older kernels unless one is pinned.
if [[ -z ${VMTEST_KERNEL:-} ]]; then
	find "$cache" -maxdepth 1 -name 'kernel-6.1.0-*-amd64' -type d ! -path "$dir" -exec rm -rf {} +
fi
echo "$dir"
