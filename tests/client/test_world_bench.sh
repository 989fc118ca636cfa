#!/usr/bin/env bash
# Smoke test of world-bench (bench/world/): a few bots through the whole private cluster.
# Not a timing assertion: it checks only that everything works: exit status 0, the closing
# line, update-latency samples taken (a move of one bot seen by another bot's client), every
# bot logged in and played, none failed or lost, and nothing left running.
set -uo pipefail
BIN=${MC_BIN_DIR:?set MC_BIN_DIR to the bin dir of a build}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$BIN/world-bench" --bots 30 --duration 5 --area 60 >"$out" 2>&1
rc=$?
cat "$out"
die() { echo "test_world_bench: $*" >&2; exit 1; }
[ "$rc" = 0 ] || die "exit status $rc"
[ "$(tail -n 1 "$out" | grep -Ec '^update p99 at 30 bots: [0-9]+\.[0-9]+ ms$')" = 1 ] ||
  die "the last line is not the closing line"
samples=$(sed -n 's/.*(\([0-9]*\) samples in.*/\1/p' "$out")
[ "${samples:-0}" -gt 0 ] || die "no update-latency sample"
grep -Eq '^  bots +30 logged in, 0 failed, 0 lost or ended early, 30 played \(exit 0\)$' "$out" ||
  die "not every bot logged in and played"
# one world over two cellapps (issue 22): a window whole, then split; views checked across
# the boundary; the split overhead measured (a figure, never compared with a bound here)
"$BIN/world-bench" --bots 30 --duration 5 --area 60 --cellapps 2 >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" = 0 ] || die "--cellapps 2: exit status $rc"
grep -Eq '^view mismatches across cells: 0 \(of 30 views checked\)$' "$out" ||
  die "--cellapps 2: not every view checked, or a mismatch"
[ "$(grep -Ec '^  cellapp0[12] +cell x\[[^:]*: tick p99 [0-9.]+ ms, ' "$out")" = 2 ] ||
  die "--cellapps 2: no cell with a tick p99 on each cellapp"
grep -Eq '^update p99 at 30 bots: [0-9]+\.[0-9]+ ms$' "$out" || die "--cellapps 2: no update p99 line"
[ "$(tail -n 2 "$out" | head -n 1 | grep -Ec '^view mismatches across cells: ')" = 1 ] ||
  die "--cellapps 2: the view mismatches line is not next to last"
[ "$(tail -n 1 "$out" | grep -Ec '^split overhead: [0-9]+\.[0-9]{2}$')" = 1 ] ||
  die "--cellapps 2: the last line is not the split overhead"
err=$("$BIN/world-bench" --split 2>&1 >/dev/null)
[ $? = 2 ] && grep -q 'needs --cellapps' <<<"$err" || die "--split without cellapps: '$err'"
err=$("$BIN/world-bench" --cellapps 2 --split --kill cellapp 2>&1 >/dev/null)
[ $? = 2 ] && grep -q 'does not go with --kill' <<<"$err" || die "--split with --kill: '$err'"
# bad usage: one line on stderr, exit 2
err=$("$BIN/world-bench" --bots 0 2>&1 >/dev/null)
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] || die "bad usage: exit $rc, '$err'"
"$BIN/world-bench" --help | grep -q -- '--keep-logs' || die "--help"
echo "test_world_bench: ok ($samples update samples)"
