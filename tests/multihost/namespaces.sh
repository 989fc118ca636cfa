#!/usr/bin/env bash
# The multi-host test: deploy/cluster across three hosts made of network namespaces.
#
#   tests/multihost/namespaces.sh BUILD_DIR [SOURCE_DIR]
#
# Creates an operator namespace holding a bridge and three host namespaces on it
# (10.213.14.11-13/24; nothing is added to the machine's own network namespace), runs an
# sshd in each host with a throwaway host key, a throwaway client key and an ssh
# configuration of the test's own (the machine's ~/.ssh is neither read nor written), and
# from the operator namespace runs a layout spreading Redis and the manager on host 1, and a
# loginapp, a baseapp and a cellapp on each of hosts 2 and 3. It checks: `up`; `status`
# with every process alive at its own host's address; Redis refusing a client without the
# password; the password on no command line; the baseapps of hosts 2 and 3 connected to it
# (when they take the persistence options); `watcher` without flags (the cluster file);
# kill -9 of a remote baseapp noticed and reported; a partition (host 2's link down until
# the manager declares its processes dead, then up): they come back, are told they were
# replaced, exit with status 4 and `status` shows them fenced, and the reviver on host 2
# starts a new loginapp there; `down` leaves nothing
# running on any host; a second `up` and `down` work.
#
# Every process it starts runs in one of its namespaces; on exit (also on failure) it kills
# every process in them and deletes them. Exit 0: passed, 1: failed, 77: skipped (no
# rights to create namespaces, or no sshd/redis-server), which CTest counts as skipped.
set -uo pipefail
# The cluster under test makes its own secret (deploy/cluster up) and its tools find it through
# the cluster file: a secret from the environment (a developer's shell, the test suite's) would
# override it and lock the tools out.
unset MC_SECRET_FILE

BUILD=$(cd "${1:?usage: namespaces.sh BUILD_DIR [SOURCE_DIR]}" && pwd)
SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
TAG=mcmh$$
OP=$TAG-op
HOSTS=("$TAG-h1" "$TAG-h2" "$TAG-h3")
NET=10.213.14
ADDR=("$NET.11" "$NET.12" "$NET.13")
T0=$SECONDS

log() { printf '[%3ds] %s\n' $((SECONDS - T0)) "$*"; }
skip() { echo "SKIPPED: $*"; exit 77; }
fail() {
  echo "FAILED: $*" >&2
  echo "(logs and run dirs kept in $TMP)" >&2
  exit 1
}

# --- can we? ----------------------------------------------------------------------------
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] || skip "no sshd (install openssh-server: deploy/install-deps --tests)"
command -v ssh >/dev/null || skip "no ssh client"
command -v ssh-keygen >/dev/null || skip "no ssh-keygen"
command -v redis-server >/dev/null || skip "no redis-server"
command -v ip >/dev/null || skip "no ip (iproute2)"
for b in manager loginapp baseapp cellapp watcher; do
  [ -x "$BUILD/bin/$b" ] || fail "missing $BUILD/bin/$b (build first)"
done
if ! ip netns add "$TAG-probe" 2>/dev/null; then
  skip "cannot create network namespaces here (needs root or CAP_SYS_ADMIN)"
fi
ip netns del "$TAG-probe"

TMP=$BUILD/test-runs/multihost-$$
rm -rf "$TMP"
mkdir -p "$TMP"
chmod 700 "$TMP"

