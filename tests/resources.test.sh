# What a worker may use (issue 10, items 18 and 3): workers sharing a
# simulated node each get their own devices; and where the machine lets
# trainjobd use cgroups, a worker's memory, CPU and process count are held to
# its resource spec — a worker that allocates far past its memory is killed
# (137), a fork bomb stops at the process limit — and the catalog says
# whether limits are enforced. The engine runs here with --demo on a temp
# state dir and is stopped by pid; workers are ended by their process groups.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

# The demo's simulated nodes and specs, a small spec (64 MiB, 1 CPU) and a
# small process limit.
engine_config nodes="sim 4 16" pools="local sim-public:public" specs="small:0:1:64 sim-gpu-1:1:2:4096 sim-gpu-8:8:16:32768" volume <<EOF2
worker_process_limit: 40
EOF2

start_engine

# --- item 18: 4 replicas of sim-gpu-1 packed on one node ---------------------
JOB=$(jq -n '{
    display_name: "gpus", framework: "PYTORCH_DDP",
    resource_pool: {name: "sim-public", zone: "local-1z", vpc_id: "vpc-local"},
    scheduling: {scoring_strategy: {type: "MOST_ALLOCATED"}},
    roles: [{total_replicas: 4, resource_spec: [{name: "sim-gpu-1"}], image_path: "local/host",
             startup_script: "echo \"devices=$CUDA_VISIBLE_DEVICES\""}]
}')
api POST "$JOBS?training_job_name=gpus" "$JOB"
check "the 4-replica sim-gpu-1 job is created" test "$code" = 200
check "the 4-replica job succeeds" wait_for gpus .state SUCCEEDED
api GET "$JOBS/gpus/workers"
check "all 4 workers were packed on one node" \
    test "$(jq '[.workers[].node] | unique | length' "$TMP/body")" = 1
check "the 4 workers hold 4 distinct devices" \
    test "$(jq '[.workers[].devices] | unique | length' "$TMP/body")" = 4
check "each worker holds exactly one device" \
    test "$(jq '[.workers[].devices | select(test("^[0-7]$"))] | length' "$TMP/body")" = 4
seen=""
for w in master-0 worker-0 worker-1 worker-2; do
    api GET "/trainjob/v1/workspaces/default/trainingJobs/gpus/workers/$w/logs"
    seen="$seen $(sed -n 's/^devices=//p' "$TMP/body")"
done
check "each worker sees its own CUDA_VISIBLE_DEVICES" \
    test "$(echo $seen | tr ' ' '\n' | grep -c .)" = 4 -a \
    "$(echo $seen | tr ' ' '\n' | sort -u | grep -c .)" = 4

# --- item 3: limits from the resource spec, held by cgroups -------------------
# What this machine allows, found here independently of trainjobd: a cgroup v1
# hybrid (writable memory, cpu and pids hierarchies), v2 with the controllers
# delegated to us, or neither.
expected_mode() {
    if [ -w /sys/fs/cgroup/memory/cgroup.procs ] && [ -w /sys/fs/cgroup/pids/cgroup.procs ] &&
        [ -w /sys/fs/cgroup/cpu/cgroup.procs ]; then
        echo v1
        return
    fi
    own=$(sed -n 's/^0:://p' /proc/self/cgroup)
    for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        f="$m$own/cgroup.controllers"
        [ "$own" = / ] && f="$m/cgroup.controllers"
        if [ -f "$f" ] && grep -qw memory "$f" && grep -qw pids "$f" && grep -qw cpu "$f"; then
            echo v2
            return
        fi
    done
    echo none
}
MODE=$(expected_mode)
api GET /trainjob/v1/catalog
LIMITS=$(jq -r .resource_limits "$TMP/body")
case $MODE in
v1) check "the catalog says limits are enforced with cgroup v1" \
    test "$LIMITS" = "enforced (cgroup v1: memory, cpu, pids)" ;;
v2) check "the catalog says limits are enforced with cgroup v2" \
    test "$LIMITS" = "enforced (cgroup v2: memory, cpu, pids)" ;;
*) check "the catalog says limits are not enforced, and why" \
    sh -c 'case "$1" in "not enforced: "?*) exit 0 ;; esac; exit 1' - "$LIMITS" ;;
esac
if grep -qF "resource limits: $LIMITS" "$TMP/engine.log"; then
    pass "the engine's log says the same at start-up"
