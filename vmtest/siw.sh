#!/usr/bin/env bash
# vmtest/siw.sh KERNEL_DIR: build Soft-iWARP (siw.ko) for the vmtest guest kernel into
# KERNEL_DIR/extra/siw.ko, once, and print that path. mkinitramfs.sh puts it into the guest
# (and /init loads it) whenever it is there.
#
# Debian's 6.1 kernel is built without CONFIG_RDMA_SIW, so the module is built out of tree
# from the same kernel's source (linux-source-6.1 at the image's version: only
# drivers/infiniband/sw/siw is unpacked) against its headers (linux-headers-VER-amd64,
# -common, linux-kbuild-6.1), all fetched with `apt-get download` as kernel.sh fetches the
# image, with the compiler Debian built it with (the host's gcc-12 on bookworm). The
# module is not signed: the guest loads it with a "tainting kernel" line, no more.
# Only bench/rxe_vs_ubperf.sh needs it (scripts/bench_rxe.sh calls this); the test suites
# do not. Exit 2 with the reason on stderr when it cannot be built.
set -euo pipefail

kdir=$(cd "${1:?usage: siw.sh KERNEL_DIR}" && pwd)
kver=${kdir##*/kernel-}
out=$kdir/extra/siw.ko
if [[ -s $out ]]; then
	echo "$out"
	exit 0
fi
cant() { echo "vmtest siw: $*" >&2; exit 2; }
for p in apt-cache apt-get dpkg-deb make gcc tar xz; do
	command -v "$p" >/dev/null || cant "$p not installed"
done
ver=$(apt-cache show "linux-image-$kver" 2>/dev/null | sed -n 's/^Version: //p' | head -n1)
[[ -n $ver ]] || cant "apt knows no linux-image-$kver (its version names the source)"
abi=${kver%-amd64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "vmtest siw: building siw.ko for $kver (Debian $ver) in $tmp" >&2
(cd "$tmp" && apt-get download "linux-headers-$kver=$ver" "linux-headers-$abi-common=$ver" \
	"linux-kbuild-6.1=$ver" "linux-source-6.1=$ver") >"$tmp/apt.log" 2>&1 ||
	cant "apt-get download failed: $(tail -n2 "$tmp/apt.log" | tr '\n' ' ')"
for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$tmp/root"; done
src=$tmp/root/usr/src
tar -C "$tmp" -xJf "$src/linux-source-6.1.tar.xz" linux-source-6.1/drivers/infiniband/sw/siw
# The headers' Makefile includes -common by its installed path; point it at ours.
echo "include $src/linux-headers-$abi-common/Makefile" >"$src/linux-headers-$kver/Makefile"
make -C "$src/linux-headers-$kver" M="$tmp/linux-source-6.1/drivers/infiniband/sw/siw" \
	CONFIG_RDMA_SIW=m modules >"$tmp/build.log" 2>&1 ||
	cant "module build failed: $(grep -m3 -E 'error|Error' "$tmp/build.log" | tr '\n' ' ')"
mkdir -p "$kdir/extra"
cp "$tmp/linux-source-6.1/drivers/infiniband/sw/siw/siw.ko" "$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
