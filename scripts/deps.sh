#!/usr/bin/env bash
# Install the Debian packages ubxdp needs to build, test and demo. Idempotent:
# does nothing when everything is present, so `make test` stays fast.
set -euo pipefail

PKGS=(clang llvm gcc make pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev
      libisal-dev libcmocka-dev libjson-c-dev libmnl-dev python3-scapy iproute2 iputils-ping ethtool tshark iperf3
      tcpdump nftables libxdp-dev libclang-rt-14-dev systemd debhelper dpkg-dev jq xdp-tools linux-perf)
# libmnl-dev: netlink (user/io/nl.c) for routes, neighbours, veths and ethtool features.
# tcpdump: captures in the wps and endpoint suites; nftables: loss on a routed hop;
# libxdp: AF_XDP (ubctl wps egress, ubperf); libclang-rt: libFuzzer (make fuzz-wps);
# systemd: systemd-analyze verifies the units (cli suite); debhelper, dpkg-dev: the
# packages of debian/ (deb suite). jq: reads bpftool's JSON of the links ubctl pins
# (tests/lib/links.sh); xdp-tools: xdp-loader's dispatcher beside ub2e (cli suite);
# linux-perf: make bench's profile of a 64 KiB message (bench/profile_64k.sh).
# vmtest also needs these; installed only when asked, they are large. perftest and
# ibverbs-providers (Soft-RoCE's user space: ib_write_bw, librxe) and jq (reads ubperf's
# JSON where there is no python) go into the guest for the rxe and aqm suites and
# bench/rxe_vs_ubperf.sh; rdma-core itself (daemons, udev rules) is not needed.
VM_PKGS=(qemu-system-x86 busybox-static cpio perftest ibverbs-providers jq)

want=("${PKGS[@]}")
[[ "${1:-}" == "--vmtest" ]] && want+=("${VM_PKGS[@]}")

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "deps: missing packages: ${missing[*]} (run as root, or apt-get install them)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
