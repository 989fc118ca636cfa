#!/usr/bin/env python3
"""The lower layers' structure (docs/ARCHITECTURE.md "Layers", "Inside the libraries").

layers.py --source SRC --max N [--objects BIN] LIB=ARCHIVE=INCLUDE_DIRS ...

For each library (a static archive built from common/ or mercury/):
- circles: the file-level call graph (member A uses a symbol member B defines, from nm)
  has no strongly connected part larger than N files;
- includes: none of the directories it is compiled with lies in a process or tool folder
  (INCLUDE_DIRS: CMake's list, '|'-separated, usage requirements included).
Then, over the sources of common/ and mercury/: no #include climbs out with "..", and where
the build left the compiler's dependency files (BIN/common, BIN/mercury: *.o.d, a Makefile
build), no object depends on a header in a process or tool folder.
Prints every circle; exits 1 with the reasons when a rule is broken.
"""
import argparse
import os
import re
import subprocess
import sys

UPPER = ('baseapp', 'cellapp', 'manager', 'loginapp', 'client', 'bench')


def members_graph(archive):
    """{member: set(members it uses)} among the archive's members."""
    out = subprocess.run(['nm', archive], capture_output=True, text=True, check=True).stdout
    defs, uses, cur = {}, {}, None
    for line in out.splitlines():
        if line.endswith(':') and ' ' not in line:
            cur = line[:-1]
            uses.setdefault(cur, set())
            continue
        parts = line.split()
        if cur is None:
            continue
        if len(parts) == 3 and parts[1] in 'TDBR':
            defs[parts[2]] = cur
        elif len(parts) == 2 and parts[0] == 'U':
            uses[cur].add(parts[1])
    return {a: {defs[s] for s in syms if s in defs and defs[s] != a} for a, syms in uses.items()}


def circles(graph):
    """Strongly connected parts with more than one member (Tarjan, iterative)."""
    index, low, on, stack, found, n = {}, {}, set(), [], [], 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                part = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    part.append(w)
                    if w == v:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def in_upper(path, source):
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(source))
    return not rel.startswith('..') and rel.split(os.sep)[0] in UPPER


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--source', required=True)
    ap.add_argument('--max', type=int, required=True)
    ap.add_argument('--objects')
    ap.add_argument('libs', nargs='+')
    a = ap.parse_args()
    bad = []
    for spec in a.libs:
        name, archive, dirs = spec.split('=', 2)
        for part in circles(members_graph(archive)):
            names = ' '.join(m.replace('.c.o', '').replace('.o', '') for m in part)
            print(f'{name}: circle of {len(part)}: {names}')
            if len(part) > a.max:
                bad.append(f'{name}: a circle of {len(part)} files (at most {a.max}): {names}')
        for d in filter(None, dirs.split('|')):
            if in_upper(d, a.source):
                bad.append(f'{name}: compiled with the include directory {d}, in a process '
                           'or tool folder')
    include = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
    for top in ('common', 'mercury'):
        for root, _, files in os.walk(os.path.join(a.source, top)):
            for f in files:
                if not f.endswith(('.c', '.h')):
                    continue
                p = os.path.join(root, f)
                with open(p, encoding='utf-8', errors='replace') as fh:
                    for i, line in enumerate(fh, 1):
                        m = include.match(line)
                        if m and '..' in m.group(1).split('/'):
                            bad.append(f'{os.path.relpath(p, a.source)}:{i}: #include '
                                       f'"{m.group(1)}" climbs out of its layer')
    checked = 0
    for top in ('common', 'mercury') if a.objects else ():
        for root, _, files in os.walk(os.path.join(a.objects, top)):
            for f in files:
                if not f.endswith('.o.d'):
                    continue
                p = os.path.join(root, f)
                base = p.split(os.sep + 'CMakeFiles' + os.sep)[0]  # the compiler's directory
                with open(p, encoding='utf-8', errors='replace') as fh:
                    text = fh.read().replace('\\\n', ' ')
                checked += 1
                deps = [t.rstrip(':') for t in text.split(':', 1)[1].split()] if ':' in text else []
                for dep in deps:
                    full = dep if os.path.isabs(dep) else os.path.join(base, dep)
                    if in_upper(full, a.source):
                        bad.append(f'{os.path.relpath(p, a.objects)}: depends on '
                                   f'{os.path.relpath(os.path.realpath(full), a.source)}')
    print(f'{len(a.libs)} libraries; {checked} dependency files read')
    for b in bad:
        print('BROKEN:', b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
