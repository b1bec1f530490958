# trainjobd's state under attack (issue 10 #8, #9, #10), with a real engine,
# real workers and, as root, a real full file system:
#  - deleting jobs removes their logs, status files and directories (a
#    symlink a worker planted is unlinked, not followed); a restart collects
#    what a crash left of jobs the store no longer has, and only that;
#  - a crash-looping job restarts at growing intervals, says "back-off" in
#    its reason, and keeps at most limits.events_per_job events;
#  - on a full disk (a small tmpfs as the state dir) a worker that succeeds
#    still ends SUCCEEDED, through a kill -9 and restart of the engine too,
#    and no state is ever shown that a restart does not give back;
#  - on a full disk a stop, a delete, a priority change, a node mark and a
#    start are refused (503, saying the change could not be saved) and
#    nothing is done: no worker is signalled, and after a kill -9 and a
#    restart the jobs are as they were (RUNNING, not FAILED 143 through
#    their fault rule; the deleted one still there); a stop acknowledged
#    just before a kill -9 ends SUSPENDED after the restart, a delete gone;
#  - on a full disk a stop trainjobd decides itself (a fault rule's
#    RESTART_JOB) waits for its intent to be saved, signalling no worker:
#    after a kill -9 and a restart the job restarts (not FAILED 143 through
#    its fault rule); without a crash it goes on once the disk has room.
# The engine is started here on temp dirs and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

mkdir -p "$TMP/precious"
echo keep >"$TMP/precious/file"
MOUNTED=""

cleanup() {
    engine_cleanup
    rm -f "$STATE"/fill* 2>/dev/null
    if [ -n "$MOUNTED" ]; then
        n=0
        while ! umount "$STATE" 2>/dev/null && [ $n -lt 30 ]; do sleep 0.1; n=$((n + 1)); done
        grep -q " $STATE " /proc/mounts && umount -l "$STATE"
    fi
    [ -n "$KEEP" ] && echo "kept $TMP" && return; rm -rf "$TMP"
}

engine_config <<EOF2
limits:
  restart_delay_ms: 400
  restart_delay_max_ms: 1600
  restart_reset_after_ms: 60000
  events_per_job: 40
  save_retry_ms: 200
EOF2

# Entries under the state dir that belong to uid.
leftovers() { find "$STATE" -name "*$1*" 2>/dev/null | wc -l; }

# ---- #10: deleting jobs removes their files -----------------------------------

start_engine
check "engine starts" test -S "$SOCK"
# A worker that plants what an rm -r must not follow, and a directory it cannot read.
EVIL="ln -s $TMP/precious evil && ln -s / root && mkdir -p deep/a/b && touch deep/a/b/f && chmod 000 deep/a && echo bye"
for n in gone1 gone2 kept; do
    submit "$n" "$EVIL"
    check "$n accepted" test "$code" = 200
done
for n in gone1 gone2 kept; do
    check "$n succeeds" wait_for "$n" .state SUCCEEDED
done
U1=$(field gone1 .uid)
U2=$(field gone2 .uid)
UK=$(field kept .uid)
check "a job leaves files while it exists" test "$(leftovers "$U1")" -ge 2
check "its working directory holds the planted links" test -L "$STATE/work/$U1/evil"
api POST "$JOBS:batchDelete" '{"training_job_names": ["gone1", "gone2"]}'
check "delete accepted" test "$code" = 200
n=0
while [ $n -lt 100 ] && [ "$(field gone2 .code)" != 404 ] ; do sleep 0.1; n=$((n + 1)); done
sleep 0.2
check "deleted jobs leave nothing under the state dir" test "$(leftovers "$U1")$(leftovers "$U2")" = 00
check "the symlinked directory outside survives" test "$(cat "$TMP/precious/file")" = keep
check "the live job's files are untouched" test -f "$STATE/logs/$UK.master-0.log" -a -L "$STATE/work/$UK/evil"

