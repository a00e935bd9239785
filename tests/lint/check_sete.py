#!/usr/bin/python3
"""Find shell assertions that `set -e` never enforces.

Every test function runs under `set -e`, and two shapes look like checks but
cannot fail a test:

  A && B      when it is not the last command of a function: if A fails, the
              list fails, and set -e ignores a failure anywhere in a && list
              but its last command. `[[ $n -eq 1 ]] && grep -q x f` passes
              with n = 2.
  ! CMD       set -e ignores a command whose status is inverted, so
              `! grep -q x f` passes whatever f holds.

Write a condition as `if A; then B; fi`, an assertion of two things as two
commands, and an inverted assertion with `refute` (tests/lib/tap.sh).

A third shape can fail a test that should pass: under pipefail,

  CMD | grep -q   grep -q leaves at the first match, and a CMD with more to
              write dies of SIGPIPE, which pipefail makes the pipe's status
              (bpftool writes line by line). Use `CMD | has PATTERN`
              (tests/lib/tap.sh), which reads to the end.
`A && B || C` (a choice with a fallback) is left alone, and so is a && list
whose last command is a jump (break, continue, return, exit, skip) or an
assignment: that is a condition, and meant as one.

Usage: check_sete.py [FILE|DIR...]   (default: every bash file under tests/)
Prints one line per finding, FILE:LINE: shape: text; exits 1 if any.
"""
import os
import re
import sys

KEYWORDS_BEFORE = ("then", "else", "do", "{", "(")
# A statement that starts with these is a condition, not an assertion.
COND_START = ("if", "elif", "while", "until", "return", "exit")


def bash_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in os.walk(p):
                for n in sorted(names):
                    f = os.path.join(d, n)
                    if is_bash(f):
                        yield f
        else:
            yield p


def is_bash(f):
    if f.endswith((".sh", ".env")):
        return True
    try:
        with open(f, "rb") as fh:
            first = fh.readline()
    except OSError:
        return False
    return first.startswith(b"#!") and b"bash" in first


def strip_line(line):
    """The line without quoted text, $(...)/`...` bodies and its comment,
    with [[ ... ]] and (( ... )) bodies blanked: only top-level operators stay.
    Returns (code, open_quote) where open_quote is the quote still open at the
    end of the line (a string that goes on to the next line), or None."""
    out = []
    i, n = 0, len(line)
    depth = 0          # $( ... ) / ( ... ) nesting we blank
    dbl = 0            # [[ ... ]] nesting
    arith = 0          # (( ... )) nesting
    quote = None
    while i < n:
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
            i += 1
            continue
        if c in "'\"`":
            quote = c
            out.append("_")
            i += 1
            continue
        if c == "\\":
            out.append("_")
            i += 2
            continue
        if c == "#" and (i == 0 or line[i - 1] in " \t;"):
            break
        if line.startswith("$((", i):
            arith += 1
            out.append("_")
            i += 3
            continue
        if line.startswith("$(", i) or (line.startswith("<(", i) or line.startswith(">(", i)):
            depth += 1
            out.append("_")
            i += 2
            continue
        if line.startswith("((", i) and depth == 0 and dbl == 0:
            arith += 1
            out.append("_")
            i += 2
            continue
        if arith and line.startswith("))", i):
            arith -= 1
            i += 2
            continue
        if line.startswith("[[", i) and (i == 0 or line[i - 1] in " \t;!({"):
            dbl += 1
            out.append("[[")
            i += 2
            continue
        if dbl and line.startswith("]]", i):
            dbl -= 1
            out.append("]]")
            i += 2
            continue
        if depth:
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            i += 1
            continue
        if dbl or arith:
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out), quote


def split_top(code):
    """Split a stripped line into simple statements on ; and on the
    keywords that start a body (then/do/else), keeping && and || in place
    and a { ...; } group whole."""
    parts, cur, depth = [], [], 0
    for tok in re.split(r"(;|\s+)", code):
        if tok in ("{",):
            depth += 1
        elif tok in ("}",):
            depth -= 1
        if depth == 0 and (tok == ";" or tok in ("then", "do", "else")):
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(tok)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


# The last command of a && list that makes it a condition, not an
# assertion: a jump, or an assignment.
CONTROL = re.compile(r"^(break|continue|return|exit|skip)\b|^(local\s+)?[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")


def is_conditional(tail):
    tail = tail.strip()
    if tail.startswith("{") and tail.endswith("}"):
        inner = [x.strip() for x in tail[1:-1].split(";") if x.strip()]
        return bool(inner) and bool(CONTROL.match(inner[-1]))
    return bool(CONTROL.match(tail))


