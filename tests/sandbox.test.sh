# The worker sandbox against a real trainjobd, as issue 10 attacked it:
#  1. a job plants `ln -sfn / evil` in a shared volume and another mounts
#     subdir /evil: it must not see the host (a canary outside the volume
#     stays unread and unwritten) and fails saying why;
#  2. a worker sees only its own processes and cannot signal trainjobd; the
#     startup script is in no command line on the host;
#  17. a trapping worker gets SIGTERM and its grace period; one that ignores
#     it is killed after the grace;
#  4. one rule for the paths a job mounts (ssh.config_mount_path /proc is
#     refused like mount_path), and mount_path /tmp works.
# The engine is started here on a temp dir and a Unix socket, stopped by pid.
# Checks that need bubblewrap print SKIP where it does not work.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

. tests/engine.sh

mkdir -p "$TMP/vol"
# A shared volume, as an operator makes one: every user jobs run as may write, none remove
# another's files (jobs of a root-run trainjobd are never root).
chmod 1777 "$TMP/vol"
GRACE=3
JOB_SPEC=gpu-1
V1=/trainjob/v1/workspaces/default/trainingJobs

if bwrap --unshare-pid --unshare-ipc --unshare-uts --as-pid-1 --cap-drop ALL --ro-bind / / \
    --proc /proc --dev /dev --tmpfs /tmp true >/dev/null 2>&1; then
    SANDBOX=1
else
    SANDBOX=0
fi
skip() { echo "SKIP $1 (bubblewrap does not work here)"; }

engine_config nodes="sim 1 64" specs=gpu-1:1:1:512 volume </dev/null

start_engine

# log NAME : the worker's log into $TMP/log
log() { curl -s --unix-socket "$SOCK" "http://x$V1/$1/workers/master-0/logs" >"$TMP/log"; }