# Orphans: what a crash between the store delete and the file removal leaves.
ORPHAN=0000018f00000000-orphan01
mkdir -p "$STATE/work/$ORPHAN/sub" "$STATE/platform/$ORPHAN" "$STATE/ssh/$ORPHAN"
ln -s "$TMP/precious" "$STATE/work/$ORPHAN/sub/link"
echo x >"$STATE/logs/$ORPHAN.worker-0.log"
echo x >"$STATE/logs/$ORPHAN.worker-0.log.1"
echo "exit_code 0" >"$STATE/status/$ORPHAN.1.worker-0"
echo "not a job" >"$STATE/logs/README"
stop_engine TERM
start_engine
check "orphans are collected at start-up" test "$(leftovers "$ORPHAN")" = 0
check "...without following their links" test "$(cat "$TMP/precious/file")" = keep
check "...and files not named for a job stay" test -f "$STATE/logs/README"
check "...and the live job's files stay" test -f "$STATE/logs/$UK.master-0.log" -a -d "$STATE/work/$UK"
check "the engine log says what it collected" grep -q "collecting the work files of job $ORPHAN" "$TMP/engine.log"

# ---- #9: a crash loop restarts at growing intervals, events stay bounded -------

submit loop 'exit 1' '.fault_tolerance = {backoff_limit: -1}'
check "crash-looping job accepted" test "$code" = 200
check "its reason shows the back-off" wait_for loop '.state_message // "" | test("^back-off [0-9]+m?s restarting failed master-0 [(]restart [0-9]+[)]$")' true 10
sleep 5
restarts=$(field loop .restart_count)
# 0, 400, 800, 1600, 1600 … ms: at most ~8 restarts in 7 s; unthrottled it made hundreds.
check "restarts are throttled ($restarts in ~7 s)" test "$restarts" -ge 3 -a "$restarts" -le 10
api GET "$JOBS/loop/events"
times=$(jq -r '[.events[] | select(.kind == "FAULT") | .time] | .[]' "$TMP/body")
intervals=$(echo "$times" | while read -r t; do date -d "$t" +%s.%N; done |
    awk 'NR > 1 { printf "%d\n", ($1 - prev) * 1000 } { prev = $1 }')
# Each restart waits at least its back-off: 0, 400, 800, 1600, 1600 … ms after the fault
# before it. Load can only lengthen an interval (the worker's start and run add to it),
# so the lower bounds are the checkable part; the upper side is the throttle count above.
check "restarts wait out growing back-offs (ms: $(echo $intervals))" sh -c "echo '$intervals' | awk 'BEGIN { want = 0 } { if (\$1 + 50 < want) bad = 1; want = NR == 1 ? 400 : (want * 2 > 1600 ? 1600 : want * 2) } END { exit bad || NR < 3 }'"
sleep 5
api GET "$JOBS/loop/events"
count=$(jq '.events | length' "$TMP/body")
check "events stay bounded per job ($count ≤ 41)" test "$count" -le 41
check "the folded ones are counted first" sh -c "jq -r '.events[0].message' '$TMP/body' | grep -q '^… [0-9,]* earlier events\\? folded'"
# A restarted engine does not know how many events a job has stored: the job's
# next events fold all the same.
stop_engine TERM
start_engine
before=$(field loop .restart_count)
n=0
while [ $n -lt 150 ] && [ "$(field loop .restart_count)" -lt $((before + 3)) ]; do sleep 0.1; n=$((n + 1)); done
api GET "$JOBS/loop/events"
count=$(jq '.events | length' "$TMP/body")
check "after a restart, events stay bounded ($count ≤ 41, $(($(field loop .restart_count) - before)) restarts since)" test "$count" -le 41
api POST "$JOBS:batchDelete" '{"training_job_names": ["loop"]}'
n=0
while [ $n -lt 100 ] && [ "$(field loop .code)" != 404 ] ; do sleep 0.1; n=$((n + 1)); done

# RESTART_POD loops back off too, and every failed pod is restarted, none starved.
submit pods 'exit 3' '.roles[0].total_replicas = 2 | .fault_tolerance = {backoff_limit: -1, rules: [{exit_codes: "3", action: "RESTART_POD"}]}'
check "a RESTART_POD loop says it backs off" wait_for pods '.state_message // "" | test("^back-off .* restarting failed")' true 10
sleep 3
curl -s --unix-socket "$SOCK" "http://x$JOBS/pods/workers" >"$TMP/body"
r0=$(jq '.workers[0].restarts' "$TMP/body")
r1=$(jq '.workers[1].restarts' "$TMP/body")
check "both pods keep being restarted ($r0 and $r1), at a throttled pace" \
    sh -c "[ $r0 -ge 2 ] && [ $r1 -ge 2 ] && [ $r0 -le 8 ] && [ $r1 -le 8 ]"
