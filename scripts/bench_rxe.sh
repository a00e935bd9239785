#!/usr/bin/env bash
# make bench, Soft-RoCE/Soft-iWARP part: bench/rxe_vs_ubperf.sh (ubperf rtp-sr beside
# rdma_rxe and siw, RC Send, loss-free and at 1 % loss) inside the vmtest guest, whose
# kernel has rdma_rxe and netem; the host's has neither. siw is not in Debian's 6.1: this
# builds it first (vmtest/siw.sh, once per guest kernel; without it the siw cells stay
# empty and say why). Prints the guest's rounds and table; says why when the VM cannot be had.
#
#   scripts/bench_rxe.sh [SECONDS_PER_RUN [ROUNDS]]     (default 8 s, 10 rounds)
#
# The bench's knobs pass through to the guest when set: RXE_TIMEOUT (perftest -u, default
# 12), WINDOW (ubperf --window, default 128 = rxe's), MARGIN (perftest -f, default 1),
# LOSSES (default "0 1"), SWEEP=1 (rxe's -u choices first: RXE_TIMEOUTS, SWEEP_RUNS).
# Each run is its own guest with its own temporary files (vmtest/run.sh: mktemp under
# VMTEST_CACHE, the serial ports on stdio and a file): runs of other trees can go on at
# the same time, though on a shared host they slow each other.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
for a in "$@"; do
	[[ $a =~ ^[0-9]+$ ]] || { echo "bench_rxe: arguments are SECONDS and ROUNDS, not '$a'" >&2; exit 2; }
done
secs=${1:-8} reps=${2:-10}
echo
echo "ubperf beside Soft-RoCE and Soft-iWARP (vmtest guest; the first run downloads the guest kernel and builds siw)"
cache=${VMTEST_CACHE:-$ROOT/build/vmtest}
mkdir -p "$cache"
if kdir=$(flock "$cache/.lock" vmtest/kernel.sh "$cache" 2>/dev/null); then
	flock "$cache/.lock" vmtest/siw.sh "$kdir" >/dev/null || echo "(no siw: the guest runs rxe and ubperf only)"
fi
env=()
for k in RXE_TIMEOUT WINDOW MARGIN LOSSES SWEEP RXE_TIMEOUTS SWEEP_RUNS SIW_MTU DEBUG ONLY; do
	[[ -n ${!k:-} ]] && env+=("$k=$(printf '%q' "${!k}")")
done
# A guest's time limit that fits the rounds: 6 runs a round (3 peers, 2 losses), each its
# SECONDS plus about 20 s of setup under TCG on a shared host, a sweep, boot.
export VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-$((900 + reps * 6 * (secs + 20)))}
VMTEST_CMD="${env[*]} bash bench/rxe_vs_ubperf.sh $secs $reps" "$ROOT/vmtest/run.sh" |
	sed -unE 's/^# guest: //p; /^not ok|# SKIP|^# (round|sweep|siw|  |[0-9])|^# vmtest: (kernel|guest ran)/p'
exit "${PIPESTATUS[0]}"
