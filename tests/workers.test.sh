# trainjobd's hold on its workers, attacked with real processes: 50 workers
# starting at once while requests keep being answered, a shim that hangs, a
# stop while workers start, a shim killed while trainjobd runs (and while it
# is down), ready counts across restarts, and kill -9 of trainjobd at random
# moments during many starts (every worker runs exactly once).
#
# trainjobd runs with --shim pointing at a wrapper in front of the real shim:
# it hangs when $CTL/hang exists, starts the real shim $CTL/delay seconds
# late when that file holds a number, and holds the start's claim first for
# as long as $CTL/claimhang exists (10 s at most) — so starts can be caught
# in flight.
# The engine is started here and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

. tests/engine.sh

mkdir -p "$TMP/ctl" "$TMP/vol"
# Jobs of a root-run trainjobd run as a user of their own, never root: the
# volume is writable to them, as trainjobd makes one (1777), or the checks
# that a worker never wrote there would pass for the wrong reason.
chmod 1777 "$TMP/vol"
CTL="$TMP/ctl"
# Long enough for 50 shims to start one by one under AddressSanitizer on a
# loaded 2-core machine; the hung-shim check waits it out once.
START_TIMEOUT=8
ENGINE_ARGS="--start-timeout $START_TIMEOUT --shim $TMP/shim"
ENGINE_UP_SECONDS=5

engine_config nodes="cpu 200" specs=cpu-1:0:1:16 volume </dev/null
# The shim runs with the worker's environment only: its paths are written in.
cat >"$TMP/shim" <<EOF
#!/bin/sh
if [ -e "$CTL/hang" ]; then exec sleep 1000; fi
if [ -e "$CTL/claimhang" ]; then # hold the claim, as a slow shim would, until told, then go on
    prev=""
    for a in "\$@"; do [ "\$prev" = --status ] && st=\$a; prev=\$a; done
    echo \$\$ >"\$st.claim"
    n=0
    while [ -e "$CTL/claimhang" ] && [ \$n -lt 200 ]; do sleep 0.05; n=\$((n + 1)); done
    rm -f "\$st.claim"
fi
if [ -s "$CTL/delay" ]; then sleep "\$(cat "$CTL/delay")"; fi
exec "$TRAINJOB_SHIM" "\$@"
EOF
chmod +x "$TMP/shim"

# job NAME REPLICAS SCRIPT [JQ] : job_json's job with REPLICAS workers on
# cpu-1 and volume scratch ($TMP/vol) at /mnt/s
job() {
    JOB_REPLICAS=$2
    job_json "$1" "$3" '.mount = [{id: "scratch", mount_path: "/mnt/s"}] | '"${4:-.}"
}
# events_have NAME TEXT [SECONDS] : polls until an event of the job contains TEXT
events_have() {
    n=0
    limit=$(( ${3:-10} * 20 ))
    while [ $n -lt $limit ]; do
        curl -s --unix-socket "$SOCK" "http://x$JOBS/$1/events" | grep -qF -- "$2" && return 0
        sleep 0.05
        n=$((n + 1))
    done
    return 1
}

# pidfile NAME ATTEMPT WORKER : the shim's pid file of that start
pidfile() {
    echo "$STATE/status/$(field "$1" .uid).$2.$3.pid"
}

rand() { od -An -N1 -tu1 /dev/urandom | tr -d ' '; }

start_engine

# --- 22: 50 workers start at once; the engine answers meanwhile ---
echo 0.5 >"$CTL/delay"
api POST "$JOBS?training_job_name=fifty" "$(job fifty 50 'sleep 600')"
check "a 50-worker job is accepted" test "$code" = 200
check "...and placed (the scheduling pass has run)" wait_for fifty .state STARTING 5
api GET "$JOBS/fifty"
check "a GET is answered while its 50 shims are still starting" test "$code" = 200
check "...and says STARTING, not all ready" \
    test "$(jq -r '.state + " " + (.ready_workers < 50 | tostring)' "$TMP/body")" = "STARTING true"