api POST "$JOBS:batchDelete" '{"training_job_names": ["pods"]}'
n=0
while [ $n -lt 100 ] && [ "$(field pods .code)" != 404 ] ; do sleep 0.1; n=$((n + 1)); done

# ---- #8: a zero-length engine.db does not start an empty engine ----------------

stop_engine TERM
cp "$STATE/engine.db" "$TMP/engine.db.saved"
: >"$STATE/engine.db"
rm -f "$STATE/engine.db-wal" "$STATE/engine.db-shm"
start_engine
check "an empty engine.db stops trainjobd" sh -c "! kill -0 $ENGINE_PID 2>/dev/null"
check "...saying which file and what to do" grep -q "engine.db is empty (0 bytes).*move it aside" "$TMP/engine.log"
ENGINE_PID=""
check "...and leaves the file as it was" test ! -s "$STATE/engine.db"
cp "$TMP/engine.db.saved" "$STATE/engine.db"
start_engine

# ---- #8: a full disk never turns an outcome into another -----------------------

stop_engine TERM
end_workers "$STATE"
rm -rf "$STATE"
mkdir -p "$STATE"
if ! mount -t tmpfs -o size=8m,mode=0700 tmpfs "$STATE" 2>"$TMP/mount.err"; then
    fail "full disk: mount a small tmpfs for the state dir" "$(cat "$TMP/mount.err") (run as root)"
    exit 0
fi
MOUNTED=1
# Worker status files on the same small disk (--runtime-dir: the tmpfs that
# is the state dir), so filling it leaves no room for them either.
ENGINE_ARGS="--runtime-dir $STATE"
start_engine
check "engine starts on a small tmpfs" test -S "$SOCK"
check "...its worker status files on that disk too" \
    test "$(df -P "$STATE/status/" | awk 'NR == 2 { print $6 }')" = "$STATE"

fill_disk() { # fills $STATE to the last page
    dd if=/dev/zero of="$STATE/fill" bs=64k 2>/dev/null
    dd if=/dev/zero of="$STATE/fill2" bs=4k 2>/dev/null
    i=0
    while [ $i -lt 64 ] && dd if=/dev/zero of="$STATE/fill.$i" bs=512 count=1 2>/dev/null; do
        i=$((i + 1))
    done
}
free_disk() { rm -f "$STATE"/fill*; }

# A worker that ends (exit 0) when told, on a disk with no room left at all.
submit full1 "while [ ! -e go ]; do sleep 0.05; done; exit 0"
check "full1 runs" wait_for full1 .state RUNNING
fill_disk
check "the state dir is full" test "$(df -P "$STATE" | awk 'NR == 2 { print $4 }')" -eq 0
touch "$STATE/work/$(field full1 .uid)/go"
sleep 1.5
check "a worker whose status cannot be written yet is not shown ended" test "$(field full1 .state)" = RUNNING
# The engine dies while the disk is full; the shim keeps the status in memory.
uid1=$(field full1 .uid)
stop_engine KILL
shim=$(cat "$STATE"/status/"$uid1".*.pid 2>/dev/null | awk '{ print $1 }')
check "the shim waits for space instead of giving up" kill -0 "$shim"
free_disk
start_engine
check "after space returns and a restart: SUCCEEDED, not FAILED 137" wait_for full1 .state SUCCEEDED 20
check "...with exit code 0" test "$(curl -s --unix-socket "$SOCK" "http://x$JOBS/full1/workers" | jq -r '.workers[0].exit_code')" = 0

# The store refuses the save while the status file lands: what is shown must be on disk.
submit full2 "while [ ! -e go ]; do sleep 0.05; done; exit 0"
check "full2 runs" wait_for full2 .state RUNNING
fill_disk
truncate -s -4096 "$STATE/fill" # room for the shim's status file (one page), none for SQLite
touch "$STATE/work/$(field full2 .uid)/go"
sleep 2
shown=$(field full2 .state)
stop_engine KILL
free_disk
start_engine
check "full2 shows RUNNING while its end cannot be saved (shown: $shown)" test "$shown" = RUNNING
check "full2 ends SUCCEEDED after space returns" wait_for full2 .state SUCCEEDED 20

