#!/usr/bin/env bash
# The fault benchmark through the whole private cluster (world-bench --kill, bench/world/):
# 20 bots play while the baseapp holding the world's Space (and most of them), the cellapp
# serving their world, the loginapp, the manager and Redis are each killed with SIGKILL (the
# bases are restored from their backups on the other baseapp and the bots resume there; the
# cells are restored on the other cellapp from their bases' copies; the others are started
# again, as the reviver does). Every kill must keep every player (K = N: each bot playing at
# the kill sees the world again and still plays at the end) and lose no entity.
# Not a timing assertion: recovery times are printed, never compared with a bound.
set -uo pipefail
BIN=${MC_BIN_DIR:?set MC_BIN_DIR to the bin dir of a build}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$BIN/world-bench" --bots 20 --duration 36 --area 60 --kill baseapp --kill cellapp \
  --kill loginapp --kill manager --kill redis >"$out" 2>&1
rc=$?
cat "$out"
die() { echo "test_fault_bench: $*" >&2; exit 1; }
[ "$rc" = 0 ] || die "exit status $rc"
[ "$(tail -n 1 "$out" | grep -Ec '^update p99 at 20 bots: [0-9]+\.[0-9]+ ms$')" = 1 ] ||
  die "the last line is not the closing line"
for who in baseapp01 'cellapp0[12]' loginapp01 manager redis; do
  line=$(grep -E "^kept after kill -9 of $who: " "$out") || die "no line for the kill of $who"
  [[ $line =~ :\ ([0-9]+)/([0-9]+)\ players,\ recovery\ p99\ ([0-9]+)\ ms,\ entities\ lost\ ([0-9]+)$ ]] ||
    die "malformed: $line"
  kept=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]} lost=${BASH_REMATCH[4]}
  [ "$n" -gt 0 ] || die "no bot was playing at the kill of $who"
  [ "$kept" = "$n" ] || die "the kill of $who cost players: $line"
  [ "$lost" = 0 ] || die "the kill of $who lost entities: $line"
done
# bad usage: one line, exit 2
err=$("$BIN/world-bench" --kill nothing 2>&1 >/dev/null)
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] || die "bad --kill: exit $rc, '$err'"
err=$("$BIN/world-bench" --kill cellapp --cellapps 1 2>&1 >/dev/null)
rc=$?
[ "$rc" = 2 ] || die "--kill cellapp with one cellapp: exit $rc, '$err'"
echo "test_fault_bench: ok"
