# Who jobs run as, against one root-run trainjobd shared by two real Unix
# users (issue 20, items 6, 13 and 14):
#  6. a job never runs as root: tj-alice's job (Unix socket) runs as
#     tj-alice, a TCP member whose key maps to tj-bob as tj-bob, a TCP member
#     without a mapping and root itself as the dedicated user; none of them
#     reads /etc/shadow, sees root's keys in /proc/keys or any cgroup under
#     /sys/fs/cgroup; the first log line and the catalog say who; engine.yaml
#     may not name root or an unknown user (line:col); a personal trainjobd
#     (run by tj-alice) runs jobs as tj-alice;
# 13. a start refused (a subdir that is a symlink) and a deleted job leave no
#     cgroup; a member at limits.cgroups_per_member gets a refusal naming it;
# 14. a volume subdir removed between the shim's open and bubblewrap's bind
#     is "could not start", never the worker's exit 1: no restart is spent.
# Needs root (it makes the users) and bubblewrap; the engine is started here
# and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP runas (needs root to make tj-alice and tj-bob)"
    exit 0
fi
. tests/engine.sh
. tests/hmac.sh

tj_users || { echo "FAIL cannot make the test users"; exit 1; }
PERSONAL_PID=""
cleanup() {
    [ -n "$PERSONAL_PID" ] && kill -KILL "$PERSONAL_PID" 2>/dev/null
    engine_cleanup
    [ -d "$TMP/personal/state" ] && end_workers "$TMP/personal/state"
    rm -rf "$TMP"
}
ALICE_UID=$(id -u "$TJ_ALICE")
BOB_UID=$(id -u "$TJ_BOB")
PORT=$(free_port) || { echo "FAIL no free TCP port below the ephemeral range"; exit 1; }
ENGINE_ARGS="--listen 127.0.0.1:$PORT"
V1=/trainjob/v1/workspaces/default/trainingJobs
# The bubblewrap trainjobd runs: the real one, which removes a race job's
# volume subdir first (the window between the shim's open and the bind).
mkdir -p "$TMP/bin"
cat >"$TMP/bin/bwrap" <<EOF
#!/bin/sh
case " \$* " in *" /mnt/race "*) rmdir "$TMP/vol/race" ;; esac
exec /usr/bin/bwrap "\$@"
EOF
chmod 755 "$TMP/bin/bwrap"

engine_config volume <<EOF
  members: [$TJ_ALICE, $TJ_BOB, remote-bob, remote-carol]
keys:
- {access_key: AKB, secret_key: SKB, user: remote-bob, unix_user: $TJ_BOB}
- {access_key: AKC, secret_key: SKC, user: remote-carol}
limits: {cgroups_per_member: 3}
EOF
PATH="$TMP/bin:$PATH" start_engine || exit 1
# The team's socket, as an operator opens it to the team.
shared_tmp "$TMP/run"
chmod 0666 "$SOCK"

# What each job reports about itself.
PROBE='echo "uid $(id -u)"; echo "user $(id -un)"
cat /etc/shadow >/dev/null 2>&1 && echo SHADOW-READ
cat /etc/gshadow >/dev/null 2>&1 && echo GSHADOW-READ
ls /etc/ssl/private >/dev/null 2>&1 && echo SSL-PRIVATE
grep -q "_uid[._s]*0\|_uid_ses.0" /proc/keys 2>/dev/null && echo ROOT-KEYS
echo "cgroups $(ls -A /sys/fs/cgroup 2>/dev/null | wc -l)"
echo "home-writable $(touch "$HOME/x" 2>/dev/null && echo yes || echo no)"'

# log NAME : the worker's log into $TMP/log
log() { curl -s --unix-socket "$SOCK" "http://x$V1/$1/workers/master-0/logs" >"$TMP/log"; }
# as_api USER METHOD TARGET [BODY] : a request on the Unix socket as USER; status in $code
as_api() {
    _u=$1
    shift
    as_user "$_u" curl -s -m 30 -w '\n%{http_code}' --unix-socket "$SOCK" -X "$1" \
        ${3:+-H 'Content-Type: application/json' --data-binary "$3"} "http://x$2" >"$TMP/as_out"
    code=$(tail -n 1 "$TMP/as_out")
    sed '$d' "$TMP/as_out" >"$TMP/as_body"
}
# probe_ok NAME UID USER : the job ran as UID/USER and saw nothing of root's
probe_ok() {
    wait_for "$1" .state SUCCEEDED 30 || return 1
    log "$1"
    grep -qx "uid $2" "$TMP/log" && grep -qx "user $3" "$TMP/log" &&
        ! grep -q -e SHADOW-READ -e GSHADOW-READ -e SSL-PRIVATE -e ROOT-KEYS "$TMP/log" &&
        grep -qx "cgroups 0" "$TMP/log" && grep -qx "home-writable yes" "$TMP/log"
}