else
    fail "the engine's log says the same at start-up" "$(head -c 600 "$TMP/engine.log")"
fi

# small JOBNAME SCRIPT : a one-worker job on the 64 MiB spec, no restarts
small() {
    jq -n --arg script "$2" '{
        display_name: "limits", framework: "PYTORCH_DDP", resource_pool: {name: "local"},
        roles: [{total_replicas: 1, resource_spec: [{name: "small"}], image_path: "local/host",
                 startup_script: $script}],
        fault_tolerance: {backoff_limit: 0}
    }' >"$TMP/job.json"
    api POST "$JOBS?training_job_name=$1" "$(cat "$TMP/job.json")"
}

# worker_pgid JOBNAME : the process group of its running worker (from the shim's pid file)
worker_pgid() {
    uid=$(field "$1" .uid)
    for f in "$STATE"/status/"$uid".*.pid; do
        [ -f "$f" ] && read -r _ pgid _ <"$f" && echo "$pgid" && return 0
    done
    return 1
}

# count_group : how many processes are in process group $PG (field 5 of
# /proc/PID/stat, counted after the command's closing parenthesis)
count_group() {
    cat /proc/[0-9]*/stat 2>/dev/null |
        awk -v pg="${PG:-none}" '{ sub(/.*\) /, ""); if ($3 == pg) n++ } END { print n + 0 }'
}

