# stop → SUSPENDED, start → RUNNING again, keeping its creation time;
# delete → gone.
scenario_stop_start() {
    cf_job long ss
    cf_submit ss || return
    cf_expect_state "ss runs" ss "RUNNING" 60
    c0=$(tj get job ss -o json | jq -r .create_time)
    cf_run tj stop ss
    cf_rc "stop works" 0
    cf_expect_state "...and ss is SUSPENDED" ss "SUSPENDED" 60
    cf_run tj start ss
    cf_rc "start works" 0
    cf_expect_state "...and ss runs again" ss "RUNNING" 60
    c1=$(tj get job ss -o json | jq -r .create_time)
    [ "$c0" = "$c1" ] && cf_pass "...created when it was ($c0)" || cf_fail "...created when it was" "create_time $c0, then $c1"
    cf_run tj delete ss
    cf_rc "delete works" 0
    n=0
    while [ $n -lt 150 ] && tj get job ss >/dev/null 2>&1; do sleep 0.2; n=$((n + 1)); done
    cf_run tj get job ss
    cf_rc "...and the job is gone" 1
}