check "the first log line says who jobs run as" \
    sh -c "head -n 1 '$TMP/engine.log' | grep -q 'jobs run as .*never as root'"

# A job that holds its cgroup while the others look for it.
submit holder "sleep 300"
check "a long job runs (its cgroup is there to be seen)" wait_for holder .state RUNNING

# --- tj-alice through the Unix socket: her own uid ---
shared_tmp "$TMP/run"
as_api "$TJ_ALICE" POST "$JOBS?training_job_name=alice" "$(job_json alice "$PROBE")"
check "tj-alice submits through the socket" test "$code" = 200
check "...her job runs as tj-alice ($ALICE_UID), reads no shadow, no root keys, no cgroups" \
    probe_ok alice "$ALICE_UID" "$TJ_ALICE"
as_api "$TJ_ALICE" GET /trainjob/v1/catalog
check "...and her catalog says so" sh -c "jq -r .run_as '$TMP/as_body' | grep -q '^$TJ_ALICE (uid $ALICE_UID)'"
as_user "$TJ_ALICE" "$TRAINJOB_BIN" --endpoint "http+unix://$SOCK" --workspace default get catalog \
    >"$TMP/cat_out" 2>&1
check "...and trainjob get catalog prints it" grep -q "^Your jobs run as $TJ_ALICE (uid $ALICE_UID)" "$TMP/cat_out"

# --- /etc in her sandbox: the host's bytes and modes, no bind per file ---
# Its files are copied in (bwrap --file) rather than bound one by one: each
# bind costs bubblewrap a pass over the mount table. She reads what the host
# has, with the host's mode and owner; only its directories are mounts.
ETC_PROBE='cat /etc/passwd; echo "mode $(stat -L -c %a:%u /etc/passwd /etc/hosts | paste -sd,)"
n=0
for m in $(awk '"'"'$5 ~ /^\/etc\// {print $5}'"'"' /proc/self/mountinfo); do [ -f "$m" ] && n=$((n + 1)); done
echo "file-mounts $n"'
as_api "$TJ_ALICE" POST "$JOBS?training_job_name=aliceetc" "$(job_json aliceetc "$ETC_PROBE")"
check "tj-alice submits a job that reads /etc" test "$code" = 200
check "...it runs" wait_for aliceetc .state SUCCEEDED 30
log aliceetc
check "...and reads every line of the host's /etc/passwd, hers included" \
    sh -c "test \"\$(grep -Fxc -f /etc/passwd '$TMP/log')\" -ge \"\$(wc -l </etc/passwd)\" &&
        grep -q '^$TJ_ALICE:' '$TMP/log'"
check "...with the host's mode and owner" grep -qx \
    "mode $(stat -L -c %a:%u /etc/passwd /etc/hosts | paste -sd,)" "$TMP/log"
check "...and no file of /etc is a mount of its own (one bwrap pass over the mounts each)" \
    grep -qx "file-mounts 0" "$TMP/log"

# --- SSH keys: hers to read, in a directory root writes again at every start ---
# (a directory of hers would let her plant a symlink for root to write through)
SSHK=/sensecore/compute/acp/ssh/ssh_config
as_api "$TJ_ALICE" POST "$JOBS?training_job_name=alicessh" "$(job_json alicessh \
    "test -r $SSHK/id_ed25519 && echo KEY-READ" '.ssh = {auto_key_setup: true}')"