# A save refused while the engine lives: it keeps the last saved state, then catches up.
submit full3 "while [ ! -e go ]; do sleep 0.05; done; exit 0"
check "full3 runs" wait_for full3 .state RUNNING
fill_disk
truncate -s -4096 "$STATE/fill"
touch "$STATE/work/$(field full3 .uid)/go"
sleep 2
shown=$(field full3 .state)
phase=$(curl -s --unix-socket "$SOCK" "http://x$JOBS/full3/workers" | jq -r '.workers[0].phase')
check "a refused save is logged, saying what is shown meanwhile" \
    grep -q "saving job full3: .*disk is full.*keeps showing its last saved state (RUNNING)" "$TMP/engine.log"
check "...and the job shows its last saved state, not the unsaved SUCCEEDED" test "$shown" = RUNNING
check "...its worker too (phase $phase)" test "$phase" = Running
free_disk
check "full3 ends SUCCEEDED once the disk has room" wait_for full3 .state SUCCEEDED 20
api GET "$JOBS/full3/events"
check "...and the event held meanwhile is recorded after the state it tells of" \
    sh -c "jq -r '.events[] | select(.kind == \"STATE\") | .message' '$TMP/body' | grep -q 'RUNNING → SUCCEEDED'"
stop_engine KILL
start_engine
check "...and a restart agrees" wait_for full3 .state SUCCEEDED 10

# ---- issue 20 #12: a request the disk cannot take is refused, not forgotten -----

V1=/trainjob/v1/workspaces/default/trainingJobs
# A worker that runs until signalled; its fault rule fails the job on 143
# (SIGTERM), so a stop taken for a fault would show as FAILED.
stoppable() {
    submit "$1" "while :; do sleep 0.05; done" \
        '.fault_tolerance = {backoff_limit: 3, rules: [{exit_codes: "143", action: "FAIL_JOB"}]}'
}
stoppable stop1
stoppable del1
check "stop1 runs" wait_for stop1 .state RUNNING
check "del1 runs" wait_for del1 .state RUNNING
fill_disk
api POST "$JOBS:batchStop" '{"training_job_names": ["stop1"]}'
check "on a full disk a stop is refused (503)" test "$code" = 503
check "...saying the stop could not be saved and nothing was done" \
    sh -c "jq -r .message '$TMP/body' | grep -q \"job 'stop1': the stop could not be saved, so nothing was changed or done\""
api POST "$JOBS:batchDelete" '{"training_job_names": ["del1"]}'
check "...a delete too (503)" test "$code" = 503
check "...saying so" sh -c "jq -r .message '$TMP/body' | grep -q 'the delete could not be saved'"
api PATCH "$JOBS/stop1?update_mask=scheduling.priority" '{"scheduling": {"priority": "HIGH"}}'
check "...a priority change too (503)" test "$code" = 503
node=$(curl -s --unix-socket "$SOCK" "http://x$JOBS/stop1/workers" | jq -r '.workers[0].node_name')
api POST "$V1/stop1:markNode" "{\"node\": \"$node\"}"
check "...and a node mark (503)" test "$code" = 503
sleep 0.5
check "...and the refused stop's worker was not signalled" test "$(field stop1 .state)" = RUNNING
free_disk
sleep 1 # saves the engine retries (save_retry_ms) would have happened by now
check "...nor the refused priority kept to be saved later" test "$(field stop1 .scheduling.priority)" = NORMAL
fill_disk
stop_engine KILL
free_disk
start_engine
sleep 1
check "after a kill -9 and a restart, the refused stop left stop1 RUNNING" test "$(field stop1 .state)" = RUNNING
check "...not FAILED through its fault rule (exit $(curl -s --unix-socket "$SOCK" "http://x$JOBS/stop1/workers" | jq -r '.workers[0].exit_code'))" \
    test "$(curl -s --unix-socket "$SOCK" "http://x$JOBS/stop1/workers" | jq -r '.workers[0].exit_code')" = null
check "...its priority still NORMAL" test "$(field stop1 .scheduling.priority)" = NORMAL
check "...and the refused delete left del1 there, RUNNING" test "$(field del1 .state)" = RUNNING

# Acknowledged, then killed at once: the intent was on disk before the SIGTERM.
api POST "$JOBS:batchStop" '{"training_job_names": ["stop1"]}'
stopped=$code
api POST "$JOBS:batchDelete" '{"training_job_names": ["del1"]}'
stop_engine KILL
check "with room again, the stop is acknowledged (200)" test "$stopped" = 200
check "...the delete too" test "$code" = 200
start_engine
check "a stop acknowledged just before a kill -9 ends SUSPENDED after the restart" \
    wait_for stop1 .state SUSPENDED 20