def statements(path):
    """The file's logical statements: (line number, stripped code, raw line),
    continuation lines joined, heredoc bodies and comments left out."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    stmts = []
    heredoc = None
    quote_open = None
    cur, cur_no = "", 0
    for no, raw in enumerate(lines, 1):
        if heredoc:
            if raw.strip() == heredoc:
                heredoc = None
            continue
        if quote_open:
            # Inside a string that spans lines: look for its end.
            end = raw.find(quote_open)
            if end < 0:
                continue
            raw = "_" + raw[end + 1:]
            quote_open = None
        code, quote_open = strip_line(raw)
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", raw)
        if m and "<<<" not in raw:
            heredoc = m.group(1)
        if not cur:
            cur_no = no
        cur += " " + code
        if quote_open or re.search(r"(\\|&&|\|\||\|)\s*$", raw.rstrip()):
            continue
        if cur.strip():
            stmts.append((cur_no, cur.strip(), lines[cur_no - 1]))
        cur = ""
    return stmts


def simple(seg):
    """A segment without the group and subshell openers in front."""
    s = seg
    while s[:1] in ("{", "("):
        s = s[1:].strip()
    return s


FUNC_DEF = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\(\)\s*\{(.*)$")
# Statements that cannot fail, or that decide for themselves what a failure
# means: they do not make a function lean on set -e.
QUIET = {"if", "elif", "else", "fi", "for", "while", "until", "do", "done", "case", "esac",
         "local", "declare", "export", "echo", "printf", "cat", "sleep", "true", ":", "return",
         "exit", "break", "continue", "skip", "then", "}", "{", "shift", "set", "trap", "wait",
         "kill", "rm", "mkdir", "unset", "tap_ok", "tap_fail"}


def functions(stmts):
    """name -> list of body statements (code) for every function in stmts."""
    funcs, name, body = {}, None, []
    for no, code, raw in stmts:
        m = FUNC_DEF.match(raw)
        if m and name is None:
            inner = code[code.index("{") + 1:].strip()
            if inner.endswith("}"):        # one line: f() { ...; }
                funcs[m.group(1)] = [x for x in split_top(inner[:-1]) if x.strip()]
                continue
            name, body = m.group(1), ([inner] if inner else [])
            continue
        if name is not None:
            if raw.startswith("}"):
                funcs[name] = body
                name = None
            else:
                body.extend(split_top(code))
    return funcs


def leans_on_set_e(body):
    """Whether a failure of some command before the function's last is
    meant to end it: true of a body with a bare command that may fail
    before its last statement."""
    for seg in body[:-1]:
        s = simple(seg)
        words = s.split()
        if not words or words[0] in QUIET or "||" in s or "&&" in s or s.endswith("&"):
            continue
        if CONTROL.match(s):        # an assignment
            continue
        return True
    return False


# A pipe (not ||) into grep with -q among its options.
PIPE_GREP_Q = re.compile(r"(?<!\|)\|(?!\|)\s*grep\s+(?:-[A-Za-z]+\s+)*-[A-Za-z]*q")

COND_CALL = re.compile(r"^(?:if|elif|while|until|!|refute)\s+([A-Za-z_][A-Za-z0-9_]*)\b")


def findings(path, leaning):
    stmts = statements(path)
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    # The last command of a function: the next statement closes it (a }
    # in column 0, the way every function here ends).
    for k, (no, code, raw) in enumerate(stmts):
        nxt = stmts[k + 1][2] if k + 1 < len(stmts) else "}"
        last_in_func = nxt.startswith("}")
        if PIPE_GREP_Q.search(code):
            yield no, "CMD | grep -q (under pipefail the writer's SIGPIPE fails a match: use has)", lines[no - 1].strip()
        segs = split_top(code)
        for j, seg in enumerate(segs):
            s = simple(seg)
            words = s.split()
            if not words:
                continue
            called = None
            m = COND_CALL.match(s)
            if m:
                called = m.group(1)
            elif re.search(r"\|\||&&", s):
                called = words[0]
            if called in leaning:
                yield no, f"{called} in a condition (set -e is off inside it, so only its last command counts)", lines[no - 1].strip()
            if words[0] in COND_START or words[0] in ("for", "case", "local", "export", "declare"):
                continue
            if words[0] == "!":
                yield no, "! CMD (set -e ignores an inverted status: use refute)", lines[no - 1].strip()
                continue
            if "&&" in s and "||" not in s:
                if is_conditional(s.split("&&")[-1]):
                    continue
                is_last = last_in_func and j == len(segs) - 1 and not s.rstrip().endswith("&")
                if not is_last:
                    yield no, "A && B (set -e ignores a failing A: use if, or two commands)", lines[no - 1].strip()


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    paths = argv[1:] or [os.path.dirname(here)]
    files = list(bash_files(paths))
    # Functions are called across files (tests/lib is sourced by the suites).
    leaning = set()
    for f in files:
        for name, body in functions(statements(f)).items():
            if leans_on_set_e(body):
                leaning.add(name)
    bad = 0
    for f in files:
        for no, shape, text in findings(f, leaning):
            print(f"{f}:{no}: {shape}: {text}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
