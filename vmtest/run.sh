#!/usr/bin/env bash
# vmtest/run.sh [SUITE...]: run test suites (default: $VMTEST_SUITES or "bpf e2e aqm rxe") inside a
# Debian LTS kernel (linux-image-6.1.0-NN-amd64) under qemu TCG, and print their TAP lines
# tagged with the guest kernel, e.g. "ok 3 - [6.1.0-57] bpf: xdp_redirect", then the
# runner's "N passed, N failed, N skipped". Suite "selftest" is vmtest's own smoke test.
#
# Fails (a "not ok" line) on a failed test, a guest that gives no final summary (crash,
# hang, timeout) and a warning/oops/BUG, soft lockup, RCU stall or hung task in the guest
# kernel log. Prints one SKIP line when the VM cannot be had at all (no qemu/busybox/cpio,
# no kernel package, qemu cannot boot): under CI=true tests/run.sh fails that skip.
#
# Environment: VMTEST_TIMEOUT  seconds before the guest is killed (default 1200)
#              VMTEST_KERNEL   pin a kernel, e.g. 6.1.0-57-amd64 (default: newest 6.1 in apt)
#              VMTEST_MEM, VMTEST_SMP   guest size (default 2G, 2)
#              VMTEST_APPEND   extra kernel command line
#              VMTEST_PERF=1   copy perf into the guest too (tools.list "profile")
#              VMTEST_CACHE    cache directory (default build/vmtest: kernel, last logs)
#              VMTEST_CMD      a command to run (bash -c, in the repo copy) instead of the
#                              suites, e.g. a benchmark of bench/; its exit status is the test
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
if [[ $# -gt 0 ]]; then suites=("$@"); else read -ra suites <<<"${VMTEST_SUITES:-bpf e2e aqm rxe}"; fi
cache=${VMTEST_CACHE:-$repo/build/vmtest}
limit=${VMTEST_TIMEOUT:-1200}
[[ $limit =~ ^[0-9]+$ ]] || { echo "vmtest: VMTEST_TIMEOUT must be a number of seconds" >&2; exit 2; }

n=0 pass=0 fail=0 skip=0
# emit "ok"|"not ok" TEXT: one TAP line, numbered here so that numbers are unique across suites.
emit() {
	n=$((n + 1))
	echo "$1 $n - $2"
	if [[ $1 == "not ok" ]]; then
		fail=$((fail + 1))
	elif [[ ${2,,} =~ \#\ *skip ]]; then
		skip=$((skip + 1))
	else
		pass=$((pass + 1))
	fi
}
finish() {
	echo "$pass passed, $fail failed, $skip skipped"
	[[ $fail -eq 0 ]]
	exit
}
skip_all() {
	emit ok "vmtest # SKIP $*"
	finish
}
# tail_log FILE: last lines of a log as TAP comments, to show why a guest died.
tail_log() { [[ -s $1 ]] && tail -n "${2:-40}" "$1" | tr -d '\r' | sed 's/^/#   /'; }

# --- what the host must have
for p in qemu-system-x86_64 busybox cpio gzip timeout flock; do
	command -v "$p" >/dev/null || skip_all "$p not installed (scripts/deps.sh --vmtest)"
done

mkdir -p "$cache"
work=$(mktemp -d "$cache/run.XXXXXX")
trap 'rm -rf "$work"' EXIT

# --- kernel (download once; serialized so that parallel runs do not fetch twice)
kdir=$(flock "$cache/.lock" "$here/kernel.sh" "$cache" 2>"$work/kernel.err")
rc=$?
if [[ $rc -eq 2 ]]; then   # the last line says why
	head -n -1 "$work/kernel.err" | sed 's/^/# /'
	skip_all "no guest kernel: $(tail -n1 "$work/kernel.err")"
fi
sed 's/^/# /' "$work/kernel.err"
if [[ $rc -ne 0 ]]; then
	emit "not ok" "vmtest: getting the guest kernel failed"
	finish
fi
kver=${kdir##*/kernel-}
tag=${kver%-amd64}

# --- initramfs
t0=$SECONDS
if ! "$here/mkinitramfs.sh" "$kdir" "$work/initramfs.cpio.gz" "${suites[@]}" 2>"$work/mkinitramfs.err"; then
	sed 's/^/# /' "$work/mkinitramfs.err"
	emit "not ok" "vmtest: building the initramfs failed"
	finish
fi
sed 's/^/# /' "$work/mkinitramfs.err"
echo "# vmtest: kernel $kver, initramfs $(($(stat -c %s "$work/initramfs.cpio.gz") / 1048576)) MiB" \
	"built in $((SECONDS - t0)) s; booting (tcg) for: ${VMTEST_CMD:-${suites[*]}}"

# --- boot. ttyS0 (kernel console, every log level) goes to a file; ttyS1 carries the
# tests' output to our stdout. mitigations=off: page-table isolation makes every syscall
# costly under TCG and is not what the tests are about.
console=$work/console.log
t0=$SECONDS
began=0 ended=0 summary='' suite='' qemu_rc=''
while IFS= read -r line; do
	line=${line%$'\r'}
	if [[ $line =~ ^VMTEST-BEGIN\ (.*)$ ]]; then
		began=1 kver=${BASH_REMATCH[1]} tag=${kver%-amd64}
	elif [[ $line =~ ^VMTEST-END ]]; then
		ended=1
	elif [[ $line =~ ^VMTEST-QEMU-EXIT\ ([0-9]+)$ ]]; then
		qemu_rc=${BASH_REMATCH[1]}
	elif [[ $line =~ ^#\ suite\ (.*)$ ]]; then
		suite=${BASH_REMATCH[1]}
		echo "# guest suite $suite"
	elif [[ $line =~ ^(not\ ok|ok)(\ [0-9]+)?(\ -)?\ *(.*)$ ]]; then
		emit "${BASH_REMATCH[1]}" "[$tag] ${suite:+$suite: }${BASH_REMATCH[4]}"
	elif [[ $line =~ ^[0-9]+\ passed,\ [0-9]+\ failed,\ [0-9]+\ skipped$ ]]; then
		summary=$line
		echo "# guest: $line"
	elif [[ $line == \#* ]]; then
		echo "$line"
	elif [[ -n $line ]]; then
		echo "# guest: $line"
	fi
done < <(
	timeout -k 10 "$limit" qemu-system-x86_64 \
		-accel tcg,thread=multi -cpu max -smp "${VMTEST_SMP:-2}" -m "${VMTEST_MEM:-2G}" \
		-nodefaults -display none -monitor none -no-reboot \
		-serial "file:$console" -serial stdio \
		-kernel "$kdir/boot/vmlinuz-${kdir##*/kernel-}" -initrd "$work/initramfs.cpio.gz" \
		-append "console=ttyS0,115200 loglevel=8 panic=-1 mitigations=off ${VMTEST_APPEND:-}" \
		</dev/null 2>"$work/qemu.err"
	echo "VMTEST-QEMU-EXIT $?"
)
echo "# vmtest: guest ran $((SECONDS - t0)) s"
cp "$console" "$work/qemu.err" "$cache/" 2>/dev/null   # kept for a look after the run

# --- how the guest ended
if [[ $began -eq 0 && ! -s $console && ${qemu_rc:-1} -ne 0 && ${qemu_rc:-1} -ne 124 ]]; then
	# qemu itself failed before the kernel printed anything: no VM on this machine.
	skip_all "qemu cannot boot here: $(head -n1 "$work/qemu.err") (exit $qemu_rc)"
fi
if [[ $qemu_rc == 124 || $qemu_rc == 137 ]]; then
	emit "not ok" "[$tag] vmtest: guest killed after the ${limit} s time limit (VMTEST_TIMEOUT)"
	tail_log "$console"
elif [[ $began -eq 0 ]]; then
	emit "not ok" "[$tag] vmtest: guest never started the tests (qemu exit $qemu_rc)"
	tail_log "$work/qemu.err" 5
	tail_log "$console"
elif [[ $ended -eq 0 ]]; then
	emit "not ok" "[$tag] vmtest: guest stopped before the tests ended (crashed?)"
	tail_log "$console" 25
elif [[ -z $summary ]]; then
	emit "not ok" "[$tag] vmtest: tests/run.sh in the guest printed no summary line"
fi

# --- the guest kernel log: the console saw every message, even those of a guest that died.
# A soft lockup, an RCU stall or a hung task fails the run like a BUG or a WARN: whether
# the kernel or a starved TCG vCPU caused it, the tests' timings behind it are not what
# they claim.
splat='WARNING:|BUG:|Oops|general protection|KASAN|UBSAN|Kernel panic|refcount_t:|list_(add|del) corruption'
splat+='|soft lockup|rcu: INFO: .*stall|blocked for more than'
if grep -Eq "$splat" "$console"; then
	emit "not ok" "[$tag] vmtest: guest kernel log is clean"
	grep -E -B2 -A20 "$splat" "$console" | head -n 80 | tr -d '\r' | sed 's/^/#   /'
elif [[ -s $console ]]; then
	emit ok "[$tag] vmtest: guest kernel log is clean"
fi

finish
