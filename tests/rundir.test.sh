# Worker status files on a tmpfs (issue 24): the status, claim and pid
# file of every worker start were made and removed on the state directory's
# disk, where each new inode cost a search past the recently freed ones.
# They now go to a private directory on a tmpfs, linked from STATE/status:
#  - a root engine puts them on /run or /dev/shm (whichever is a tmpfs),
#    in a 0700 directory of root's, and none on the state dir's disk;
#  - a kill -9 and a restart finds them again: the worker's exit code
#    reaches the job; a clean stop with no worker leaves nothing behind,
#    and the next start makes the directory again (as after a reboot);
#  - the files of a state dir removed under a killed engine are swept by
#    the next engine's start;
#  - on shared ground (a sticky tmpfs, as /dev/shm is) another user's
#    directory in the engine's place is not used: the engine says why,
#    keeps the files in its state dir, and writes nothing into bob's;
#  - a user's own engine keeps them in its state dir (a user's tmpfs goes
#    with the user's last session), or in the tmpfs --runtime-dir names,
#    which bob cannot read.
# Engines are started here on temp dirs and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

tj_users || { fail "the test users exist" "tj_users could not make them (needs root)"; exit 1; }
RT="$TMP/rt" # a tmpfs that stands for /dev/shm: sticky, everyone may write
MOUNTED=""
APID=""
cleanup() {
    engine_cleanup
    [ -n "$APID" ] && kill -TERM "$APID" 2>/dev/null && wait_gone "$APID" 10
    [ -n "$MOUNTED" ] && umount "$RT" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
engine_config </dev/null

# ---- a root engine's defaults -------------------------------------------------

tmpfs_base=""
for b in /run /dev/shm; do
    if [ "$(stat -f -c %T "$b" 2>/dev/null)" = tmpfs ]; then tmpfs_base=$b && break; fi
done
if [ -z "$tmpfs_base" ]; then
    fail "this machine has /run or /dev/shm on a tmpfs" "$(stat -f -c '%n %T' /run /dev/shm 2>&1)"
    exit 0
fi
start_engine
submit gate "while [ ! -e go ]; do sleep 0.05; done; exit 7" \
    '.fault_tolerance = {backoff_limit: 0, rules: [{exit_codes: "7", action: "FAIL_JOB"}]}'
check "gate runs" wait_for gate .state RUNNING
uid=$(field gate .uid)
target=$(readlink "$STATE/status")
check "STATE/status links to a directory in $tmpfs_base ($target)" \
    sh -c "case '$target' in '$tmpfs_base'/trainjobd-0/*) exit 0 ;; *) exit 1 ;; esac"
check "...on a tmpfs" test "$(stat -f -c %T "$STATE/status/")" = tmpfs
check "...0700 and root's, as is the directory above it" \
    test "$(stat -c '%a %U' "$target") $(stat -c '%a %U' "$(dirname "$target")")" = "700 root 700 root"
check "...where the worker's pid and claim files are" \
    sh -c "ls '$target/$uid'.1.*.pid '$target/$uid'.1.*.claim >/dev/null"
check "...and none on the state dir's disk" \
    test -z "$(find "$STATE" -xdev \( -name '*.pid' -o -name '*.claim' \) -print)"
# The engine holds the directory open (a flock): no descriptor of it reaches
# the shim, or through it the worker.
read -r gate_shim _ <"$(ls "$target/$uid".1.*.pid | head -1)"
check "...which the worker's shim holds no descriptor of (engine pid $ENGINE_PID, shim $gate_shim)" \
    sh -c '[ -d "/proc/$1/fd" ] && ! ls -l "/proc/$1/fd" | grep -qF " -> $2"' - "$gate_shim" "$target"
check "...while the engine does" sh -c 'ls -l "/proc/$1/fd" | grep -qF " -> $2"' - "$ENGINE_PID" "$target"
check "the engine says where they are" grep -q "worker status files in $target (tmpfs)" "$TMP/engine.log"

# A kill -9, the worker's end while no engine runs, and a restart.
stop_engine KILL
touch "$STATE/work/$uid/go"
sleep 0.5
start_engine
check "after a kill -9 and a restart the worker's end is read: FAILED" wait_for gate .state FAILED 10
api GET "$JOBS/gate/workers"
check "...with its exit code 7" test "$(jq -r '.workers[0].exit_code' "$TMP/body")" = 7
check "...through the same directory" test "$(readlink "$STATE/status")" = "$target"
# no_files_of DIR UID : waits (5 s at most) until DIR holds no file of job UID
no_files_of() {
    _n=0
    while ls "$1/$2".* >/dev/null 2>&1; do
        [ $_n -lt 100 ] || return 1
        sleep 0.05
        _n=$((_n + 1))
    done
}
check "...whose files of that worker go" no_files_of "$target" "$uid"

stop_engine TERM
check "a clean stop with no worker leaves no directory on the tmpfs" test ! -e "$target"
start_engine
check "the next start makes it again" test "$(stat -f -c %T "$STATE/status/")" = tmpfs
submit again "exit 0"
check "...and a job runs through it" wait_for again .state SUCCEEDED 20
# A state directory removed under a killed engine (as a suite removes its
# $TMP) leaves its files on the tmpfs; the next engine to make its own
# directory there sweeps them: no engine can adopt them any more.
submit left "while [ ! -e go ]; do sleep 0.05; done"
check "left runs" wait_for left .state RUNNING
left_dir=$(readlink "$STATE/status")
stop_engine KILL
end_workers "$STATE"
mkdir "$TMP/state1" # before the removal, so as not to get its inode (and name) again
rm -rf "$STATE"
check "...a killed engine's status files stay after its state dir went" \
    sh -c "ls '$left_dir'/*.pid >/dev/null"
STATE="$TMP/state1"
start_engine
check "the next engine's start removes them" test ! -e "$left_dir"
check "...and not its own" test -d "$(readlink "$STATE/status")"
stop_engine TERM

# ---- shared ground: another user's directory where the engine's would go -----

mkdir -p "$RT"
if ! mount -t tmpfs -o size=8m,mode=1777 tmpfs "$RT" 2>"$TMP/mount.err"; then
    fail "mount a tmpfs for --runtime-dir" "$(cat "$TMP/mount.err") (run as root)"
    exit 0
fi
MOUNTED=1
chmod 0711 "$TMP"
as_user "$TJ_BOB" mkdir -m 0700 "$RT/trainjobd-0"
STATE="$TMP/state2"
ENGINE_ARGS="--runtime-dir $RT"
start_engine
check "an engine whose place in the runtime dir is $TJ_BOB's starts" test -S "$SOCK"
check "...keeps its status files in its state dir" test -d "$STATE/status" -a ! -L "$STATE/status"
check "...saying why" grep -q "no tmpfs: $RT/trainjobd-0: owned by another user" "$TMP/engine.log"
submit shared "exit 0"
check "...and runs jobs" wait_for shared .state SUCCEEDED 20
check "...writing nothing into $TJ_BOB's directory" test -z "$(ls -A "$RT/trainjobd-0")"
stop_engine TERM
rmdir "$RT/trainjobd-0"
as_user "$TJ_BOB" sh -c "mkdir -m 0700 '$RT/bobs' && ln -s '$RT/bobs' '$RT/trainjobd-0'"
STATE="$TMP/state3"
start_engine
check "a symlink of $TJ_BOB's in its place is not followed" \
    grep -q "$RT/trainjobd-0: not a directory (a symlink?)" "$TMP/engine.log"
submit linked "exit 0"
check "...the engine runs jobs from its state dir" wait_for linked .state SUCCEEDED 20
check "...and $TJ_BOB's directory stays empty" test -z "$(ls -A "$RT/bobs")"
stop_engine TERM

# ---- a user's own engine: the state dir, or the tmpfs she names ---------------
# $XDG_RUNTIME_DIR (and a user's files in /dev/shm) go with the user's last
# session: a user's engine is given no tmpfs unless --runtime-dir names one.

A="$TMP/alice"
shared_tmp "$A"
chown "$TJ_ALICE" "$A"
mkdir -m 0700 "$RT/alice"
chown "$TJ_ALICE" "$RT/alice"
# alice_engine ARG… : starts alice's engine with XDG_RUNTIME_DIR=$RT/alice; APID its pid
alice_engine() {
    # The engine's own pid (as_user runs in a subshell here): written before its exec.
    as_user "$TJ_ALICE" env XDG_RUNTIME_DIR="$RT/alice" sh -c 'echo $$ >"$1/engine.pid" &&
        d=$1 b=$2 && shift 2 && exec "$b" --foreground --config "$d/engine.yaml" \
        --state-dir "$d/state" --socket "$d/engine.sock" "$@"' sh "$A" "$TRAINJOBD_BIN" "$@" \
        >>"$TMP/alice.log" 2>&1 &
    engine_up "$A/engine.sock" 10
    APID=$(cat "$A/engine.pid")
}
# alice_stop : stops alice's engine by its pid
alice_stop() {
    kill -TERM "$APID" && wait_gone "$APID" 10
    check "$TJ_ALICE's engine stops" sh -c "! kill -0 $APID 2>/dev/null"
    APID=""
}
alice_engine
check "$TJ_ALICE's engine keeps its status files in its state dir by default" \
    test -d "$A/state/status" -a ! -L "$A/state/status"
check "...and makes nothing in her runtime dir" test -z "$(ls -A "$RT/alice")"
alice_stop
rm -rf "$A/state/status"
alice_engine --runtime-dir "$RT/alice"
alice_target=$(readlink "$A/state/status")
check "with --runtime-dir her engine keeps them in that tmpfs ($alice_target)" \
    sh -c "case '$alice_target' in '$RT/alice/trainjobd-'$(id -u "$TJ_ALICE")/*) exit 0 ;; *) exit 1 ;; esac"
check "...a directory of hers, 0700" test "$(stat -c '%a %U' "$alice_target")" = "700 $TJ_ALICE"
run as_user "$TJ_BOB" ls "$alice_target"
expect_rc "...that $TJ_BOB cannot list" 2
alice_stop
