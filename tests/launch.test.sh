# Worker starts off the loop (issue 14): engine/launcher's thread makes the
# directories and cgroups and spawns each shim, so trainjobd answers requests
# while launches are slow — here each takes 2 s, made certain by
# TRAINJOBD_TEST_LAUNCH_DELAY_MS (on a loaded machine a spawn's exec and a
# cgroup mkdir took tens of ms each, and every request waited behind them) —
# and a start cancelled while its launch waits in the queue never runs.
# The engine is started here on a temp dir and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

engine_config </dev/null
export TRAINJOBD_TEST_LAUNCH_DELAY_MS=2000
start_engine

# ms_of CURL_ARGS… : the wall time of a request, in whole milliseconds (its reply in $TMP/reply)
ms_of() {
    curl -s -m 30 -o "$TMP/reply" -w '%{time_total}\n' --unix-socket "$SOCK" "$@" |
        awk '{ printf "%d\n", $1 * 1000 }'
}

other=$(job_json other 'sleep 600')
JOB_REPLICAS=4 submit slow 'sleep 600'
check "a job of 4 workers is accepted" test "$code" = 200
check "...and starts (4 launches of 2 s each to come)" wait_for slow .state STARTING 10

# While the launcher works through 8 s of launches, requests are answered at
# once: 10 GETs back to back from one curl, and a POST.
set --
i=0
while [ $i -lt 10 ]; do
    set -- "$@" -o /dev/null "http://x$JOBS/slow"
    i=$((i + 1))
done
worst=$(curl -s -m 30 -w '%{time_total}\n' --unix-socket "$SOCK" "$@" |
    awk '{ ms = $1 * 1000; if (ms > worst) worst = ms } END { printf "%d\n", worst }')
t=$(ms_of -X POST -H 'Content-Type: application/json' --data-binary "$other" \
    "http://x$JOBS?training_job_name=other")
[ "$t" -gt "$worst" ] && worst=$t
state=$(field slow .state)
echo "# slowest request $worst ms; the job $state after them"
if [ "$worst" -lt 1000 ] && [ "$state" = STARTING ]; then
    pass "launch: 10 GETs and a POST while 4 launches wait are answered at once"
else
    fail "launch: 10 GETs and a POST while 4 launches wait are answered at once" \
        "slowest $worst ms; the job $state after them"
fi
check "launch: the slow job runs once its launches are done" wait_for slow .state RUNNING 30
check "launch: so does the job posted meanwhile" wait_for other .state RUNNING 30

# A job deleted while its launches wait in the queue: none of its workers runs.
JOB_REPLICAS=3 submit gone "touch $TMP/gone-ran; sleep 600"
check "a job of 3 workers is accepted" test "$code" = 200
wait_for gone .state STARTING 10
uid=$(field gone .uid)
api POST "$JOBS:batchDelete" '{"training_job_names":["gone"]}'
check "launch: the job deleted while its launches wait is gone" wait_for gone .code 404 10
# Launches go in order: once a job posted after it runs, its launches were dealt with.
submit after 'sleep 600'
check "launch: a job posted after the delete runs" wait_for after .state RUNNING 30
if [ ! -e "$TMP/gone-ran" ] && ! ls "$STATE/status/$uid".* >/dev/null 2>&1; then
    pass "launch: no worker of the deleted job ran, and none of its files is left"
else
    fail "launch: no worker of the deleted job ran, and none of its files is left" \
        "$(ls "$TMP/gone-ran" "$STATE/status/$uid".* 2>&1)"
fi
