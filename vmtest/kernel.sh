#!/usr/bin/env bash
# vmtest/kernel.sh CACHE_DIR: make sure a Debian LTS 6.1 kernel is unpacked under CACHE_DIR
# and print its directory (CACHE_DIR/kernel-<uname -r>/, holding boot/vmlinuz-* and
# lib/modules/<uname -r>/ with a modules.dep).
#
# Which kernel: VMTEST_KERNEL (e.g. "6.1.0-57-amd64", or just "57") pins one; otherwise the
# newest linux-image-6.1.0-NN-amd64 that apt knows. A kernel already in the cache is never
# downloaded again. Without apt (offline, no lists) the newest cached kernel is used.
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

if [[ -n ${VMTEST_KERNEL:-} ]]; then
	ver=$VMTEST_KERNEL
	[[ $ver =~ ^[0-9]+$ ]] && ver="6.1.0-$ver-amd64"
else
	# pkgnames is fast and needs no regex; keep only real flavour packages (-dbg, -unsigned
	# and the meta packages fall out of the pattern) and take the highest ABI number.
	ver=$(apt-cache pkgnames linux-image-6.1.0- 2>/dev/null |
		sed -nE 's/^linux-image-(6\.1\.0-[0-9]+-amd64)$/\1/p' | sort -V | tail -n1 || true)
	if [[ -z $ver ]]; then
		if d=$(newest_cached); then
			echo "vmtest: apt knows no linux-image-6.1.0-NN-amd64 (run apt-get update?); using cached $(basename "$d")" >&2
			echo "$d"
			exit 0
		fi
		echo "no linux-image-6.1.0-NN-amd64 package known to apt (is this Debian 12 with bookworm(-security) in sources, and was apt-get update run?)" >&2
		exit 2
	fi
fi

dir="$cache/kernel-$ver"
if [[ -f $dir/boot/vmlinuz-$ver && -f $dir/lib/modules/$ver/modules.dep ]]; then
	echo "$dir"
	exit 0
fi

# Download. The signed image is what linux-image-amd64 installs; the -unsigned one holds the
# same kernel and modules, so it is a fallback for mirrors that lack the signed package.
tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
got=
for pkg in "linux-image-$ver" "linux-image-$ver-unsigned"; do
	if (cd "$tmp" && apt-get download "$pkg") >>"$tmp/apt.log" 2>&1; then
		got=$pkg
		break
	fi
done
if [[ -z $got ]]; then
	if [[ -z ${VMTEST_KERNEL:-} ]] && d=$(newest_cached); then
		echo "vmtest: cannot download linux-image-$ver; using cached $(basename "$d")" >&2
		echo "$d"
		exit 0
	fi
	echo "cannot download linux-image-$ver: $(grep -m1 '^E:' "$tmp/apt.log")" >&2
	exit 2
fi
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
