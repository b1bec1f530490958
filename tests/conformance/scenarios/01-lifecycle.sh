# submit → states → end: a job is created QUEUEING, is seen RUNNING and ends
# SUCCEEDED; a job whose worker exits 201 with no retries ends FAILED. The
# later scenarios read the ended jobs life-ok and life-fail.
scenario_lifecycle() {
    cf_job ok life-ok
    cf_job fail life-fail
    cf_submit life-ok || return
    cf_grep "submit says the job is created QUEUEING" "$TMP/out" "QUEUEING"
    cf_submit life-fail || return
    cf_expect_state "life-ok is seen RUNNING" life-ok "RUNNING|SUCCEEDED" 60
    [ "$cf_seen" = RUNNING ] && cf_pass "...(RUNNING itself)" || cf_fail "...(RUNNING itself)" "first seen $cf_seen"
    cf_expect_state "life-ok ends SUCCEEDED" life-ok "SUCCEEDED" 60
    cf_expect_state "life-fail ends FAILED" life-fail "FAILED" 60
    cf_run tj get jobs
    cf_egrep "get jobs lists life-ok SUCCEEDED" "$TMP/out" "^life-ok .*SUCCEEDED"
    cf_egrep "...and life-fail FAILED" "$TMP/out" "^life-fail .*FAILED"
    cf_no_grep "...and no STATE_UNSPECIFIED" "$TMP/out" "STATE_UNSPECIFIED"
}