check "...not FAILED 143" test "$(field stop1 .state)" = SUSPENDED
n=0
while [ "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" "http://x$JOBS/del1")" != 404 ] && [ $n -lt 200 ]; do
    sleep 0.1
    n=$((n + 1))
done
check "a delete acknowledged just before a kill -9 is done after the restart" test $n -lt 200

# A start the disk cannot take is refused too; the job stays SUSPENDED.
fill_disk
api POST "$V1/stop1:start"
check "on a full disk a start is refused (503)" test "$code" = 503
free_disk
sleep 0.5
check "...and stop1 stays SUSPENDED" test "$(field stop1 .state)" = SUSPENDED
api POST "$V1/stop1:start"
check "...started once the disk has room" test "$code" = 200

# ---- issue 20: a stop trainjobd decides itself waits for its intent on disk -----
# master-0 (rank 0) exits 3 (RESTART_JOB) when it finds boom (and takes it);
# worker-0 (rank 1) runs until signalled and says so in termed.1 (a SIGTERM
# ends it 143: FAIL_JOB by its fault rule).
JOB_REPLICAS=2
submit fault1 'if [ "$RANK" = 0 ]; then
    while :; do
        if [ -e boom ]; then rm -f boom; exit 3; fi
        sleep 0.05
    done
fi
trap ": >termed.$RANK; exit 143" TERM
while :; do sleep 0.05; done' \
    '.fault_tolerance = {backoff_limit: 3, rules: [{exit_codes: "3", action: "RESTART_JOB"}, {exit_codes: "143", action: "FAIL_JOB"}]}'
JOB_REPLICAS=1
check "fault1 runs (2 workers)" wait_for fault1 .state RUNNING
W1="$STATE/work/$(field fault1 .uid)"
fill_disk
truncate -s -4096 "$STATE/fill" # room for master-0's status file, none for SQLite
: >"$W1/boom"
n=0
while ! grep -q "job fault1: its stop waits until the disk takes its intent" "$TMP/engine.log" && [ $n -lt 100 ]; do
    sleep 0.05
    n=$((n + 1))
done
check "on a full disk a fault rule's RESTART_JOB waits, saying why in the log" \
    grep -qF "job fault1: its stop waits until the disk takes its intent (master-0 exited 3: rule 1 (3 → RESTART_JOB) matched; restarting the job" "$TMP/engine.log"
sleep 1
check "...and signals no worker meanwhile (worker-0 still runs)" test ! -e "$W1/termed.1"
stop_engine KILL
free_disk
start_engine
n=0
while [ ! -e "$W1/termed.1" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
check "after a kill -9 and a restart the decision is made again from the saved end" test -e "$W1/termed.1"
check "...the job restarts and runs, not FAILED 143 through its fault rule" wait_for fault1 .state RUNNING 20
api GET "$JOBS/fault1/events"
check "...with the restart of the fault rule in its events" \
    sh -c "jq -r '.events[] | select(.kind == \"FAULT\") | .action' '$TMP/body' | grep -qx RESTART_JOB"
check "...and none failing the job" \
    sh -c "! jq -r '.events[] | select(.kind == \"FAULT\") | .action' '$TMP/body' | grep -qx FAIL_JOB"

# Held, then the disk has room again: the retry saves the intent and the stop goes on.
rm -f "$W1/termed.1"
restarts=$(field fault1 .restart_count)
fill_disk
truncate -s -4096 "$STATE/fill"
: >"$W1/boom"
n=0
while [ "$(grep -c "job fault1: its stop waits until the disk takes its intent" "$TMP/engine.log")" -lt 2 ] && [ $n -lt 100 ]; do
    sleep 0.05
    n=$((n + 1))
done
sleep 0.5
check "a held stop signals nothing while the disk is full" test ! -e "$W1/termed.1"
free_disk
n=0
while [ ! -e "$W1/termed.1" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
check "...and stops the workers once the retry saved it" test -e "$W1/termed.1"
check "...saying so in the log" grep -q "job fault1: its stop is saved; stopping its workers now" "$TMP/engine.log"
check "...then the job restarts (restart_count $restarts → $(field fault1 .restart_count))" \
    wait_for fault1 .restart_count $((restarts + 1)) 20
check "...and runs" wait_for fault1 .state RUNNING 20
