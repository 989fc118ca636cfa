#!/usr/bin/env python3
"""The baseapp's parts (docs/ARCHITECTURE.md "Inside the baseapp").

parts.py --source SRC --max N OBJECT...

OBJECT: the baseapp's object files (CMake's $<TARGET_OBJECTS:baseapp>, ';'-lists too). Each belongs to the
part named by its folder under baseapp/src (bases, db, clients, backup, retire, login; a
file at the top is the owner's). Rules:
- circles: the file-level call graph (object A uses a symbol object B defines, from nm) has
  no strongly connected part larger than N files;
- calls: a file uses symbols only of its own part and of the parts below it (BELOW);
- includes: a file under baseapp/src includes another part's header ("part/header.h") only
  when that part is below its own.
Prints every circle; exits 1 with the reasons when a rule is broken.
"""
import argparse
import os
import re
import subprocess
import sys

# the strongly connected parts, as the libraries' check finds them (tests/common/layers.py)
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'common'))
from layers import circles  # noqa: E402

# What each part sits on (a lower part reaches an upper one only through a hook).
BELOW = {
    'bases': set(),
    'db': {'bases'},
    'clients': {'bases'},
    'backup': {'bases', 'db', 'clients'},
    'retire': {'bases', 'db', 'clients', 'backup'},
    'login': {'bases', 'db', 'clients'},
}
OWNER = 'owner'


def part_of(path):
    """The part of a source or object path under baseapp/src (OWNER at its top)."""
    parts = os.path.normpath(path).split(os.sep)
    i = len(parts) - 1 - parts[::-1].index('src')
    return parts[i + 1] if len(parts) > i + 2 and parts[i + 1] in BELOW else OWNER


def allowed(frm, to):
    return frm == to or frm == OWNER or to in BELOW.get(frm, set())


def call_graph(objects):
    """{object: set(objects whose symbols it uses)}."""
    defs, uses = {}, {}
    for o in objects:
        out = subprocess.run(['nm', o], capture_output=True, text=True, check=True).stdout
        uses[o] = set()
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBR':
                defs[p[2]] = o
            elif len(p) == 2 and p[0] == 'U':
                uses[o].add(p[1])
    return {o: {defs[s] for s in syms if s in defs and defs[s] != o} for o, syms in uses.items()}


def name(o):
    return os.path.basename(o).replace('.c.o', '').replace('.o', '')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--source', required=True)
    ap.add_argument('--max', type=int, required=True)
    ap.add_argument('objects', nargs='+')
    a = ap.parse_args()
    a.objects = [o for arg in a.objects for o in arg.split(';') if o]  # a CMake list
    bad = []
    if len(a.objects) < 10:
        bad.append(f'only {len(a.objects)} object files given: not the baseapp')
    graph = call_graph(a.objects)
    for part in circles(graph):
        names = ' '.join(name(o) for o in part)
        print(f'circle of {len(part)}: {names}')
        if len(part) > a.max:
            bad.append(f'a circle of {len(part)} files (at most {a.max}): {names}')
    for o, used in sorted(graph.items()):
        for u in sorted(used):
            if not allowed(part_of(o), part_of(u)):
                bad.append(f'{name(o)} ({part_of(o)}) calls {name(u)} ({part_of(u)}), a part '
                           'above it')
    include = re.compile(r'^\s*#\s*include\s*"([a-z]+)/[^"]+"')
    src = os.path.join(a.source, 'baseapp', 'src')
    checked = 0
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(('.c', '.h')):
                continue
            p = os.path.join(root, f)
            checked += 1
            frm = part_of(p)
            with open(p, encoding='utf-8', errors='replace') as fh:
                for i, line in enumerate(fh, 1):
                    m = include.match(line)
                    if m and m.group(1) in BELOW and not allowed(frm, m.group(1)):
                        bad.append(f'{os.path.relpath(p, a.source)}:{i} ({frm}) includes '
                                   f'"{m.group(0).split(chr(34))[1]}", a part above it')
    print(f'{len(a.objects)} objects; {checked} sources read')
    for b in bad:
        print('BROKEN:', b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