api GET /trainjob/v1/catalog
check "the catalog is answered while they start" test "$code" = 200
rm -f "$CTL/delay"
check "the job is RUNNING once all 50 have reported" wait_for fifty .state RUNNING 20
check "...with 50 ready workers" test "$(field fifty .ready_workers)" = 50
api GET "$JOBS/fifty/events"
check "the events show STARTING → RUNNING" grep -q 'STARTING → RUNNING' "$TMP/body"
api POST "$JOBS:batchDelete" '{"training_job_names": ["fifty"]}'
n=0
while [ $n -lt 200 ] && [ "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" "http://x$JOBS/fifty")" != 404 ]; do
    sleep 0.05
    n=$((n + 1))
done
check "the 50-worker job is deleted" test $n -lt 200

# --- 22: a stop while workers start: what did not start never runs ---
echo 1 >"$CTL/delay"
api POST "$JOBS?training_job_name=stopme" "$(job stopme 3 "touch /mnt/s/ran.\$RANK; sleep 600")"
wait_for stopme .state STARTING 5
api POST "$JOBS:batchStop" '{"training_job_names": ["stopme"]}'
check "a stop while its workers start is accepted" test "$code" = 200
check "...and the job is SUSPENDED before any shim reported" wait_for stopme .state SUSPENDED 3
sleep 1.5 # the delayed shims have tried to start by now
check "...and none of its workers ever ran" test -z "$(ls "$TMP"/vol/ran.* 2>/dev/null)"
rm -f "$CTL/delay"

# --- 22: a shim that hangs: requests keep being answered, the start fails clearly ---
touch "$CTL/hang"
api POST "$JOBS?training_job_name=hang" "$(job hang 1 'sleep 600')"
wait_for hang .state STARTING 5
api GET "$JOBS/hang"
check "a GET is answered while a shim hangs" test "$code" = 200
api GET "$JOBS"
check "a list is answered while a shim hangs" test "$code" = 200
check "the hung start fails after --start-timeout" wait_for hang .state FAILED $((START_TIMEOUT + 5))
check "...saying why" events_have hang "did not report within $START_TIMEOUT s" 1
check "...naming the worker" events_have hang "could not start master-0" 1
check "...and trainjobd holds the claim, so the hung shim can never start it" \
    test "$(cat "$STATE/status/$(field hang .uid).1.master-0.claim")" = 0
rm -f "$CTL/hang"

# --- 7: a shim killed while trainjobd runs ---
api POST "$JOBS?training_job_name=shimkill" "$(job shimkill 1 'sleep 600' '.fault_tolerance = {backoff_limit: 1}')"
wait_for shimkill .state RUNNING 10
read -r shim pgid _ticks <"$(pidfile shimkill 1 master-0)"
kill -9 "$shim"
check "a killed shim is noticed within 2 s (an event names it)" events_have shimkill "trainjob-shim (pid $shim) died" 2
check "...its worker is killed with it" wait_gone "-$pgid"
check "...the fault rules restart the job" wait_for shimkill .restart_count 1 5
check "...which runs again" wait_for shimkill .state RUNNING 10
read -r shim pgid _ticks <"$(pidfile shimkill 2 master-0)"
kill -9 "$shim"
check "killed again, past backoff_limit 1, the job FAILS" wait_for shimkill .state FAILED 5
check "...and that worker is gone too" wait_gone "-$pgid"
api GET "$JOBS/shimkill/workers"
check "the worker shows exit 137" test "$(jq -r '.workers[0].exit_code' "$TMP/body")" = 137

# --- 7: a shim killed while trainjobd is down: noticed on adopt, worker killed ---
api POST "$JOBS?training_job_name=downkill" "$(job downkill 1 'sleep 600' '.fault_tolerance = {backoff_limit: 0}')"
wait_for downkill .state RUNNING 10
read -r shim pgid _ticks <"$(pidfile downkill 1 master-0)"
stop_engine TERM
kill -9 "$shim"
start_engine
check "a shim killed while trainjobd was down is noticed on restart" wait_for downkill .state FAILED 5
check "...with an event naming it" events_have downkill "trainjob-shim (pid $shim) died" 1
check "...and its orphaned worker is killed" wait_gone "-$pgid"

