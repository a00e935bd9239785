#!/usr/bin/env bash
# ubxdp test runner: runs suites, each an executable tests/<suite>/run that prints
# TAP lines ("ok N - name", "not ok N - name", "ok N - name # SKIP why"), and
# ends with the one line CI reads: "N passed, N failed, N skipped".
#
#   tests/run.sh                 every suite (vmtest: bpf and e2e again under qemu, in
#                                the background beside the suites that time nothing)
#   tests/run.sh bpf e2e         just these
#   UBXDP_TAP_ONLY=1             print only TAP lines (used inside the vmtest guest)
#   CI=true                      a skip fails the run unless tests/README.md allows it
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
suites=("$@")
[[ ${#suites[@]} -eq 0 ]] && suites=(lint unit golden bpf e2e cli deb dissector wps wps_egress endpoint urma cc vmtest)

# Under CI every package is installed and we are root: a skip means a suite
# did not run what it claims. The few that cannot run anywhere CI runs are
# listed, each with its reason, in tests/README.md ("Skips allowed under CI").
allowed=()
if [[ ${CI:-} == true ]]; then
	while IFS= read -r pat; do allowed+=("$pat"); done < <(
		sed -n '/^## Skips allowed under CI/,/^## /s/^- `\([^`]*\)`.*/\1/p' "$here/README.md")
fi
# skip_allowed NAME: NAME (a TAP line's text between "ok N - " and " # SKIP")
# matches a pattern of the list.
skip_allowed() {
	local p
	for p in "${allowed[@]}"; do
		# shellcheck disable=SC2053
		[[ $1 == $p ]] && return 0
	done
	return 1
}

# tally SUITE OUT RC SECONDS: count a finished suite's TAP lines (OUT, its whole
# output, already shown) into pass/fail/skip, with the CI rule on skips.
pass=0 fail=0 skip=0
tally() {
	local s=$1 out=$2 rc=$3 secs=$4 p k f line name
	p=$(grep -Ec '^ok ' "$out" || true)
	k=$(grep -Eic '^ok .*# *skip' "$out" || true)
	f=$(grep -Ec '^not ok ' "$out" || true)
	p=$((p - k))
	if [[ ${CI:-} == true ]]; then
		while IFS= read -r line; do
			name=$(sed -E 's/^ok [0-9]+ - //; s/ *# *[Ss][Kk][Ii][Pp].*$//' <<<"$line")
			skip_allowed "$name" && continue
			echo "not ok - CI=true: a skip not allowed by tests/README.md: $line"
			f=$((f + 1)) k=$((k - 1))
		done < <(grep -Ei '^ok .*# *skip' "$out")
	fi
	if [[ $rc -ne 0 && $f -eq 0 ]]; then
		echo "not ok - suite $s exited with status $rc"
		f=1
	fi
	if [[ $((p + k + f)) -eq 0 ]]; then
		echo "not ok - suite $s ran no test"
		f=1
	fi
	echo "# suite $s: $secs s"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + k))
}

# The vmtest guest (qemu TCG, mostly one busy core for several minutes) runs
# beside the suites that measure no time, started first; the suites that do
# (rates, timers, RTOs, delay lines: TIMED) wait until it is done, so that
# neither they nor the guest's own timed suites share the machine.
TIMED=" wps wps_egress endpoint urma cc "
vm_pid='' vm_out='' vm_t0=0
if [[ " ${suites[*]} " == *" vmtest "* && ${#suites[@]} -gt 1 && -x $here/vmtest/run ]]; then
	vm_out=$(mktemp) vm_t0=$SECONDS
	# Its own process group, so that an interrupted run takes qemu with it.
	setsid "$here/vmtest/run" >"$vm_out" 2>&1 &
	vm_pid=$!
	trap '[[ -z $vm_pid ]] || kill -- -"$vm_pid" 2>/dev/null' EXIT
	trap 'exit 130' INT TERM
	echo "# suite vmtest: started in the background, reported before the first timed suite"
fi
vm_report() {
	[[ -n $vm_pid ]] || return 0
	local rc
	wait "$vm_pid"
	rc=$?
	vm_pid=''
	echo "# suite vmtest"
	cat "$vm_out"
	tally vmtest "$vm_out" "$rc" $((SECONDS - vm_t0))
	rm -f "$vm_out"
}

for s in "${suites[@]}"; do
	if [[ $s == vmtest && -n $vm_out ]]; then continue; fi
	if [[ $TIMED == *" $s "* ]]; then vm_report; fi
	runner="$here/$s/run"
	if [[ ! -x "$runner" ]]; then
		echo "not ok - suite $s: no runner $runner"
		fail=$((fail + 1))
		continue
	fi
	echo "# suite $s"
	t0=$SECONDS
	out=$(mktemp)
	"$runner" 2>&1 | tee "$out"
	tally "$s" "$out" "${PIPESTATUS[0]}" $((SECONDS - t0))
	rm -f "$out"
done
vm_report

echo "$pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 ]]