if [ "$MODE" != none ]; then
    # 1. Memory: a worker of the 64 MiB spec building a ~400 MB shell string.
    small hog 'x=$(head -c 400000000 /dev/zero | tr "\0" a); echo "survived ${#x}"'
    check "the memory hog is created" test "$code" = 200
    check "the memory hog is killed: the job FAILED" wait_for hog .state FAILED 60
    api GET "$JOBS/hog/workers"
    check "the memory hog exited 137" test "$(jq '.workers[0].exit_code' "$TMP/body")" = 137
    api GET "/trainjob/v1/workspaces/default/trainingJobs/hog/events"
    check "the event gives 137 its meaning" grep -qF "exited 137 (killed (SIGKILL/OOM))" "$TMP/body"
    api GET "/trainjob/v1/workspaces/default/trainingJobs/hog/workers/master-0/logs"
    check "the hog never survived" test "$(grep -c survived "$TMP/body")" = 0
    check "the worker's log says the memory limit killed it" \
        grep -qF "reached the memory limit of its resource spec" "$TMP/body"

    # 2. Processes: a bounded fork bomb (300 sleepers) under a limit of 40.
    # (A shell exits when it cannot fork: the bomb runs in a subshell, so the worker lives on.)
    small bomb '(i=0; while [ $i -lt 300 ]; do sleep 30 & i=$((i + 1)); done) 2>/dev/null; echo forked; exec sleep 30'
    check "the fork bomb is created" test "$code" = 200
    check "the fork bomb runs" wait_for bomb .state RUNNING 20
    PG=""
    n=0
    while [ $n -lt 50 ] && [ -z "$PG" ]; do PG=$(worker_pgid bomb) || sleep 0.1; n=$((n + 1)); done
    # Let it try for at most 10 s: it has stopped forking once it printed "forked".
    n=0
    while [ $n -lt 100 ]; do
        api GET "/trainjob/v1/workspaces/default/trainingJobs/bomb/workers/master-0/logs"
        grep -q forked "$TMP/body" && break
        sleep 0.1
        n=$((n + 1))
    done
    CG=$(sed -n 's/^[0-9]*:pids:\(.*\)/\1/p' "/proc/$PG/cgroup" 2>/dev/null)
    PROCS=$(count_group)
    check "the fork bomb stays within 40 processes (found $PROCS)" \
        test -n "$PG" -a "$PROCS" -gt 1 -a "$PROCS" -le 40
    if [ "$MODE" = v1 ] && [ -n "$CG" ]; then
        check "the worker's pids cgroup holds pids.max 40" \
            test "$(cat "/sys/fs/cgroup/pids$CG/pids.max")" = 40
        MEMCG=$(sed -n 's/^[0-9]*:memory:\(.*\)/\1/p' "/proc/$PG/cgroup")
        check "the worker's memory cgroup holds 64 MiB" \
            test "$(cat "/sys/fs/cgroup/memory$MEMCG/memory.limit_in_bytes")" = 67108864
        CPUCG=$(sed -n 's/^[0-9]*:cpu:\(.*\)/\1/p' "/proc/$PG/cgroup")
        check "the worker's cpu cgroup holds 1 CPU" \
            test "$(cat "/sys/fs/cgroup/cpu$CPUCG/cpu.cfs_quota_us")" = 100000
    fi
    api POST "$JOBS:batchStop" '{"training_job_names": ["bomb"]}'
    check "the fork bomb stops" wait_for bomb .state SUSPENDED 20
    # Everything of it has ended, its cgroups too.
    n=0
    while [ $n -lt 50 ] && [ "$(count_group)" -gt 0 ]; do sleep 0.1; n=$((n + 1)); done
    check "nothing of the fork bomb is left" test "$(count_group)" = 0
    if [ -n "$CG" ]; then
        n=0
        while [ $n -lt 50 ] && [ -d "/sys/fs/cgroup/pids$CG" ]; do sleep 0.1; n=$((n + 1)); done
        check "the worker's cgroup was removed" test ! -d "/sys/fs/cgroup/pids$CG"
    fi
    [ -n "$PG" ] && kill -KILL "-$PG" 2>/dev/null

    # 3. On v1 the bomb's cgroups, emptied, are kept as a spare (renamed ~N in the
    # engine's subtree); the next worker of the same spec gets them renamed to its
    # name, the limits already there.
    if [ "$MODE" = v1 ] && [ -n "$CG" ]; then
        OWN=${CG%/*}
        check "the ended worker's cgroups are kept as a spare (pids, memory, cpu)" sh -c \
            'ls -d "$1"/~* && ls -d "$2"/~* && ls -d "$3"/~*' - "/sys/fs/cgroup/pids$OWN" \
            "/sys/fs/cgroup/memory${MEMCG%/*}" "/sys/fs/cgroup/cpu${CPUCG%/*}"
        SPARES=$(find "/sys/fs/cgroup/pids$OWN" -mindepth 1 -maxdepth 1 -type d -name '~*' | wc -l)
        small again 'exec sleep 30'
        check "the next worker of the spec runs" wait_for again .state RUNNING 20
        PG=""
        n=0
        while [ $n -lt 50 ] && [ -z "$PG" ]; do PG=$(worker_pgid again) || sleep 0.1; n=$((n + 1)); done
        UID_AGAIN=$(field again .uid)
        CG2=$(sed -n 's/^[0-9]*:pids:\(.*\)/\1/p' "/proc/$PG/cgroup" 2>/dev/null)
        MEMCG2=$(sed -n 's/^[0-9]*:memory:\(.*\)/\1/p' "/proc/$PG/cgroup" 2>/dev/null)
        CPUCG2=$(sed -n 's/^[0-9]*:cpu:\(.*\)/\1/p' "/proc/$PG/cgroup" 2>/dev/null)
        check "its cgroup is named for it ($CG2)" test "$CG2" = "$OWN/$UID_AGAIN.master-0-1"
        check "a spare served it: one fewer is left" test \
            "$(find "/sys/fs/cgroup/pids$OWN" -mindepth 1 -maxdepth 1 -type d -name '~*' | wc -l)" \
            = $((SPARES - 1))
        check "its cgroups hold the spec's limits (40 processes, 64 MiB, 1 CPU)" test \
            "$(cat "/sys/fs/cgroup/pids$CG2/pids.max" "/sys/fs/cgroup/memory$MEMCG2/memory.limit_in_bytes" \
                "/sys/fs/cgroup/cpu$CPUCG2/cpu.cfs_quota_us" | tr '\n' ' ')" = "40 67108864 100000 "
        api POST "$JOBS:batchStop" '{"training_job_names": ["again"]}'
        check "the next worker stops" wait_for again .state SUSPENDED 20
        [ -n "$PG" ] && kill -KILL "-$PG" 2>/dev/null
    fi
fi

# --- without cgroups: said plainly, and workers still run ----------------------
stop_engine
# Its jobs have all ended: a clean stop takes the engine's own cgroups with it.
if [ "$MODE" = v1 ] && [ -n "$CG" ]; then
    check "the stopped engine left no cgroup of its own (pids, memory, cpu)" \
        test ! -d "/sys/fs/cgroup/pids${CG%/*}" -a ! -d "/sys/fs/cgroup/memory${MEMCG%/*}" \
        -a ! -d "/sys/fs/cgroup/cpu${CPUCG%/*}" -a -d "/sys/fs/cgroup/pids${CG%/*/*}"
