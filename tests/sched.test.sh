# Scheduling passes in a real trainjobd (issue 14): a POST with many jobs
# waiting is decided against the running and reserving jobs alone (a pass
# over added jobs, checked against a pass over every job by
# TRAINJOBD_SCHED_VERIFY, which aborts the engine on a difference); a burst of
# POSTs from many connections shares passes; and what waited runs once the
# capacity frees. Passes are counted in the engine's log (TRAINJOBD_SCHED_LOG).
# The engine is started here on a temp dir and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

LOG="$TMP/engine.log"
WAITING=100
BURST=20

# The engine may be stopped (SIGSTOP) when a check fails.
cleanup() {
    [ -z "$ENGINE_PID" ] || kill -CONT "$ENGINE_PID" 2>/dev/null
    engine_cleanup
    rm -rf "$TMP"
}

engine_config nodes="sim 1 16" specs="gpu-8:8:2:1024 gpu-1:1:1:256 gpu-4:4:1:256" </dev/null
export TRAINJOBD_SCHED_LOG=1 TRAINJOBD_SCHED_VERIFY=1
start_engine

# body SPEC SCRIPT [REPLICAS] : a job of one worker, or REPLICAS
body() {
    printf '{"display_name":"x","framework":"PYTORCH_DDP","resource_pool":{"name":"std"},"roles":[{"total_replicas":%d,"resource_spec":[{"name":"%s"}],"image_path":"local/host","startup_script":"%s"}]}' "${3:-1}" "$1" "$2"
}

# post NAME SPEC SCRIPT [REPLICAS] : prints the HTTP status
post() {
    curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" -X POST \
        "http://x$JOBS?training_job_name=$1" --data-binary "$(body "$2" "$3" "${4:-1}")"
}

state_of() { field "$1" .state; }

# count STATE : how many jobs are in STATE
count() {
    curl -s --unix-socket "$SOCK" --get --data-urlencode "filter=state='$1'" \
        --data-urlencode page_size=1 "http://x$JOBS" | jq -r '.total_size // 0'
}

passes() {
    grep -c "scheduling pass" "$LOG"
}

# failed_why : each failed job with its message
failed_why() {
    curl -s --unix-socket "$SOCK" --get --data-urlencode "filter=state='FAILED'" "http://x$JOBS" |
        jq -r '.training_jobs[]? | "\(.name): \(.state_message)"'
}

# The node's 8 GPUs taken by one running job: every job after it waits.
code=$(post big gpu-8 "sleep 600")
wait_for big .state RUNNING 10
if [ "$(state_of big)" = RUNNING ]; then pass "sched: a job holding the node runs"; else
    fail "sched: a job holding the node runs" "$code, $(state_of big)"
fi

n=1
bad=0
while [ $n -le $WAITING ]; do
    [ "$(post "w$n" gpu-1 true)" = 200 ] || bad=$((bad + 1))
    n=$((n + 1))
done
[ "$(post last gpu-1 true)" = 200 ] || bad=$((bad + 1))
# the pass the last POST asked for is in the log once the job shows its reason
i=0
while [ $i -lt 100 ] && [ "$(field last .state_message)" = "waiting for the scheduler" ]; do
    sleep 0.05
    i=$((i + 1))
done
last=$(grep "scheduling pass" "$LOG" | tail -1)
full=$(grep -c "scheduling pass over every job" "$LOG")
case "$last" in
*"over added jobs: 2 of $((WAITING + 2)) jobs") pass "sched: a POST with $WAITING jobs waiting is decided with the running job alone" ;;
*) fail "sched: a POST with $WAITING jobs waiting is decided with the running job alone" "$bad POSTs failed; last pass: $last" ;;
esac
# the start-up's pass, the big job's start, its worker's news: a few passes over every job, not one per POST
if [ "$full" -le 5 ]; then pass "sched: $WAITING POSTs, $full passes over every job"; else
    fail "sched: $WAITING POSTs, $full passes over every job" "$(grep "scheduling pass" "$LOG" | tail -5)"
fi
expect_grep "sched: a waiting job says why" /dev/stdin "needs 1 GPU, 0 free" <<EOF
$(field last .state_message)
EOF

# A burst from many connections while the engine is stopped: it finds them all
# at once, and passes once per loop turn, not once per POST.
kill -STOP "$ENGINE_PID"
before=$(passes)
pids=""
n=1
while [ $n -le $BURST ]; do
    post "b$n" gpu-1 true >/dev/null &
    pids="$pids $!"
    n=$((n + 1))
done
# connected: each queued connection shows the socket's path in /proc/net/unix
i=0
while [ $i -lt 100 ] && [ "$(grep -cF "$SOCK" /proc/net/unix)" -le $BURST ]; do
    sleep 0.05
    i=$((i + 1))
done
sleep 0.2 # each curl writes its request right after connecting
kill -CONT "$ENGINE_PID"
for p in $pids; do wait "$p"; done
i=0
while [ $i -lt 100 ] && [ "$(field "b$BURST" .state_message)" = "waiting for the scheduler" ]; do
    sleep 0.05
    i=$((i + 1))
done
burst=$(($(passes) - before))
if [ "$burst" -ge 1 ] && [ "$burst" -le $((BURST / 2)) ]; then
    pass "sched: $BURST POSTs at once, $burst passes"
else
    fail "sched: $BURST POSTs at once, $burst passes" "$(grep "scheduling pass" "$LOG" | tail -8)"
fi

# The capacity frees: everything that waited runs to the end.
api POST "$JOBS:batchDelete" '{"training_job_names":["big"]}'
want=$((WAITING + 1 + BURST))
i=0
while [ $i -lt 600 ] && [ "$(count SUCCEEDED)" -lt $want ]; do
    sleep 0.1
    i=$((i + 1))
done
done_count=$(count SUCCEEDED)
if [ "$done_count" -eq $want ]; then pass "sched: all $want waiting jobs ran once the node freed"; else
    fail "sched: all $want waiting jobs ran once the node freed" "delete $code; $done_count SUCCEEDED, $(count QUEUEING) QUEUEING, $(count FAILED) FAILED: $(failed_why)"
fi
if kill -0 "$ENGINE_PID" 2>/dev/null; then pass "sched: every pass over added jobs agreed with a pass over every job"; else
    fail "sched: every pass over added jobs agreed with a pass over every job" "$(grep -F "not a pass over every job" "$LOG")"
fi

# One worker of a running job ends and its GPUs are free while the other
# runs on: a job waiting for them starts without waiting for another event.
post pair gpu-4 'test $RANK = 0 && sleep 3 && exit 0; sleep 600' 2 >/dev/null
wait_for pair .state RUNNING 10
post half gpu-4 'sleep 600' >/dev/null
i=0
while [ $i -lt 100 ] && [ "$(field half .state_message)" = "waiting for the scheduler" ]; do
    sleep 0.05
    i=$((i + 1))
done
waited=$(field half .state_message)
wait_for half .state RUNNING 10
if [ "$waited" = "needs 4 GPUs, 0 free" ] && [ "$(state_of pair)" = RUNNING ] &&
    [ "$(state_of half)" = RUNNING ]; then
    pass "sched: a worker's end frees its GPUs for a waiting job"
else
    fail "sched: a worker's end frees its GPUs for a waiting job" "half said '$waited'; pair $(state_of pair), half $(state_of half): $(field half .state_message)"
fi
if kill -0 "$ENGINE_PID" 2>/dev/null; then pass "sched: every pass over added jobs agreed with a pass over every job"; else
    fail "sched: every pass over added jobs agreed with a pass over every job" "$(grep -F "not a pass over every job" "$LOG")"
fi
