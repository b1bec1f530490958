# RESTART_JOB: worker-0 fails once and the whole job starts again: the job
# counts one restart, the workers (started anew, as pods of a restarted job
# are) none; then it SUCCEEDED.
scenario_restart_job() {
    cf_job restart-job rjob
    cf_submit rjob || return
    cf_expect_state "rjob ends SUCCEEDED" rjob "SUCCEEDED|FAILED" 90
    [ "$cf_seen" = SUCCEEDED ] && cf_pass "...(SUCCEEDED)" || cf_fail "...(SUCCEEDED)" "ended $cf_seen"
    cf_restarts rjob 0 0 1
}
