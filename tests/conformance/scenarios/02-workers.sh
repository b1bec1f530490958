# Workers and their counts: WORKERS reads READY/TOTAL with a number on both
# sides (0/2 while queued), and `get workers` lists master-0 and worker-0.
# A backend without a ready count (ready-workers) shows - for it: -/2.
scenario_workers() {
    ready='[0-9]*'
    cf_lacks ready-workers && ready='-'
    cf_job ok wk
    cf_submit wk || return
    cf_run tj get jobs
    w=$(cf_col "$TMP/out" wk WORKERS)
    case $w in $ready/2) cf_pass "WORKERS reads $ready/2 right after submit ($w)" ;;
    *) cf_fail "WORKERS reads $ready/2 right after submit" "WORKERS '$w': $(tr '\n' '|' <"$TMP/out")" ;; esac
    cf_expect_state "wk runs" wk "RUNNING|SUCCEEDED" 60
    cf_run tj get workers wk
    cf_rc "get workers works" 0
    cf_egrep "...listing master-0" "$TMP/out" "^master-0 "
    cf_egrep "...and worker-0" "$TMP/out" "^worker-0 "
    cf_expect_state "wk ends SUCCEEDED" wk "SUCCEEDED" 60
    cf_run tj get jobs
    w=$(cf_col "$TMP/out" wk WORKERS)
    case $w in $ready/2) cf_pass "WORKERS reads $ready/2 when it has ended ($w)" ;;
    *) cf_fail "WORKERS reads $ready/2 when it has ended" "WORKERS '$w'" ;; esac
}
