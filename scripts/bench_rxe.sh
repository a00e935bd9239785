#!/usr/bin/env bash
# make bench, Soft-RoCE part: bench/rxe_vs_ubperf.sh (ubperf rtp-sr beside rdma_rxe RC
# under netem loss) inside the vmtest guest, whose kernel has rdma_rxe and netem; the
# host's has neither. Prints the guest's table; says why when the VM cannot be had.
#
#   scripts/bench_rxe.sh [SECONDS_PER_RUN [ROUNDS]]     (default 4 s, 3 rounds)
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
for a in "$@"; do
	[[ $a =~ ^[0-9]+$ ]] || { echo "bench_rxe: arguments are SECONDS and ROUNDS, not '$a'" >&2; exit 2; }
done
echo
echo "Soft-RoCE beside ubperf (vmtest guest; the first run downloads the guest kernel)"
VMTEST_CMD="bash bench/rxe_vs_ubperf.sh $*" "$ROOT/vmtest/run.sh" |
	sed -unE 's/^# guest: //p; /^not ok|# SKIP|^# (round|  )|^# vmtest: (kernel|guest ran)/p'
exit "${PIPESTATUS[0]}"