check "tj-alice submits a job with SSH keys" test "$code" = 200
check "...it runs" wait_for alicessh .state SUCCEEDED 30
log alicessh
check "...and reads its private key" grep -qx KEY-READ "$TMP/log"
SSH_DIR="$STATE/ssh/$(field alicessh .uid)"
check "...whose directory stays root's (0711) while the keys are tj-alice's" \
    sh -c "test \"\$(stat -c %u:%a '$SSH_DIR')\" = 0:711 &&
        test \"\$(stat -c %u '$SSH_DIR/id_ed25519')\" = $ALICE_UID"

# --- TCP member mapped to tj-bob ---
tcp_api AKB SKB "$PORT" POST "$JOBS?training_job_name=rbob" "$(job_json rbob "$PROBE")"
check "remote-bob submits over TCP" test "$code" = 200
check "...his job runs as tj-bob ($BOB_UID), his key's unix_user" probe_ok rbob "$BOB_UID" "$TJ_BOB"

# --- TCP member without a mapping, and root itself: the dedicated user ---
tcp_api AKC SKC "$PORT" GET /trainjob/v1/catalog
DEDICATED=$(jq -r .run_as "$TMP/body" | sed 's/ .*//')
check "remote-carol's catalog names a dedicated user, not root ($DEDICATED)" \
    sh -c "test -n '$DEDICATED' && test '$DEDICATED' != null && id -u '$DEDICATED' >/dev/null &&
        test \"\$(id -u '$DEDICATED')\" != 0"
DED_UID=$(id -u "$DEDICATED" 2>/dev/null)
tcp_api AKC SKC "$PORT" POST "$JOBS?training_job_name=rcarol" "$(job_json rcarol "$PROBE")"
check "remote-carol submits over TCP" test "$code" = 200
check "...her job runs as the dedicated user $DEDICATED ($DED_UID)" \
    probe_ok rcarol "$DED_UID" "$DEDICATED"
submit rootjob "$PROBE"
check "root's own job runs as the dedicated user too, never root" \
    probe_ok rootjob "$DED_UID" "$DEDICATED"

