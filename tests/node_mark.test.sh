# A node marked for a job can be unmarked (issue 22): `trainjob node mark`
# on a one-node pool says the job will have no node left, the job waits with
# a reason naming the way out, `trainjob node unmark` lifts the mark and the
# job runs again. Two Unix users against one trainjobd: bob, a member of the
# workspace, may not lift the mark on alice's job.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh
tj=$TRAINJOB_BIN
unset TRAINJOB_ENDPOINT XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR
E="--endpoint http+unix://$SOCK --workspace default"

# wait_state NAME STATE : bounded wait (30 s) for a job's state.
wait_state() {
    _n=0
    until "$tj" $E get job "$1" -o json 2>/dev/null | grep -q "\"state\": \"$2\""; do
        _n=$((_n + 1)); [ $_n -gt 300 ] && return 1; sleep 0.1
    done
}

tj_users || { fail "the test users exist" "tj_users could not make them (needs root)"; exit 1; }
engine_config <<EOF
  members: [$TJ_ALICE, $TJ_BOB]
EOF
start_engine || { fail "the engine starts" "$(cat "$TMP/engine.log")"; exit 1; }
shared_tmp "$TMP/run"
chmod 0666 "$SOCK"
cat >"$TMP/held.yaml" <<EOF
name: held
display_name: held
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: "sleep 300"
EOF
chmod 0644 "$TMP/held.yaml"
run as_user "$TJ_ALICE" "$tj" $E submit -f "$TMP/held.yaml"
expect_rc "$TJ_ALICE submits a job on the pool's only node" 0
wait_state held RUNNING || fail "the job runs" "$("$tj" $E get jobs 2>&1)"

run as_user "$TJ_ALICE" "$tj" $E node mark held n1
expect_rc "node mark JOB NODE marks the node for the job" 0
expect_grep "...and says so" "$TMP/out" "node n1 marked unschedulable for job held"
run "$tj" $E get events held
expect_grep "...warning that the pool has no other node for it" "$TMP/out" "no other node of pool std can take it"
expect_grep "...and naming the way out" "$TMP/out" "trainjob node unmark held n1"

run as_user "$TJ_ALICE" "$tj" $E stop held
wait_state held SUSPENDED || fail "the job stops" "$("$tj" $E get jobs 2>&1)"
run as_user "$TJ_ALICE" "$tj" $E start held
wait_state held QUEUEING || fail "the started job queues" "$("$tj" $E get jobs 2>&1)"
sleep 1
run "$tj" $E get job held -o json
expect_grep "a job whose only node is marked waits, its reason naming the unmark" "$TMP/out" "node n1 marked unschedulable for this job (trainjob node unmark lifts it)"

run as_user "$TJ_BOB" "$tj" $E node unmark held n1
expect_rc "$TJ_BOB may not lift the mark on $TJ_ALICE's job" 1
run "$tj" $E get job held -o json
expect_grep "...and the job still waits" "$TMP/out" '"state": "QUEUEING"'

run as_user "$TJ_ALICE" "$tj" $E node unmark held n1
expect_rc "node unmark JOB NODE lifts the mark" 0
expect_grep "...and says so" "$TMP/out" "node n1 unmarked for job held"
if wait_state held RUNNING; then pass "...and the job runs on the node again"; else
    fail "...and the job runs on the node again" "$("$tj" $E get job held -o json 2>&1 | grep -i reason)"; fi
run "$tj" $E get events held
expect_grep "...an event saying who lifted it" "$TMP/out" "node n1 unmarked for this job by $TJ_ALICE"

run as_user "$TJ_ALICE" "$tj" $E node unmark held n1
expect_rc "unmarking a node not marked is refused" 1
expect_grep "...saying it is not marked" "$TMP/err" "'n1' is not marked unschedulable for job held"
run as_user "$TJ_ALICE" "$tj" $E node mark held nosuch
expect_rc "marking a node the engine does not have is refused" 1
run "$tj" node frob held n1
expect_rc "node with another subcommand is a usage error" 2
run "$tj" node --help
expect_grep "node --help says what unmark is for" "$TMP/out" "unmark lifts the mark"
run as_user "$TJ_ALICE" "$tj" $E stop held
