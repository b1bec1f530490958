# describe succeeds and shows the job's spec, state and workers.
scenario_describe() {
    cf_run tj describe job life-ok
    cf_rc "describe job works" 0
    cf_egrep "...naming the job" "$TMP/out" "^Name: +life-ok"
    cf_egrep "...its state" "$TMP/out" "^State: +SUCCEEDED"
    cf_egrep "...its priority" "$TMP/out" "^Priority: +NORMAL"
    cf_grep "...and its workers" "$TMP/out" "master-0"
}
