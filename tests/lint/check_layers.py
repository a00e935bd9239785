#!/usr/bin/env python3
"""The include graph of the C code keeps the layers the build states.

    check_layers.py [ROOT]

Reads every quoted #include of the C files (.c, .h, .def) under user/, bench/,
tests/, bpf/ and headers/ of ROOT (default .) and prints one line per fault,
FILE:LINE: WHAT, exiting 1 if there is any:

- "circle A -> B -> A": modules that include each other, directly or round
  about; a module is a .c with the .h of the same name beside it, so x.c
  including y.h while y.c includes x.h is a circle. A header that no .c of
  its name implements (tp.h, an API several files implement; tp_int.h, the
  types a library's files share) is no module: it calls nothing, so a circle
  takes two modules with code.
- "bare include of NAME": C code outside bpf/ names a header of user/ by its
  path under user/ ("transport/tp.h"). Bare names are for the wire and map
  layouts of headers/, skeletons (*.skel.h), liburma's public headers, and a
  test's or bench's own helpers beside it (relative paths there).
- "LIB includes DIR/NAME above it": a library user/LIB includes only its own
  headers and those of the libraries below it: the <lib>_DEPS lines of the
  Makefile, each naming the libraries right below.
"""
import os
import re
import sys

TOPS = ('user', 'bench', 'tests', 'bpf', 'headers')
EXTS = ('.c', '.h', '.def')
PUBLIC = 'user/urma/include'
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
DEPS = re.compile(r'^([a-z_]+)_DEPS\s*:?=\s*(.*)$')


def is_bpf(path):
    return path.startswith('bpf/') or path.endswith(('.bpf.c', '.bpf.h'))


def sources(root):
    for top in TOPS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(EXTS):
                    yield os.path.relpath(os.path.join(d, f), root)


def resolve(root, path, name):
    """The file an include names (relative to root), or None (a skeleton, or nothing)."""
    here = os.path.dirname(path)
    bases = [here, 'headers', 'bpf'] if is_bpf(path) else [here, 'user', 'headers', PUBLIC]
    for b in bases:
        p = os.path.normpath(os.path.join(b, name))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def bare_fault(root, path, name, target):
    """Why this include of a non-BPF file is not allowed, or None."""
    if name.endswith('.skel.h'):
        return None
    if target is None:
        return 'include of no file: %s' % name
    here = os.path.dirname(path)
    outside_user = not path.startswith('user/')
    if '/' not in name:
        if target in ('headers/' + name, PUBLIC + '/' + name):
            return None
        if outside_user and target == os.path.normpath(os.path.join(here, name)):
            return None
        return 'bare include of %s' % name
    if target == os.path.normpath(os.path.join('user', name)):
        return None
    if outside_user and not target.startswith('user/'):
        return None
    return 'include of %s by a path not under user/' % name


def library_tree(root):
    deps = {}
    with open(os.path.join(root, 'Makefile')) as f:
        for line in f:
            m = DEPS.match(line)
            if m:
                deps[m.group(1)] = m.group(2).split()
    return deps


def below(deps, lib):
    seen, todo = set(), list(deps.get(lib, []))
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(deps.get(d, []))
    return seen


def module(path):
    return os.path.splitext(path)[0]


def circles(edges, code):
    """Strongly connected components of two modules with code or more (Tarjan), each as a cycle."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len([c for c in comp if c in code]) > 1:
                out.append(cycle(edges, set(comp), code))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def cycle(edges, comp, code):
    """One cycle through the component's first module, by breadth-first search back to it."""
    start = min(comp & code) if comp & code else min(comp)
    prev, todo = {start: None}, [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(edges.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in comp and w not in prev:
                prev[w] = v
                todo.append(w)
    return sorted(comp)


def check(root):
    faults = []
    deps = library_tree(root)
    edges, where, code = {}, {}, set()
    for path in sources(root):
        if path.endswith('.c'):
            code.add(module(path))
        top = path.split('/', 1)[0]
        lib = path.split('/')[1] if top == 'user' and path.count('/') >= 2 else None
        with open(os.path.join(root, path), encoding='utf-8') as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                target = resolve(root, path, name)
                if top in ('user', 'bench', 'tests') and not is_bpf(path):
                    why = bare_fault(root, path, name, target)
                    if why:
                        faults.append('%s:%d: %s' % (path, n, why))
                if target is None:
                    continue
                a, b = module(path), module(target)
                if a != b:
                    edges.setdefault(a, set()).add(b)
                    where.setdefault((a, b), '%s:%d' % (path, n))
                if lib in deps and target.startswith('user/') and not target.startswith(PUBLIC):
                    other = target.split('/')[1]
                    if other != lib and other not in below(deps, lib):
                        faults.append('%s:%d: %s includes %s above it' % (path, n, lib, target[len('user/'):]))
    for c in circles(edges, code):
        faults.append('%s: circle %s' % (where[(c[0], c[1])], ' -> '.join(c)))
    return faults


def main(argv):
    root = argv[0] if argv else '.'
    faults = check(root)
    for f in faults:
        print(f)
    return 1 if faults else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
