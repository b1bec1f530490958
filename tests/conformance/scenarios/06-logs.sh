# Logs: a worker's log has both attempts of the RESTART_POD job's worker-0,
# each after a "--- … attempt N ---" separator.
scenario_logs() {
    cf_wait rpod "SUCCEEDED|FAILED" 60
    cf_run tj logs rpod -w worker-0
    cf_rc "logs of worker-0 work" 0
    cf_grep "...with its first attempt's line" "$TMP/out" "worker-0 fails once"
    cf_grep "...and its second's" "$TMP/out" "worker-0 done"
    cf_egrep "...a separator for attempt 1" "$TMP/out" "^--- .*attempt 1.* ---\$"
    cf_egrep "...and for attempt 2" "$TMP/out" "^--- .*attempt 2.* ---\$"
    cf_run tj logs life-ok -w master-0
    cf_grep "logs of life-ok's master-0 show its line" "$TMP/out" "hello from master-0"
}