fi
mkdir -p "$TMP/nocgroup"
# The second engine's log on its own, so that only it can say "not enforced".
mv "$TMP/engine.log" "$TMP/engine1.log"
start_engine --cgroup-root "$TMP/nocgroup"
api GET /trainjob/v1/catalog
LIMITS=$(jq -r .resource_limits "$TMP/body")
check "without cgroups the catalog says 'not enforced' with the reason" \
    sh -c 'case "$1" in "not enforced: "*"no cgroup v2 hierarchy"*) exit 0 ;; esac; exit 1' - "$LIMITS"
expect_grep "without cgroups the engine's log says so" "$TMP/engine.log" "resource limits: not enforced: "
small plain 'echo ran'
check "without cgroups a worker still runs" wait_for plain .state SUCCEEDED 20

# --- a worker that ends while its engine is down leaves no cgroup -------------
# Nothing records that end (the engine keeps workers running when it stops),
# so the shim removes the worker's cgroups itself once it finds no engine
# holding the state directory's lock.

# cg_dirs PID : the directories of PID's cgroups below trainjob/, one a line
cg_dirs() {
    while IFS=: read -r _ ctl path; do
        case $path in */trainjob/*) ;; *) continue ;; esac
        case ",$ctl," in
        *,pids,*) echo "/sys/fs/cgroup/pids$path" ;;
        *,memory,*) echo "/sys/fs/cgroup/memory$path" ;;
        *,cpu,*) echo "/sys/fs/cgroup/cpu$path" ;;
        ,,) [ "$MODE" = v2 ] && for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
            [ -d "$m$path" ] && echo "$m$path"
        done ;;
        esac
    done <"/proc/$1/cgroup"
}
# none_left DIR… : none of the directories is there
none_left() {
    for _d; do [ ! -d "$_d" ] || return 1; done
}
# orphan NAME WHAT : starts job NAME sleeping on a fresh engine; PG its worker's
# group, DIRS its cgroups
orphan() {
    start_engine
    small "$1" 'exec sleep 60'
    check "$2 runs" wait_for "$1" .state RUNNING 20
    PG=""
    n=0
    while [ $n -lt 50 ] && [ -z "$PG" ]; do PG=$(worker_pgid "$1") || sleep 0.1; n=$((n + 1)); done
    DIRS=$(cg_dirs "$PG" 2>/dev/null)
}
# ended_without_engine WHAT : ends the worker of PG, then checks DIRS are gone
ended_without_engine() {
    kill -TERM "-$PG" 2>/dev/null
    n=0
    while [ $n -lt 50 ] && ! none_left $DIRS; do sleep 0.1; n=$((n + 1)); done
    check "$1" none_left $DIRS
}
if [ "$MODE" != none ]; then
    stop_engine
    mv "$TMP/engine.log" "$TMP/engine2.log"
    orphan orphan "a worker to outlive its engine"
    want=3
    [ "$MODE" = v2 ] && want=1
    check "its cgroups are there while it runs ($(echo $DIRS))" \
        test "$(echo "$DIRS" | grep -c /trainjob/)" = "$want"
    stop_engine
    check "the engine stops, the worker running on" test "$(count_group)" -gt 0
    ended_without_engine "once it ends, its shim removed its cgroups (no engine would)"
    # The engine's own subtree (e<hash>) held only that worker: it goes too.
    PARENTS=$(for d in $DIRS; do dirname "$d"; done | sort -u)
    check "and the stopped engine's own cgroup with them ($(echo $PARENTS | tr ' ' '\n' | sed 's,.*/,,' | sort -u | tr '\n' ' '))" \
        sh -c 'for d; do case ${d##*/} in e????????????????) ;; *) exit 1 ;; esac; [ ! -d "$d" ] || exit 1; done' - $PARENTS

    # The same with the state directory gone meanwhile (as a test's $TMP, or
    # a user's rm -rf): no lock file to hold, and no engine either.
    orphan orphan2 "another worker to outlive its engine"
    stop_engine
    mv "$STATE" "$TMP/state-gone"
    ended_without_engine "with its state dir gone, its shim still removed its cgroups"
    mv "$TMP/state-gone" "$STATE"
    for d in $DIRS; do rmdir "${d%/*}" 2>/dev/null; done # the subtree stays for an engine to come
fi
