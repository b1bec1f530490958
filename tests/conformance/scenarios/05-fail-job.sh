# FAIL_JOB: worker-0's exit 201 fails the job at once, retries left or
# not; no restart is counted anywhere.
scenario_fail_job() {
    cf_job fail-job fjob
    cf_submit fjob || return
    cf_expect_state "fjob ends FAILED" fjob "FAILED|SUCCEEDED" 90
    [ "$cf_seen" = FAILED ] && cf_pass "...(FAILED)" || cf_fail "...(FAILED)" "ended $cf_seen"
    cf_restarts fjob 0 0 0 noexit
}
