# TAP helpers for shell test suites. Source it, define test_* functions, call tap_run.
# A test function passes by returning 0, fails otherwise, and skips by calling
# `skip REASON` (exit status 77). Functions run in a subshell with `set -e`;
# a suite may define teardown(), run after each test whatever its outcome.
_tap_n=0

tap_ok()   { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
tap_fail() { _tap_n=$((_tap_n + 1)); echo "not ok $_tap_n - $*"; }

# tap_run NAME...: run each function, capture its output, print it as comments on failure.
# A passing test's line ends with its wall time, so that a slow suite shows where;
# TAP_VERBOSE=1 prints a passing test's output too.
tap_run() {
	local t log rc t0
	for t in "$@"; do
		log=$(mktemp)
		t0=$SECONDS
		( trap 'set +e; [[ $(type -t teardown) == function ]] && teardown' EXIT; set -e; "$t" ) >"$log" 2>&1
		rc=$?
		if [[ $rc -eq 0 ]]; then
			tap_ok "$t ($((SECONDS - t0)) s)"
			[[ -z ${TAP_VERBOSE:-} ]] || sed 's/^/#   /' "$log"
		elif [[ $rc -eq 77 ]]; then
			_tap_n=$((_tap_n + 1))
			echo "ok $_tap_n - $t # SKIP $(tail -n1 "$log")"
		else
			tap_fail "$t"
			sed 's/^/#   /' "$log"
		fi
		rm -f "$log"
	done
}

# Inside a test function: skip with a reason (prints it for tap_run to pick up).
skip() { echo "$*"; exit 77; }

# tap_renumber BASE: renumber the TAP lines of another producer to follow BASE.
tap_renumber() {
	awk -v n="$1" '/^(not )?ok [0-9]+/ { pre = ($0 ~ /^not/) ? "not ok " : "ok "
		sub(/^(not )?ok [0-9]+/, pre (++n)) } { print }'
}

# refute CMD...: succeed when CMD fails. (`! cmd` would not trip `set -e`.)
refute() {
	if "$@"; then echo "unexpectedly true: $*"; return 1; fi
	return 0
}

# has [GREP OPTION...] PATTERN: a line of stdin matches, as with grep -q, but stdin
# is read to its end. grep -q leaves at the first match, and a writer with more to
# say dies of SIGPIPE, which pipefail makes the pipe's status: a match read as a
# failure (bpftool writes line by line; the cc suite failed so once in 15 runs).
has() { grep "$@" >/dev/null; }

# also_stderr: stdin to stdout, and a copy to stderr, written before it
# returns. Not `tee /dev/stderr`: that opens the log file behind fd 2 again,
# truncating it, and a failing test's earlier lines were lost.
also_stderr() { tee >(cat >&2); wait $!; }

# num WHAT: copy one number from stdin to stdout. Anything else (nothing, a
# key that is not there, "null") prints "missing: WHAT" and fails. In [[ ]] or
# (( )) that text is an arithmetic syntax error, which ends the test: `[[ '' -eq
# 0 ]]` holds, so without this a counter that was renamed would read as zero.
num() {
	local v
	v=$(cat)
	if [[ $v =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; then echo "$v"; return 0; fi
	echo "missing: $1 (read '${v:0:40}')"
	echo "missing: $1 (read '${v:0:40}')" >&2
	return 1
}

# json_get FILE KEY.PATH: one value of a JSON file (list indices are numbers in
# the path); a key that is not there, or null, prints "missing: KEY" and fails.
json_get() {
	/usr/bin/python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
try:
    for k in sys.argv[2].split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
except (KeyError, IndexError, ValueError, TypeError):
    v = None
if v is None:
    print("missing: " + sys.argv[2]); print("json_get: missing: " + sys.argv[2] + " in " + sys.argv[1], file=sys.stderr)
    sys.exit(1)
print(v)' "$1" "$2"
}