# wait_log NAME TEXT : until the worker's log holds TEXT (bounded)
wait_log() {
    n=0
    while [ $n -lt 100 ]; do
        log "$1"
        grep -qF -- "$2" "$TMP/log" && return 0
        sleep 0.1
        n=$((n + 1))
    done
    return 1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

check "engine answers on its socket" test -S "$SOCK"

# --- 1. a symlink planted in a shared volume does not lead out of it ---
echo "secret-canary" >"$TMP/canary"
mkdir -p "$TMP/elsewhere"
submit plant "ln -sfn / /mnt/s/evil && ln -sfn $TMP/elsewhere /mnt/s/evil2 && echo planted" \
    '.mount = [{id: "scratch", mount_path: "/mnt/s"}]'
check "job A (plants the symlinks) is accepted" test "$code" = 200
check "job A succeeds" wait_for plant .state SUCCEEDED
check "the symlink is really in the volume" test -L "$TMP/vol/evil"
submit steal "cat /mnt/x$TMP/canary; echo pwned > /mnt/x$TMP/pwned; ls /mnt/x/root" \
    '.mount = [{id: "scratch", subdir: "/evil", mount_path: "/mnt/x"}]'
check "job B (mounts subdir /evil) is accepted" test "$code" = 200
check "job B fails" wait_for steal .state FAILED
check "...saying the volume's subdir is a symlink" \
    sh -c "curl -s --unix-socket '$SOCK' 'http://x$JOBS/steal' | jq -r .state_message |
        grep -qF 'volume scratch: subdir /evil: is a symlink; refused'"
check "...the canary outside the volume was not written" test ! -e "$TMP/pwned"
log steal
check "...nor read" sh -c "! grep -q secret-canary '$TMP/log'"
submit deeper "echo x > /mnt/x/f" \
    '.mount = [{id: "scratch", subdir: "/evil2/made", mount_path: "/mnt/x"}]'
check "a symlink in the middle of a subdir fails the job too" wait_for deeper .state FAILED
check "...naming it" sh -c "curl -s --unix-socket '$SOCK' 'http://x$JOBS/deeper' |
    jq -r .state_message | grep -qF 'subdir /evil2/made: /evil2 is a symlink; refused'"
check "...and nothing is created through it" test ! -e "$TMP/elsewhere/made"
submit plain "echo data > /mnt/x/f || echo data > \"\${TRAINJOB_MOUNT_0#*=}/f\"" \
    '.mount = [{id: "scratch", subdir: "/users/alice", mount_path: "/mnt/x"}]'
check "a plain subdir still works (created below the volume)" wait_for plain .state SUCCEEDED
check "...and is where the worker wrote" grep -q data "$TMP/vol/users/alice/f"

# --- 2. the worker's own processes only; the script in no command line ---
if [ "$SANDBOX" = 1 ]; then
    submit pids "echo pids \$(ls -d /proc/[0-9]* | wc -l)
for p in /proc/[0-9]*; do tr '\\0' ' ' <\$p/cmdline; echo; done >/tmp/all
grep -c trainjobd /tmp/all | sed 's/^/trainjobd-seen /'
grep -v -e '^/trainjob/init ' -e '^/bin/sh /trainjob/startup.sh' -e '^tr ' -e '^\$' /tmp/all | sed 's/^/other: /'
if kill -0 $ENGINE_PID 2>/dev/null; then echo can-signal-engine; fi
echo done"
    check "the process-listing job succeeds" wait_for pids .state SUCCEEDED
    log pids
    count=$(sed -n 's/^pids //p' "$TMP/log")
    check "a worker sees only its own few processes ($count)" test -n "$count" -a "${count:-99}" -le 6
    # init, sh, and the listing's own subshell, ls and wc
    check "...not trainjobd" grep -q '^trainjobd-seen 0$' "$TMP/log"
    check "...nothing but its init, its script and the listing" sh -c "! grep '^other: ' '$TMP/log'"
    check "...and cannot signal it" sh -c "! grep -q can-signal-engine '$TMP/log'"
else
    skip "a worker sees only its own processes"
fi
marker="mark$$-$(date +%s)-script-text"
submit secret "m=$marker; echo ready; while :; do sleep 0.2; done"
check "a worker whose script holds a marker runs" wait_log secret ready
ps -eo args >"$TMP/ps"
check "...and no command line on the host shows the marker" sh -c "! grep -qF '$marker' '$TMP/ps'"
check "...nor is the script left readable in the status dir" \
    sh -c "! grep -rlF '$marker' '$STATE/status' 2>/dev/null | grep -v '\.script$' | grep -q ."
for f in "$STATE"/status/*.script; do
    [ -e "$f" ] || continue
    check "a script file is private (0600): $(basename "$f")" test "$(stat -c %a "$f")" = 600
done
api POST "$JOBS:batchDelete" '{"training_job_names": ["secret"]}'

# --- 17. SIGTERM reaches the worker and the grace period applies ---
submit trapper "trap 'echo got-term; sleep 1; echo cleaned-up; exit 0' TERM
echo ready; while :; do sleep 0.2; done"
check "the trapping worker runs" wait_log trapper ready
t0=$(now_ms)
api POST "$JOBS:batchStop" '{"training_job_names": ["trapper"]}'
check "stop answers 200" test "$code" = 200
check "the trapping job reaches SUSPENDED" wait_for trapper .state SUSPENDED 15
t1=$(now_ms)
log trapper
check "...its trap ran: got-term" grep -q '^got-term$' "$TMP/log"
check "...and finished: cleaned-up" grep -q '^cleaned-up$' "$TMP/log"
check "...taking its second (stopped after $((t1 - t0)) ms, grace ${GRACE}s)" \
    test $((t1 - t0)) -ge 900 -a $((t1 - t0)) -lt $((GRACE * 1000))
api GET "$JOBS/trapper/workers"
check "...and it exited 0 by itself" test "$(jq -r '.workers[0].exit_code' "$TMP/body")" = 0

submit stubborn "trap '' TERM; echo ready; while :; do sleep 0.2; done"
check "a worker ignoring SIGTERM runs" wait_log stubborn ready
t0=$(now_ms)
api POST "$JOBS:batchStop" '{"training_job_names": ["stubborn"]}'
check "the stubborn job reaches SUSPENDED" wait_for stubborn .state SUSPENDED 15
t1=$(now_ms)
check "...only after the grace period ($((t1 - t0)) ms, grace ${GRACE}s)" \
    test $((t1 - t0)) -ge $((GRACE * 1000 - 200))
api GET "$JOBS/stubborn/workers"
check "...killed: exit 137" test "$(jq -r '.workers[0].exit_code' "$TMP/body")" = 137

# --- 4. one rule for every mounted path; /tmp is a fine mount path ---
submit sshproc true '.ssh = {auto_key_setup: true, config_mount_path: "/proc"}'
check "ssh.config_mount_path /proc is refused (400)" test "$code" = 400
check "...naming the field" grep -q 'ssh.config_mount_path' "$TMP/body"
check "...as mount_path is refused" grep -q '/proc is a system directory' "$TMP/body"
submit platform true '.mount = [{id: "scratch", mount_path: "/trainjob/work"}]'
check "a mount over the working directory is refused (400)" test "$code" = 400
check "...saying it is the platform's" grep -q 'reserved for the platform' "$TMP/body"
submit nested true '.mount = [{id: "scratch", mount_path: "/mnt/a"}, {id: "scratch", subdir: "/b", mount_path: "/mnt/a/b"}]'
check "a mount inside another is refused (400)" test "$code" = 400
if [ "$SANDBOX" = 1 ]; then
    submit tmpmount 'echo "cwd $(pwd) home $HOME"; echo x > /tmp/from-worker; touch here' \
        '.mount = [{id: "scratch", mount_path: "/tmp"}]'
    check "mount_path /tmp is accepted" test "$code" = 200
    check "...and the job runs to SUCCEEDED" wait_for tmpmount .state SUCCEEDED
    log tmpmount
    check "...in its working directory, which the mount does not hide" \
        grep -q '^cwd /trainjob/work home /trainjob/work$' "$TMP/log"
    check "...writing /tmp into the volume" test -f "$TMP/vol/from-worker"
else
    skip "mount_path /tmp is accepted"
fi

stop_engine
