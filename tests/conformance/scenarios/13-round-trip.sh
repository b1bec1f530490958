# get job -o yaml → rename → submit -f: the export validates, is accepted,
# and the new job is the same job (everything but its name, identity,
# state and times).
scenario_round_trip() {
    tj get job life-ok -o yaml >"$TMP/rt.yaml" 2>"$TMP/err"
    sed -e 's/^name: life-ok$/name: life-rt/' -e 's/^display_name: life-ok$/display_name: life-rt/' \
        "$TMP/rt.yaml" >"$TMP/jobs/life-rt.yaml"
    if grep -q '^name: life-rt$' "$TMP/jobs/life-rt.yaml"; then cf_pass "get job -o yaml exports the job"; else
        cf_fail "get job -o yaml exports the job" "$(head -c 300 "$TMP/rt.yaml" | tr '\n' '|') $(head -c 200 "$TMP/err")"
        return
    fi
    cf_run tj validate "$TMP/jobs/life-rt.yaml"
    cf_rc "the renamed export validates" 0
    cf_submit life-rt || return
    cf_expect_state "...and runs to its end" life-rt "SUCCEEDED|FAILED" 60
    spec='del(.name, .display_name, .uid, .id, .state, .state_message, .restart_count,
        .ready_workers, .faulty_workers, .create_time, .start_time, .update_time,
        .complete_time, .suspend_time, .delete_time, .ownership, .slurm_job_id, .metadata)'
    tj get job life-ok -o json | jq -S "$spec" >"$TMP/rt.a"
    tj get job life-rt -o json | jq -S "$spec" >"$TMP/rt.b"
    if [ -s "$TMP/rt.a" ] && cmp -s "$TMP/rt.a" "$TMP/rt.b"; then cf_pass "...the same job as the one exported"; else
        cf_fail "...the same job as the one exported" "$(diff "$TMP/rt.a" "$TMP/rt.b" | head -n 10 | tr '\n' '|')"
    fi
}
