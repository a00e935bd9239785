#!/usr/bin/env python3
"""optcheck.py BIN MANPAGE: for every command and subcommand of a tool, the
options its parser accepts, its --help and its man page agree.

The commands are the man page's .SS sections (each named by its path, e.g.
"ubctl wps ingress attach"); the page itself must be what the tool generates
now (checked by the caller). For each command:
  - `PATH --list-options` (what the parser's table holds), the options
    `PATH --help` prints and the .TP entries of its man section are the same set;
  - `ubctl help WORDS...` (ubctl only) prints the same help;
  - each option is accepted by name: `PATH --opt[=x] --help` exits 0 (names are
    checked before any value), and an unknown one exits 2 with one line;
  - a group's --help names each of its subcommands, each with a section.
Prints one line per problem; exits 1 if any."""
import re
import subprocess
import sys

binary, manpage = sys.argv[1], sys.argv[2]
tool = binary.rsplit('/', 1)[-1]
problems = []


def run(args):
    p = subprocess.run([binary] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def unroff(s):
    return s.replace('\\-', '-').replace('\\e', '\\').replace('\\&', '')


# Sections of the man page: path -> (options, subcommands)
sections = {}
cur = None
lines = open(manpage).read().split('\n')
for i, line in enumerate(lines):
    m = re.match(r'^\.SS "(.*)"$', line)
    if m:
        cur = unroff(m.group(1))
        sections[cur] = (set(), set())
        continue
    if line.startswith('.SH'):
        cur = None
        continue
    if cur and line == '.TP' and i + 1 < len(lines):
        # "\fB\-s\fR, \fB\-\-stats\fR": an option and its short name; "\fBsub\fR": a subcommand
        words = [unroff(w) for w in re.findall(r'\\fB(.*?)\\fR', lines[i + 1].split(' \\fI')[0])]
        for word in words:
            (sections[cur][0] if word.startswith('-') else sections[cur][1]).add(word)

if not sections:
    problems.append('%s: no command sections' % manpage)

for path, (man_opts, man_subs) in sections.items():
    words = path.split()[1:]
    rc, out, err = run(words + ['--help'])
    if rc != 0 or not out.startswith('usage: ' + path):
        problems.append('%s --help: exit %d, %r' % (path, rc, out[:60]))
        continue
    help_opts = set(re.findall(r'^  (--[a-z0-9-]+)', out, re.M))
    help_opts |= set(re.findall(r'^  (-[a-zA-Z]), --', out, re.M)) - {'-h'}
    help_opts |= set(re.findall(r'^  -[a-zA-Z], (--[a-z0-9-]+)', out, re.M)) - {'--help'}
    if '-h, --help' in out:
        help_opts.add('--help')
    rc, listed, _ = run(words + ['--list-options'])
    list_opts = {l.split()[0] for l in listed.split('\n') if l.strip()}
    if rc != 0:
        problems.append('%s --list-options: exit %d' % (path, rc))
    if not (list_opts == help_opts == man_opts):
        problems.append('%s: parser %s, --help %s, man page %s' % (
            path, sorted(list_opts ^ man_opts), sorted(help_opts ^ man_opts), sorted(man_opts)))
    if tool == 'ubctl':
        rc2, out2, _ = run(['help'] + words)
        if rc2 != 0 or out2 != out:
            problems.append('ubctl help %s differs from --help' % ' '.join(words))
    for l in listed.split('\n'):
        if not l.strip() or l == '--help':
            continue
        name, *arg = l.split()
        given = [name + '=x'] if arg and name.startswith('--') else [name, 'x'] if arg else [name]
        rc, o, e = run(words + given + ['--help'])
        if rc != 0 or not o.startswith('usage: ' + path):
            problems.append('%s: the parser refuses %s: exit %d %s' % (path, name, rc, e.strip()))
    rc, o, e = run(words + ['--no-such-option', '--help'])
    if rc != 2 or len(e.strip().split('\n')) != 1 or not e.startswith(tool + ':') or o:
        problems.append('%s --no-such-option: exit %d, %r' % (path, rc, e))
    for sub in man_subs:
        if path + ' ' + sub not in sections or not re.search(r'^  %s ' % re.escape(sub), out, re.M):
            problems.append('%s: subcommand %s without a section or a help line' % (path, sub))

for p in problems:
    print(p)
print('%s: %d commands checked, %d problems' % (tool, len(sections), len(problems)))
sys.exit(1 if problems else 0)