# --- 19: ready counts survive a restart of trainjobd ---
api POST "$JOBS?training_job_name=ready2" "$(job ready2 2 'sleep 600')"
api POST "$JOBS?training_job_name=failed1" "$(job failed1 1 'exit 3' '.fault_tolerance = {backoff_limit: 0}')"
wait_for ready2 .state RUNNING 10
wait_for failed1 .state FAILED 10
check "a RUNNING 2-worker job has 2 ready" test "$(field ready2 .ready_workers)" = 2
check "a FAILED 1-worker job has 0 ready" test "$(field failed1 .ready_workers)" = 0
stop_engine TERM
start_engine
check "after a restart the RUNNING job still has 2/2 ready" \
    test "$(field ready2 '.state + " " + (.ready_workers | tostring)')" = "RUNNING 2"
check "after a restart the FAILED job still has 0 ready" test "$(field failed1 .ready_workers)" = 0
api GET "$JOBS/ready2/workers"
check "...matching the workers' phases" \
    test "$(jq '[.workers[] | select(.phase == "Running")] | length' "$TMP/body")" = 2
stop_engine KILL
start_engine
check "after kill -9 and restart the counts are the same" \
    test "$(field ready2 .ready_workers) $(field failed1 .ready_workers)" = "2 0"
api POST "$JOBS:batchDelete" '{"training_job_names": ["ready2", "failed1", "shimkill", "downkill", "hang", "stopme"]}'

# --- 6: a shim holds the claim while trainjobd is killed: the restart awaits it, starts nothing ---
echo 1 >"$CTL/claimhang"
api POST "$JOBS?training_job_name=await1" "$(job await1 1 'sleep 600')"
wait_for await1 .state STARTING 5
claim="$STATE/status/$(field await1 .uid).1.master-0.claim"
n=0
# the shim writes its claim once bwrap is under way: seconds on a loaded machine
while [ $n -lt 600 ] && [ ! -s "$claim" ]; do sleep 0.05; n=$((n + 1)); done
check "the start of await1 holds its claim" test -s "$claim"
stop_engine KILL
start_engine # it has looked at the start once it answers
rm -f "$CTL/claimhang"
check "a start whose shim held the claim across kill -9 is adopted when it reports" \
    wait_for await1 .state RUNNING 10
check "...as attempt 1: trainjobd started no second copy" test -f "$(pidfile await1 1 master-0)"
check "...and says it waited for it" grep -q "await1: master-0: a shim holds attempt 1" "$TMP/engine.log"
api POST "$JOBS:batchDelete" '{"training_job_names": ["await1"]}'

# --- 6: kill -9 of trainjobd at random moments during many starts ---
# Each worker appends "<job> <rank>" to runs; every one must appear exactly once.
: >"$TMP/vol/runs"
chmod 0666 "$TMP/vol/runs" # appended to by every job's user
ITER=30
k=0
while [ $k -lt $ITER ]; do
    r=$(rand)
    if [ $((r % 3)) -ne 0 ]; then echo "0.$((r % 30))" >"$CTL/delay"; else rm -f "$CTL/delay"; fi
    api POST "$JOBS?training_job_name=k$k" "$(job "k$k" 2 "echo \"\$ECP_JOB_NAME \$RANK\" >>/mnt/s/runs")"
    sleep "0.$(( $(rand) % 40 ))"
    stop_engine KILL
    start_engine
    k=$((k + 1))
done
rm -f "$CTL/delay"
k=0
all=0
while [ $k -lt $ITER ]; do
    wait_for "k$k" .state SUCCEEDED 20 && all=$((all + 1))
    k=$((k + 1))
done
check "every job started around a kill -9 of trainjobd SUCCEEDED ($all/$ITER)" test "$all" = "$ITER"
check "no worker ran twice" test -z "$(sort "$TMP/vol/runs" | uniq -d)"
check "every worker ran exactly once ($(wc -l <"$TMP/vol/runs")/$((ITER * 2)) runs)" \
    test "$(sort -u "$TMP/vol/runs" | wc -l)" = $((ITER * 2)) -a "$(wc -l <"$TMP/vol/runs")" = $((ITER * 2))
if grep -q "never started; starting it again" "$TMP/engine.log"; then
    echo "note: some kills landed between a recorded start and its shim's claim"
fi
