#!/usr/bin/env bash
# `deploy/cluster units LAYOUT DIR`: the systemd units of a three-host layout, checked with
# `systemd-analyze verify` (every instance a host enables, and the target; verify must exit
# 0 and print nothing: it only warns about unknown keys), the environment files' addresses,
# restart on failure, the journal, and the Redis secrets (0600, never in a unit or an
# environment file).
#   tests/multihost/units.sh BUILD_DIR [SOURCE_DIR]
# Exit 0 passed, 1 failed, 77 skipped (no systemd-analyze).
set -uo pipefail
BUILD=$(cd "${1:?usage: units.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
command -v systemd-analyze >/dev/null || { echo "SKIPPED: no systemd-analyze (package systemd)"; exit 77; }
command -v redis-server >/dev/null || { echo "SKIPPED: no redis-server"; exit 77; }
TMP=$BUILD/test-runs/units-$$
rm -rf "$TMP"; mkdir -p "$TMP"
fail() { echo "FAILED: $*" >&2; echo "(files kept in $TMP)" >&2; exit 1; }

cat >"$TMP/three.layout" <<EOT
set build $BUILD
set res $SRC/defs
set deadAfterMs 2000
redis     192.0.2.11  6379
manager   192.0.2.11  21000
loginapp  192.0.2.12  21010  21011
baseapp   192.0.2.12  21020  21021
cellapp   192.0.2.12  21030
baseapp   192.0.2.13  21020  21021
cellapp   192.0.2.13  21030
EOT
out=$(MC_BUILD_DIR=$BUILD bash "$SRC/deploy/cluster" units "$TMP/three.layout" "$TMP/units" 2>&1) || { echo "$out"; fail "units failed"; }
echo "$out"
U=$TMP/units
for role in redis manager loginapp baseapp cellapp; do
  f="$U/mercury-$role@.service"
  [ -f "$f" ] || fail "no $f"
  grep -qx "Restart=on-failure" "$f" || fail "$f: no Restart=on-failure"
  grep -qx "StandardOutput=journal" "$f" || fail "$f: not logging to the journal"
done
[ "$(wc -l <"$U/hosts")" -eq 7 ] || fail "hosts lists $(wc -l <"$U/hosts") units, not 7"
grep -qx "192.0.2.13 mercury-baseapp@baseapp-2.service" "$U/hosts" || fail "baseapp-2 is not on 192.0.2.13"
grep -qx "MC_INTERNAL=192.0.2.13:21020" "$U/env/baseapp-2.env" || fail "baseapp-2's address"
grep -qx "MC_MANAGER=192.0.2.11:21000" "$U/env/cellapp-1.env" || fail "cellapp-1's manager"
grep -q -- "--external 192.0.2.12:21011" "$U/env/loginapp-1.env" || fail "loginapp-1's external address"
grep -q -- "--deadAfterMs 2000" "$U/env/manager-1.env" || fail "the manager's deadAfterMs"
[ "$(stat -c %a "$U/redis.password")" = 600 ] || fail "the password file is not 0600"
[ "$(stat -c %a "$U/redis/redis-1.conf")" = 600 ] || fail "the Redis configuration is not 0600"
pw=$(cat "$U/redis.password")
grep -q "requirepass $pw" "$U/redis/redis-1.conf" || fail "Redis is not started with the password"
if grep -rqF -- "$pw" "$U"/*.service "$U"/*.target "$U/env"; then fail "the password is in a unit or environment file"; fi

# systemd-analyze verify: each instance the hosts enable, from the units' folder.
while read -r host unit; do
  out=$(SYSTEMD_UNIT_PATH="$U:" systemd-analyze verify "$unit" 2>&1); rc=$?
  [ $rc -eq 0 ] && [ -z "$out" ] || fail "systemd-analyze verify $unit ($host): exit $rc: $out"
done <"$U/hosts"
out=$(SYSTEMD_UNIT_PATH="$U:" systemd-analyze verify "$U/mercury-cluster.target" 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$out" ] || fail "systemd-analyze verify mercury-cluster.target: exit $rc: $out"

# A layout that cannot be turned into units is refused with a reason.
printf 'manager 192.0.2.11 21000\nrediscluster 192.0.2.11 7001\nrediscluster 192.0.2.11 7002\nrediscluster 192.0.2.11 7003\n' >"$TMP/dev.layout"
out=$(bash "$SRC/deploy/cluster" units "$TMP/dev.layout" "$TMP/units2" 2>&1) && fail "units accepted rediscluster lines"
grep -q "rediscluster lines are for development" <<<"$out" || fail "no reason: $out"
echo "passed"
rm -rf "$TMP"
exit 0
