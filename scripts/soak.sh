#!/usr/bin/env bash
# scripts/soak.sh N [REV]: run CI (CI=true bash .ci/run) N times, each on a fresh clone of
# this repository at REV (default HEAD), one after another, and tally the failures per test.
#
# Each run's whole output is kept in $SOAK_DIR (default build/soak/<time>/run-K.log), and
# the table at the end names every test that failed, how often, and in which runs, so a
# flake shows up as a count rather than as a memory of "it failed once". Exit status 0
# only if every run ended "N passed, 0 failed".
#
# The clones live under $SOAK_DIR too; each is removed after its run (SOAK_KEEP=1 keeps
# them). A run's time is printed beside its summary, to watch make test's 15-minute budget.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-}
rev=${2:-HEAD}
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/soak.sh N [REV]   (N runs of CI=true .ci/run)" >&2; exit 2; }
sha=$(git -C "$repo" rev-parse --verify --quiet "$rev^{commit}") ||
	{ echo "soak: $rev is not a commit of $repo" >&2; exit 2; }
dir=${SOAK_DIR:-$repo/build/soak/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$dir"
echo "soak: $n runs of CI=true .ci/run at ${sha:0:12}; logs in $dir"

declare -A failed_in=()
bad=0
for ((k = 1; k <= n; k++)); do
	clone=$dir/clone-$k log=$dir/run-$k.log
	git clone -q "$repo" "$clone" && git -C "$clone" checkout -q "$sha" || {
		echo "soak: cannot clone $repo at $sha" >&2; exit 1; }
	t0=$SECONDS
	(cd "$clone" && CI=true bash .ci/run) >"$log" 2>&1
	rc=$?
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
	printf 'run %d: %s (exit %d, %d min %02d s)\n' "$k" "${summary:-no summary line}" "$rc" \
		$(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60))
	if [[ $rc -ne 0 || ! $summary =~ \ 0\ failed ]]; then
		bad=$((bad + 1))
		# A failed test's name, without its number (numbers shift between runs).
		while IFS= read -r t; do
			failed_in[$t]+=" $k"
		done < <(grep -E '^not ok ' "$log" | sed -E 's/^not ok [0-9]* *-? *//; s/ \([0-9]+ s\)$//' | sort -u)
		[[ -n $summary ]] || failed_in["(run ended without a summary line)"]+=" $k"
	fi
	[[ -n ${SOAK_KEEP:-} ]] || rm -rf "$clone"
done

echo "soak: $((n - bad)) of $n runs passed"
if [[ ${#failed_in[@]} -gt 0 ]]; then
	echo "failures per test (count: runs):"
	for t in "${!failed_in[@]}"; do
		read -ra runs <<<"${failed_in[$t]}"
		printf '  %3d: %-60s runs%s\n' "${#runs[@]}" "$t" "${failed_in[$t]}"
	done | sort -rn
fi
[[ $bad -eq 0 ]]