# --- 13. cgroups: a refused start and a deleted job leave none ---
cg_base=$(sed -n "s/.*workers' cgroups under \([^ ]*\).*/\1/p" "$TMP/engine.log" | head -n 1)
holder_uid=$(field holder .uid)
# cgroups_of UID : how many cgroup directories of job UID's workers ("UID.<worker>-<attempt>")
# there are, in every hierarchy
cgroups_of() {
    [ -n "$cg_base" ] || { echo 0; return; }
    find "$(dirname "$(dirname "$(dirname "$cg_base")")")" -type d -name "$1.*" 2>/dev/null | wc -l
}
if [ -n "$cg_base" ]; then
    check "the running job has its cgroups" test "$(cgroups_of "$holder_uid")" -gt 0
    mkdir -p "$TMP/outside"
    ln -s "$TMP/outside" "$TMP/vol/evil"
    submit refused "echo never" '.mount = [{id: "scratch", subdir: "/evil", mount_path: "/mnt/x"}]'
    check "a start refused (its subdir is a symlink) fails the job" wait_for refused .state FAILED
    ref_uid=$(field refused .uid)
    check "...and leaves no cgroup of it" test "$(cgroups_of "$ref_uid")" = 0
    api POST "$JOBS:batchDelete" '{"training_job_names": ["holder"]}'
    check "deleting the running job answers 200" test "$code" = 200
    n=0
    while [ "$(cgroups_of "$holder_uid")" != 0 ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
    check "...and no cgroup of it remains" test "$(cgroups_of "$holder_uid")" = 0
    JOB_REPLICAS=4 submit many "sleep 30"
    check "a member past limits.cgroups_per_member (3) is refused" wait_for many .state FAILED
    check "...naming the limit" sh -c "curl -s --unix-socket '$SOCK' 'http://x$V1/many/events' |
        grep -q 'limits.cgroups_per_member: 3'"
else
    echo "SKIP cgroups (not enforced here)"
fi

# --- 14. a subdir removed between the shim's open and the bind ---
mkdir -p "$TMP/vol/race"
submit race "echo ran" \
    '.mount = [{id: "scratch", subdir: "/race", mount_path: "/mnt/race"}] |
     .fault_tolerance = {backoff_limit: 3}'
check "a bind source gone before bubblewrap binds it fails the job" wait_for race .state FAILED
check "...as could not start, saying why" sh -c "curl -s --unix-socket '$SOCK' 'http://x$V1/race/events' |
    grep -q 'could not start master-0: .*the sandbox could not be set up: bwrap: .*source path'"
check "...spending no restart" test "$(field race .restart_count)" = 0
check "...with no fault rule run (no exit 1 recorded)" sh -c "! curl -s --unix-socket '$SOCK' \
    'http://x$V1/race/events' | grep -q 'exited 1'"

# --- engine.yaml may not name root or an unknown user ---
bad_config() {
    cp "$CONF" "$TMP/bad.yaml"
    printf '%s\n' "$1" >>"$TMP/bad.yaml"
    ! "$TRAINJOBD_BIN" --foreground --config "$TMP/bad.yaml" --state "$TMP/badstate" \
        --socket "$TMP/bad.sock" >"$TMP/bad.out" 2>&1 &&
        grep -q "$2" "$TMP/bad.out" && grep -Eq ':[0-9]+:[0-9]+' "$TMP/bad.out"
}
check "job_user: root is refused at load, with line:col" bad_config "job_user: root" "job_user.*uid 0"
check "a key's unix_user that does not exist is refused, with line:col" \
    sh -c "sed 's/unix_user: $TJ_BOB/unix_user: no-such-user-x/' '$CONF' >'$TMP/bad2.yaml' &&
        ! '$TRAINJOBD_BIN' --foreground --config '$TMP/bad2.yaml' --state '$TMP/bad2state' \
            --socket '$TMP/bad2.sock' >'$TMP/bad2.out' 2>&1 &&
        grep -q 'keys\[0\].unix_user.*no-such-user-x' '$TMP/bad2.out' &&
        grep -Eq ':[0-9]+:[0-9]+' '$TMP/bad2.out'"

# --- a personal trainjobd, started by tj-alice, runs jobs as tj-alice ---
P="$TMP/personal"
shared_tmp "$P"
chown "$TJ_ALICE" "$P"
PSOCK="$P/engine.sock"
# setpriv execs env, which execs trainjobd: $! is trainjobd itself (as_user is a
# function, and its subshell's pid would not be).
setpriv --reuid="$TJ_ALICE" --regid="$TJ_ALICE" --init-groups -- env HOME="$(getent passwd \
    "$TJ_ALICE" | cut -d: -f6)" "$TRAINJOBD_BIN" --foreground --config "$P/engine.yaml" \
    --state "$P/state" --socket "$PSOCK" >"$P/engine.log" 2>&1 &
PERSONAL_PID=$!
engine_up "$PSOCK" 10
check "tj-alice's personal trainjobd answers" test -S "$PSOCK"
check "...saying so in its first log line (its default configuration written after)" sh -c "head -n 1 '$P/engine.log' | grep -q 'jobs run as $TJ_ALICE'"
pjob=$(jq -n --arg s "$PROBE" '{display_name: "mine", framework: "PYTORCH_DDP",
    resource_pool: {name: "local"}, roles: [{total_replicas: 1, resource_spec: [{name: "cpu-1"}],
    image_path: "local/host", startup_script: $s}]}')
as_user "$TJ_ALICE" curl -s -o /dev/null --unix-socket "$PSOCK" -X POST \
    -H 'Content-Type: application/json' --data-binary "$pjob" \
    "http://x$JOBS?training_job_name=mine"
pwait() {
    n=0
    while [ $n -lt 300 ]; do
        as_user "$TJ_ALICE" curl -s --unix-socket "$PSOCK" "http://x$JOBS/mine" | jq -r .state |
            grep -qx SUCCEEDED && return 0
        sleep 0.1
        n=$((n + 1))
    done
    return 1
}
check "...where her job succeeds" pwait
as_user "$TJ_ALICE" curl -s --unix-socket "$PSOCK" "http://x$V1/mine/workers/master-0/logs" >"$TMP/plog"
check "...as tj-alice ($ALICE_UID)" grep -qx "uid $ALICE_UID" "$TMP/plog"
kill -TERM "$PERSONAL_PID" 2>/dev/null
wait "$PERSONAL_PID" 2>/dev/null
check "tj-alice's personal trainjobd has stopped" sh -c "! kill -0 $PERSONAL_PID 2>/dev/null"
PERSONAL_PID=""

stop_engine
