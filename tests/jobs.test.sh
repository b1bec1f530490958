# trainjob's job verbs against a real trainjobd, as a user runs them:
# submit, get (jobs, job, workers, events), logs, stop, start, delete; the
# exit status of each outcome; a file with errors never reaching the server;
# an explicit endpoint never started; and the default context starting the
# local engine on demand.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
tj=$TRAINJOB_BIN
: "${TRAINJOBD_BIN:=$(dirname "$tj")/trainjobd}"
export TRAINJOBD_BIN

# Nothing of the caller's may leak in: no config, no endpoint, no runtime dir.
unset TRAINJOB_ENDPOINT XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR
export HOME="$TMP"
sock="$TMP/run/engine.sock"
E="--endpoint http+unix://$sock"
engine_pid=""
auto_pid=""

# Stops what this test started, by pid: jobs first (their workers outlive the engine).
cleanup() {
    if [ -n "$engine_pid" ]; then
        "$tj" $E delete sleeper >/dev/null 2>&1
        kill "$engine_pid" 2>/dev/null
        wait "$engine_pid" 2>/dev/null
    fi
    if [ -n "$auto_pid" ]; then
        kill "$auto_pid" 2>/dev/null
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

# wait_for SECONDS CMD… : runs CMD every 0.1 s until it succeeds; fails after SECONDS
wait_for() {
    limit=$(($1 * 10))
    shift
    i=0
    while [ "$i" -lt "$limit" ]; do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# job_in_state NAME STATE : the job's JSON says it is in STATE
job_in_state() {
    "$tj" $E get job "$1" -o json 2>/dev/null | grep -q "\"state\": \"$2\""
}

# job_gone NAME : get job says not found (exit 1)
job_gone() {
    "$tj" $E get job "$1" >/dev/null 2>&1
    [ $? -eq 1 ]
}

mkdir -p "$TMP/run"
"$TRAINJOBD_BIN" --foreground --demo --grace 1 --socket "$sock" --state-dir "$TMP/state" \
    --config "$TMP/engine.yaml" >"$TMP/engine.log" 2>&1 &
engine_pid=$!
if wait_for 10 test -S "$sock"; then pass "trainjobd listens"; else
    fail "trainjobd listens" "no socket after 10 s: $(tail -n 5 "$TMP/engine.log")"
    exit 1
fi

# ---- validate against the engine's catalog: every error at once -----------

sed -e 's/^  name: local$/  name: nowhere/' -e 's/- name: cpu-1$/- name: cpu-999/' \
    -e 's/^name: resnet50-ddp$/name: off-catalog/' examples/pytorch-ddp.yaml >"$TMP/off.yaml"
run "$tj" validate "$TMP/off.yaml"
expect_rc "offline, a file naming a pool the engine lacks is valid" 0
run "$tj" $E validate --catalog "$TMP/off.yaml"
expect_rc "validate --catalog checks it against the engine's catalog" 1
expect_grep "...naming the pool" "$TMP/err" "resource_pool.name"
sed -e 's/^  name: local$/  name: nowhere/' -e 's/^name: resnet50-ddp$/name: off-catalog/' \
    -e 's/^    id: .*/    id: no-such-volume/' -e 's/- name: cpu-1$/- name: cpu-999/' \
    examples/pytorch-ddp.yaml >"$TMP/off.yaml"
sed -i 's/^  name: nowhere$/  name: local/' "$TMP/off.yaml"
run "$tj" $E submit -f "$TMP/off.yaml"
expect_rc "submit refuses it before sending" 1
expect_grep "...naming the spec" "$TMP/err" "resource_spec[0].name"
expect_grep "...and the volume, at once" "$TMP/err" "mount[0].id"
run "$tj" $E get job off-catalog
expect_rc "...and nothing was created" 1

# ---- a job file on standard input, read once (issue 23) --------------------

sed -e 's/^name: resnet50-ddp$/name: from-stdin/' examples/pytorch-ddp.yaml >"$TMP/stdin.yaml"
run sh -c "cat '$TMP/stdin.yaml' | '$tj' validate -"
expect_rc "cat job.yaml | validate - reads standard input" 0
expect_grep "...and finds it valid" "$TMP/out" "-: valid"
run sh -c "cat '$TMP/stdin.yaml' | '$tj' $E validate --catalog -"
expect_rc "...against the engine's catalog too" 0
run sh -c "cat '$TMP/off.yaml' | '$tj' $E submit -f -"
expect_rc "an off-catalog file on standard input is refused" 1
expect_grep "...every error at once: the spec" "$TMP/err" "-:"
expect_grep "...and the volume" "$TMP/err" "mount[0].id"
expect_no_grep "...not read twice" "$TMP/err" "changed while being read"
run sh -c "cat '$TMP/stdin.yaml' | '$tj' $E submit -f -"
expect_rc "cat job.yaml | submit -f - creates the job" 0
expect_grep "...saying so" "$TMP/out" "job from-stdin created"
expect_no_grep "...not read twice" "$TMP/err" "changed while being read"
run "$tj" $E get job from-stdin
expect_rc "...and the engine has it" 0
"$tj" $E delete from-stdin >/dev/null 2>&1
sed -e 's/^name: resnet50-ddp$/name: bad-stdin/' -e 's/^    total_replicas: .*/    total_replicas: 0/' \
    examples/pytorch-ddp.yaml >"$TMP/bad-stdin.yaml"
# Aimed at no server at all: reaching for one would exit 3 with "cannot reach".
run sh -c "cat '$TMP/bad-stdin.yaml' | '$tj' --endpoint 'http+unix://$TMP/nothing-here.sock' submit -f -"
expect_rc "a file on standard input with errors of its own is refused" 1
expect_grep "...placed as -:LINE:COL" "$TMP/err" "-:14:"
expect_no_grep "...asking no server" "$TMP/err" "cannot reach"

# ---- submit, list, wait, workers, logs, events ---------------------------

run "$tj" $E submit -f examples/pytorch-ddp.yaml
expect_rc "submit the DDP example" 0
expect_grep "submit says created" "$TMP/out" "job resnet50-ddp created (QUEUEING)"

run "$tj" $E get jobs
expect_rc "get jobs" 0
expect_grep "get jobs has a header" "$TMP/out" "NAME"
expect_grep "get jobs lists the job" "$TMP/out" "resnet50-ddp"
expect_grep "get jobs shows the display name" "$TMP/out" "ResNet50-DDP-基线"
expect_grep "get jobs shows the restart budget" "$TMP/out" "/3"

if wait_for 20 job_in_state resnet50-ddp SUCCEEDED; then pass "the DDP job succeeds"; else
    fail "the DDP job succeeds" "$("$tj" $E get jobs -o wide 2>&1)"
fi

run "$tj" $E get workers resnet50-ddp
expect_rc "get workers" 0
if awk '$1 == "master-0" && $2 == "master" && $4 == "Succeeded" && $6 == "0" { ok = 1 }
        END { exit !ok }' "$TMP/out"; then pass "master-0 exited 0"; else
    fail "master-0 exited 0" "$(cat "$TMP/out")"
fi
if awk '$1 == "worker-0" && $4 == "Succeeded" && $6 == "0" { ok = 1 } END { exit !ok }' \
    "$TMP/out"; then pass "worker-0 exited 0"; else
    fail "worker-0 exited 0" "$(cat "$TMP/out")"
fi

run "$tj" $E get workers resnet50-ddp -o json
expect_rc "get workers -o json" 0
expect_grep "workers as JSON" "$TMP/out" '"name": "worker-0"'

run "$tj" $E logs resnet50-ddp
expect_rc "logs of the first worker" 0
expect_grep "master-0 is rank 0" "$TMP/out" "rank 0 of 2"

run "$tj" $E logs resnet50-ddp -w worker-0
expect_rc "logs -w worker-0" 0
expect_grep "worker-0 is rank 1" "$TMP/out" "rank 1 of 2"

run "$tj" $E logs resnet50-ddp --tail 1
expect_rc "logs --tail 1" 0
if [ "$(wc -l <"$TMP/out")" -eq 1 ]; then pass "--tail 1 prints one line"; else
    fail "--tail 1 prints one line" "$(cat "$TMP/out")"
fi

run "$tj" $E logs resnet50-ddp -w worker-9
expect_rc "logs of a worker that does not exist" 1
expect_grep "the missing worker is named" "$TMP/err" "worker-9"

run "$tj" $E get events resnet50-ddp
expect_rc "get events" 0
expect_grep "events: created" "$TMP/out" "CREATED"
expect_grep "events: succeeded" "$TMP/out" "RUNNING → SUCCEEDED"

run "$tj" $E get job resnet50-ddp
expect_rc "get job prints YAML" 0
expect_grep "the job as YAML" "$TMP/out" "state: SUCCEEDED"

run "$tj" $E get jobs --state SUCCEEDED -o json
expect_rc "get jobs --state -o json" 0
expect_grep "the filtered list has the job" "$TMP/out" '"name": "resnet50-ddp"'

run "$tj" $E get jobs --state RUNNING
expect_rc "an empty filtered list is fine" 0
expect_no_grep "the empty list has no job" "$TMP/out" "resnet50-ddp"

cat >"$TMP/ticker.yaml" <<'YAML'
workspace_name: default
name: ticker
display_name: ticker
framework: PYTORCH_DDP
resource_pool: {name: local}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: for i in 1 2 3; do echo "line $i"; sleep 0.5; done
YAML
run "$tj" $E submit -f "$TMP/ticker.yaml"
expect_rc "submit the ticker" 0
wait_for 20 job_in_state ticker RUNNING
run timeout 20 "$tj" $E logs -f ticker
expect_rc "logs -f ends by itself when the job ends" 0
expect_grep "logs -f saw the last line" "$TMP/out" "line 3"

# ---- what the server refuses, what never reaches it ----------------------

run "$tj" $E submit -f examples/pytorch-ddp.yaml
expect_rc "submitting the same name again fails" 1
expect_grep "the name is taken" "$TMP/err" "trainjob: name: already used"

cat >"$TMP/bad-codes.yaml" <<'YAML'
workspace_name: default
name: bad-codes
display_name: demo
framework: PYTORCH_DDP
resource_pool: {name: local}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: echo hi
fault_tolerance:
  backoff_limit: 2
  rules:
    - exit_codes: "1,256"
      action: RESTART_JOB
YAML
# Aimed at no server at all: reaching for one would exit 3 with "cannot reach".
run "$tj" --endpoint "http+unix://$TMP/nothing-here.sock" submit -f "$TMP/bad-codes.yaml"
expect_rc "a bad exit-code list: exit 1" 1
expect_grep "the bad code is placed at FILE:LINE:COL" "$TMP/err" \
    "bad-codes.yaml:14:22: error: fault_tolerance.rules[0].exit_codes: 256 is out of range 1-255"
expect_no_grep "no server was contacted" "$TMP/err" "cannot reach"
run "$tj" $E get job bad-codes
expect_rc "the bad job does not exist" 1

run "$tj" $E submit
expect_rc "submit without a file is a usage error" 2

run "$tj" $E get job no-such-job
expect_rc "get job of an unknown name exits 1" 1
expect_grep "not found is said" "$TMP/err" "not found"

run "$tj" $E get bogus
expect_rc "get of an unknown kind is a usage error" 2

run "$tj" $E get jobs --state NAPPING
expect_rc "an unknown --state is a usage error" 2

# ---- stop, start, delete -------------------------------------------------

cat >"$TMP/sleeper.yaml" <<'YAML'
name: sleeper
display_name: sleeper
framework: PYTORCH_DDP
resource_pool: {name: local}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: sleep 30
YAML
# --workspace fills the workspace the file leaves out, before or after the verb.
run "$tj" $E submit --workspace default -f "$TMP/sleeper.yaml"
expect_rc "submit the sleeper" 0
expect_grep "the sleeper is created" "$TMP/out" "job sleeper created"
# issue 12: the workspace is the one chosen, as kubectl's namespace; a file naming another is refused.
run "$tj" $E submit --workspace elsewhere -f "$TMP/ticker.yaml"
expect_rc "a file naming another workspace than --workspace is refused" 2
expect_grep "...saying both" "$TMP/err" "names workspace_name 'default', but the workspace chosen is 'elsewhere'"
run "$tj" $E --workspace elsewhere get job ticker
expect_rc "...and nothing was created there" 1

# issue 12: every field of ACP's TrainingJob is a field of a job file, and comes back from get.
cat >"$TMP/fields.yaml" <<'YAML'
workspace_name: default
name: fields
display_name: fields
framework: PYTORCH_DDP
resource_pool: {name: local}
scheduling: {scoring_strategy: {type: LEAST_ALLOCATED}}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: "true"
barrier: {enable_ethernet_ping: true, enable_roce_mesh_ping: false}
async_checkpoint: {max_ckpt_rounds: 2}
lme: {enable_warmingup: true, max_retries: 1}
fine_tuning_specs: '{"method": "lora"}'
YAML
run "$tj" $E validate "$TMP/fields.yaml"
expect_rc "async_checkpoint, lme, fine_tuning_specs, barrier, scoring_strategy are file fields" 0
run "$tj" $E submit -f "$TMP/fields.yaml"
expect_rc "...and are submitted" 0
run "$tj" $E get job fields -o json
if [ "$(jq -c '[.async_checkpoint.max_ckpt_rounds, .lme.enable_warmingup, .lme.max_retries,
        .fine_tuning_specs, .barrier.enable_roce_mesh_ping, .scheduling.scoring_strategy.type]' \
        "$TMP/out")" = '[2,true,1,"{\"method\": \"lora\"}",false,"LEAST_ALLOCATED"]' ]; then
    pass "get job -o json keeps every one of them"
else
    fail "get job -o json keeps every one of them" "$(head -c 600 "$TMP/out")"
fi
run "$tj" $E get job fields -o yaml
expect_grep "...and -o yaml too" "$TMP/out" "max_ckpt_rounds: 2"

if wait_for 20 job_in_state sleeper RUNNING; then pass "the sleeper runs"; else
    fail "the sleeper runs" "$("$tj" $E get jobs -o wide 2>&1)"
fi

run "$tj" $E stop sleeper no-such-job
expect_rc "stop with an unknown name exits 1" 1
expect_grep "stop says stopping" "$TMP/out" "job sleeper stopping"
expect_grep "stop names the unknown job" "$TMP/err" "job no-such-job not found"

if wait_for 20 job_in_state sleeper SUSPENDED; then pass "the stopped job is SUSPENDED"; else
    fail "the stopped job is SUSPENDED" "$("$tj" $E get jobs -o wide 2>&1)"
fi
run "$tj" $E get job sleeper -o json
if grep -q '"faulty_workers": *[1-9]' "$TMP/out"; then
    fail "a worker stopped by the user is no faulty worker" "$(cat "$TMP/out")"
else pass "a worker stopped by the user is no faulty worker"; fi

run "$tj" $E stop sleeper
expect_rc "stopping a stopped job is not an error" 0
expect_grep "nothing to stop" "$TMP/out" "nothing to stop"

run "$tj" $E start sleeper
expect_rc "start the stopped job" 0
expect_grep "start says queued" "$TMP/out" "job sleeper started (QUEUEING)"
# STARTING until its shim reports, which it does once the sandbox is set up.
if job_in_state sleeper QUEUEING || job_in_state sleeper STARTING || job_in_state sleeper RUNNING; then
    pass "the started job is queued, starting or running"
else
    fail "the started job is queued, starting or running" "$("$tj" $E get jobs 2>&1)"
fi

run "$tj" $E start sleeper
expect_rc "starting a job that is already started exits 0" 0
expect_grep "start says it already was" "$TMP/out" "is already started"

run "$tj" $E delete sleeper
expect_rc "delete the sleeper" 0
expect_grep "delete says deleted" "$TMP/out" "job sleeper deleted"
if wait_for 20 job_gone sleeper; then pass "the deleted job is gone"; else
    fail "the deleted job is gone" "$("$tj" $E get job sleeper 2>&1)"
fi
run "$tj" $E get job sleeper
expect_grep "get job of the deleted job says not found" "$TMP/err" "not found"

run "$tj" $E delete sleeper
expect_rc "deleting it again exits 1" 1

# ---- an explicit endpoint is never started --------------------------------

mkdir -p "$TMP/h3/run"
run env HOME="$TMP/h3" XDG_RUNTIME_DIR="$TMP/h3/run" "$tj" --endpoint http+unix:///nonexistent.sock get jobs
expect_rc "an unreachable --endpoint exits 3" 3
expect_grep "it says cannot reach" "$TMP/err" "cannot reach http+unix:///nonexistent.sock"
run env HOME="$TMP/h3" XDG_RUNTIME_DIR="$TMP/h3/run" \
    TRAINJOB_ENDPOINT=http+unix:///nonexistent.sock "$tj" get jobs
expect_rc "an unreachable \$TRAINJOB_ENDPOINT exits 3" 3
if [ -e "$TMP/h3/run/trainjob/engine.sock" ] || [ -e "$TMP/h3/.local/state/trainjob/engine" ]; then
    fail "no trainjobd was started for an explicit endpoint" "$(ls -R "$TMP/h3")"
else
    pass "no trainjobd was started for an explicit endpoint"
fi

# ---- a context file ------------------------------------------------------

mkdir -p "$TMP/.config/trainjob"
cat >"$TMP/.config/trainjob/config.yaml" <<YAML
current_context: test
contexts:
  - name: test
    endpoint: http+unix://$sock
    driver: trainjobd
    workspace: default
  - name: broken
    endpoint: http+unix:///nonexistent.sock
    driver: trainjobd
YAML
run "$tj" get job resnet50-ddp
expect_rc "the current context's endpoint is used" 0
run "$tj" get jobs --context broken
expect_rc "--context picks another (unreachable) context" 3
cat >"$TMP/.config/trainjob/config.yaml" <<'YAML'
contexts:
  - name: test
    endpont: http+unix:///x.sock
YAML
run "$tj" get jobs
expect_rc "a bad config file is a usage error" 2
expect_grep "config errors are placed" "$TMP/err" \
    "config.yaml:3:5: error: contexts[0].endpont: unknown field; did you mean endpoint?"
rm -f "$TMP/.config/trainjob/config.yaml"

# ---- the default context starts the local engine -------------------------

h2="$TMP/h2"
mkdir -p "$h2/run"
run env HOME="$h2" XDG_RUNTIME_DIR="$h2/run" "$tj" get jobs
expect_rc "get jobs with no engine running starts one" 0
log="$h2/.local/state/trainjob/engine/trainjobd.log"
auto_pid=$(sed -n 's/.*listening on .* (pid \([0-9]*\)).*/\1/p' "$log" 2>/dev/null | tail -n 1)
if [ -n "$auto_pid" ] && [ -S "$h2/run/trainjob/engine.sock" ]; then
    pass "the started engine listens on the default socket"
else
    fail "the started engine listens on the default socket" "$(cat "$log" 2>&1)"
fi
run env HOME="$h2" XDG_RUNTIME_DIR="$h2/run" "$tj" get jobs
expect_rc "the next call finds it running" 0
if [ "$(grep -c 'listening on' "$log" 2>/dev/null)" -eq 1 ]; then
    pass "only one engine was started"
else
    fail "only one engine was started" "$(cat "$log")"
fi
# A start that cannot happen (the state dir is held by the engine above, on
# another socket): trainjobd's own words come back in the client's one error
# and never straight to the terminal, where a full-screen program may draw.
mkdir -p "$h2/run2"
run env HOME="$h2" XDG_RUNTIME_DIR="$h2/run2" "$tj" get jobs
expect_grep "a start refused by the state lock says why" "$TMP/err" "is in use by trainjobd pid $auto_pid"
if [ "$(grep -c 'in use' "$TMP/err")" = 1 ] && ! grep -q '^trainjobd:' "$TMP/err"; then
    pass "...in the client's error only, not written by trainjobd itself"
else
    fail "...in the client's error only, not written by trainjobd itself" "$(cat "$TMP/err")"
fi