# Namespaces left by an earlier run that was killed before its cleanup ran.
for ns in $(ip netns list | awk '{print $1}' | grep -E '^mcmh[0-9]+-' || true); do
  owner=${ns%%-*}; owner=${owner#mcmh}
  if ! kill -0 "$owner" 2>/dev/null; then
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null || true
  fi
done

cleanup() {
  local rc=$? ns p
  for ns in "${HOSTS[@]}" "$OP"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
  done
  for ns in "${HOSTS[@]}" "$OP"; do
    ip netns del "$ns" 2>/dev/null || true
  done
  if [ $rc -eq 0 ]; then rm -rf "$TMP"; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- the network ------------------------------------------------------------------------
log "creating namespaces $OP ${HOSTS[*]}"
ip netns add "$OP" || fail "ip netns add $OP"
ip -n "$OP" link set lo up
ip -n "$OP" link add br0 type bridge || fail "no bridge support"
ip -n "$OP" addr add "$NET.1/24" dev br0
ip -n "$OP" link set br0 up
for k in 0 1 2; do
  ns=${HOSTS[k]}
  ip netns add "$ns" || fail "ip netns add $ns"
  ip -n "$ns" link set lo up
  ip link add "${TAG}v$k" netns "$OP" type veth peer name eth0 netns "$ns" ||
    fail "cannot create a veth pair"
  ip -n "$OP" link set "${TAG}v$k" master br0
  ip -n "$OP" link set "${TAG}v$k" up
  ip -n "$ns" addr add "${ADDR[k]}/24" dev eth0
  ip -n "$ns" link set eth0 up
done

# --- ssh: keys and configuration of our own -----------------------------------------------
ssh-keygen -q -t ed25519 -N '' -C mcmh-client -f "$TMP/id" || fail "ssh-keygen"
ssh-keygen -q -t ed25519 -N '' -C mcmh-host -f "$TMP/hostkey" || fail "ssh-keygen"
cp "$TMP/id.pub" "$TMP/authorized_keys"
# sshd needs its privilege separation directory (the package's service makes it at boot).
mkdir -p /run/sshd && chmod 755 /run/sshd
for k in 0 1 2; do
  cat >"$TMP/sshd_config.$k" <<EOF
ListenAddress ${ADDR[k]}:22
HostKey $TMP/hostkey
PidFile $TMP/sshd.$k.pid
AuthorizedKeysFile $TMP/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
AcceptEnv none
LogLevel ERROR
EOF
  # In a subshell: not one of our jobs (the cleanup kills it with its namespace).
  (ip netns exec "${HOSTS[k]}" "$SSHD" -D -e -f "$TMP/sshd_config.$k" >"$TMP/sshd.$k.log" 2>&1 &)
done
cat >"$TMP/ssh_config" <<EOF
Host *
  User $(id -un)
  IdentityFile $TMP/id
  IdentitiesOnly yes
  UserKnownHostsFile $TMP/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking accept-new
  BatchMode yes
  LogLevel ERROR
EOF
op() { ip netns exec "$OP" "$@"; }
on_host() { local k=$1; shift; op ssh -n -F "$TMP/ssh_config" "${ADDR[k]}" "$@"; }
for k in 0 1 2; do
  ok=""
  for _ in $(seq 1 100); do
    if on_host "$k" true 2>/dev/null; then ok=1; break; fi
    sleep 0.1
  done
  [ -n "$ok" ] || { cat "$TMP/sshd.$k.log" >&2; fail "sshd on ${ADDR[k]} does not answer"; }
done
log "sshd answers on ${ADDR[*]}"

# --- the cluster ------------------------------------------------------------------------
LAYOUT=$TMP/three-hosts.layout
cat >"$LAYOUT" <<EOF
# Redis and the manager on host 1; a loginapp, a baseapp and a cellapp on hosts 2 and 3.
set build $BUILD
set run $TMP/hosts-run
set res $SRC/defs
set deadAfterMs 2500
redis     ${ADDR[0]}  6379
manager   ${ADDR[0]}  21000
loginapp  ${ADDR[1]}  21010  21011
baseapp   ${ADDR[1]}  21020  21021
cellapp   ${ADDR[1]}  21030
loginapp  ${ADDR[2]}  21010  21011
baseapp   ${ADDR[2]}  21020  21021
cellapp   ${ADDR[2]}  21030
EOF
OPRUN=$TMP/operator-run
cluster() {
  op env -u MC_MANAGER MC_RUN_DIR="$OPRUN" MC_BUILD_DIR="$BUILD" MC_SSH_CONFIG="$TMP/ssh_config" \
    MC_DOWN_TIMEOUT=5 MC_UP_TIMEOUT=40 ${UP_HOOK:+MC_UP_DIE_AFTER_LAUNCH=$UP_HOOK} \
    bash "$SRC/deploy/cluster" "$@"
}
watcher() { op env -u MC_MANAGER MC_RUN_DIR="$OPRUN" "$BUILD/bin/watcher" "$@"; }
# The pid the pid list records for SLOT.
pid_of() { awk -v s="$1" '$1 == s {print $3}' "$OPRUN/cluster.state"; }
# Processes in host namespace k other than its sshd (and its sessions).
leftovers() {
  local k=$1 p out=""
  for p in $(ip netns pids "${HOSTS[k]}"); do
    grep -qa sshd "/proc/$p/cmdline" 2>/dev/null && continue
    [ -e "/proc/$p" ] || continue
    out="$out $p($(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-60))"
  done
  echo "$out"
}
# wait_for SECONDS COMMAND...: until COMMAND succeeds (bounded).
wait_for() {
  local limit=$1; shift
  local end=$((SECONDS + limit))
  while [ $SECONDS -lt $end ]; do
    "$@" && return 0
    sleep 0.2
  done
  return 1
}
status_says() { # NAME STATE
  watcher --timeout 1000 status 2>/dev/null | awk -v n="$1" -v s="$2" '$1 == n && $3 == s {f=1} END {exit !f}'
}

log "up"
out=$(cluster up "$LAYOUT" 2>&1) || { echo "$out"; fail "up failed"; }
echo "$out" | sed 's/^/    /'
grep -q "6 processes registered" <<<"$out" || fail "up did not register 6 processes"

log "status: every process alive at its own host's address"
out=$(cluster status 2>&1) || { echo "$out"; fail "status failed"; }
echo "$out" | sed 's/^/    /'
expect=("manager ${ADDR[0]}:21000"
        "loginapp01 ${ADDR[1]}:21010" "baseapp01 ${ADDR[1]}:21020" "cellapp01 ${ADDR[1]}:21030"
        "loginapp02 ${ADDR[2]}:21010" "baseapp02 ${ADDR[2]}:21020" "cellapp02 ${ADDR[2]}:21030")
for e in "${expect[@]}"; do
  read -r name addr <<<"$e"
  awk -v n="$name" -v a="$addr" '$1 == n && $3 == "alive" && $6 == a {f=1} END {exit !f}' <<<"$out" ||
    fail "status does not show $name alive at $addr"
done

log "redis: refused without the password, which is on no command line"
pw=$(cat "$OPRUN/redis.password")
[ "$(stat -c %a "$OPRUN/redis.password")" = 600 ] || fail "the password file is not 0600"
[ "$(stat -c %a "$TMP/hosts-run/redis.password")" = 600 ] || fail "the hosts' password file is not 0600"
out=$(op env -u REDISCLI_AUTH redis-cli -h "${ADDR[0]}" -p 6379 ping 2>&1)
grep -q NOAUTH <<<"$out" || fail "redis answered without a password: $out"
out=$(op env REDISCLI_AUTH="$pw" redis-cli --no-auth-warning -h "${ADDR[0]}" -p 6379 ping 2>&1)
[ "$out" = PONG ] || fail "redis refused the cluster's password: $out"
if grep -qa -- "$pw" /proc/[0-9]*/cmdline 2>/dev/null; then
  fail "the Redis password is on a command line"
fi

# The baseapps reach that Redis off loopback with the password (once they take the
# persistence options, which deploy/cluster passes only when --help lists them).
if "$BUILD/bin/baseapp" --help 2>&1 | grep -q -- --redisPasswordFile; then
  log "baseapps on hosts 2 and 3 connected to Redis on host 1 with the password"
  both_connected() {
    [ "$(watcher get baseapps db/store/connected 2>/dev/null | grep -c ' true$')" -eq 2 ]
  }
  wait_for 20 both_connected || { watcher get baseapps db/store 2>&1; fail "the baseapps did not connect to Redis"; }
fi

log "watcher without flags finds the cluster (its cluster file)"
out=$(watcher get all pid 2>&1) || { echo "$out"; fail "watcher without --manager failed"; }
for n in manager loginapp01 baseapp01 cellapp01 loginapp02 baseapp02 cellapp02; do
  grep -q "^$n " <<<"$out" || fail "watcher get all pid misses $n: $out"
done

log "kill -9 of the baseapp on host 3"
victim=$(pid_of baseapp-2)
on_host 2 "kill -9 $victim" || fail "cannot kill pid $victim on ${ADDR[2]}"
wait_for 15 status_says baseapp02 dead || fail "the manager did not report baseapp02 dead"
out=$(watcher get baseapp01 peers/baseapp02 2>&1)
grep -q "dead" <<<"$out" || fail "baseapp01 was not told: $out"
log "baseapp02 reported dead; baseapp01 told"

log "partition: host 2's link down until the manager declares its processes dead"
# Host 2 runs loginapp01, baseapp01 and cellapp01, all alive (and the baseapp connected to
# Redis): each must learn it was replaced and exit 4 once the link is back.
names2=(loginapp01 baseapp01 cellapp01)
slots2=(loginapp-1 baseapp-1 cellapp-1)
pids2=()
for slot in "${slots2[@]}"; do pids2+=("$(pid_of "$slot")"); done
ip -n "$OP" link set "${TAG}v1" down
for n in "${names2[@]}"; do
  wait_for 20 status_says "$n" dead || { ip -n "$OP" link set "${TAG}v1" up; fail "$n was not declared dead"; }
done
ip -n "$OP" link set "${TAG}v1" up
log "link up again: the processes must learn they were replaced and exit"
gone() { ! on_host 1 "kill -0 $1 2>/dev/null"; }
for k in 0 1 2; do
  n=${names2[k]}; slot=${slots2[k]}; pid=${pids2[k]}
  wait_for 30 gone "$pid" || fail "$n (pid $pid) still runs after the partition"
  wait_for 10 status_says "$n" fenced || fail "status does not show $n fenced"
  grep -q "fenced by the manager" "$TMP/hosts-run/logs/$slot.log" || fail "$n did not log why it exits"
  grep -q "exit code 4" "$TMP/hosts-run/logs/$slot.log" || fail "$n did not exit with its own status"
done
status_says cellapp02 alive || fail "cellapp02 (host 3) should still be alive"
for n in cellapp03 baseapp03; do
  status_says "$n" alive && fail "$n: a fenced process registered again under a new name"
done
# The loginapp is a singleton: the reviver on host 2 starts a new one (a new process, with a
# new pid and name), through ssh like everything else there.
revived_login() {
  local p
  p=$(awk '{print $1}' "$TMP/hosts-run/pids/loginapp-1.pid" 2>/dev/null)
  [ -n "$p" ] && [ "$p" != "${pids2[0]}" ] && status_says loginapp03 alive
}
wait_for 30 revived_login || fail "the reviver on host 2 did not start a new loginapp"
grep -q "loginapp-1 restarted" "$TMP/hosts-run/logs/reviver-${ADDR[1]}.log" ||
  fail "the reviver on host 2 did not log the restart"
log "the reviver on host 2 started a new loginapp (loginapp03)"
watcher status 2>&1 | sed 's/^/    /'

log "down"
out=$(cluster down 2>&1) || { echo "$out"; fail "down failed"; }
echo "$out" | sed 's/^/    /'
grep -q "cluster: down" <<<"$out" || fail "down did not say down: $out"
for k in 0 1 2; do
  left=$(leftovers "$k")
  [ -z "$left" ] || fail "after down, still running on ${ADDR[k]}:$left"
done
[ ! -e "$OPRUN/cluster.state" ] || fail "down kept the pid list"
[ ! -e "$OPRUN/cluster.conf" ] || fail "down kept the cluster file"

log "a second up and down"
out=$(cluster up "$LAYOUT" 2>&1) || { echo "$out"; fail "the second up failed"; }
grep -q "6 processes registered" <<<"$out" || fail "the second up did not register 6 processes"
out=$(cluster down 2>&1) || { echo "$out"; fail "the second down failed"; }
for k in 0 1 2; do
  left=$(leftovers "$k")
  [ -z "$left" ] || fail "after the second down, still running on ${ADDR[k]}:$left"
done

log "up killed right after launching baseapp-2 on host 3 (before recording its pid)"
# The pid list ends before baseapp-2; the process runs on host 3 and only its own pidfile
# there knows it. down must stop it (and everything else) before it says down.
out=$(UP_HOOK=baseapp-2 cluster up "$LAYOUT" 2>&1) && { echo "$out"; fail "the hooked up was not killed"; }
grep -q '^baseapp-2 ' "$OPRUN/cluster.state" && fail "the hooked up recorded baseapp-2"
has_baseapp() {
  local p
  for p in $(ip netns pids "${HOSTS[2]}"); do
    grep -qa bin/baseapp "/proc/$p/cmdline" 2>/dev/null && return 0
  done
  return 1
}
has_baseapp || fail "baseapp-2 is not running on ${ADDR[2]}"
out=$(cluster down 2>&1) || { echo "$out"; fail "down after the killed up failed"; }
grep -q "cluster: down" <<<"$out" || fail "down after the killed up did not say down: $out"
for k in 0 1 2; do
  left=$(leftovers "$k")
  [ -z "$left" ] || fail "after the killed up and down, still running on ${ADDR[k]}:$left"
done
log "passed"
exit 0
