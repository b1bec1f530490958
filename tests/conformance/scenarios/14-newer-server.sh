# Values from a newer server are kept: enum values this build does not know
# and fields it has no name for come back out of get -o json and -o yaml as
# the server sent them, and tables show the state as sent.
scenario_newer_server() {
    cf_job ok newer-x
    cf_submit newer-x || return
    tj get job newer-x -o json >"$TMP/newer.json" 2>"$TMP/err"
    tj get job newer-x -o yaml >"$TMP/newer.yaml" 2>>"$TMP/err"
    for v in PREEMPTED JAX PV_BOS RESTART_NODE URGENT ON_DEMAND quantum_entanglement; do
        cf_grep "get -o json keeps $v" "$TMP/newer.json" "$v"
        cf_grep "get -o yaml keeps $v" "$TMP/newer.yaml" "$v"
    done
    l=$(jq -c '.roles[0].resource_spec[0].limits' "$TMP/newer.json" 2>/dev/null)
    case $l in *8589934592*) cf_pass "...and the numeric limits ($l)" ;;
    *) cf_fail "...and the numeric limits" "limits: ${l:-none}" ;; esac
    cf_run tj get jobs
    cf_egrep "get jobs shows the state PREEMPTED" "$TMP/out" "^newer-x .*PREEMPTED"
    cf_wait newer-x "SUCCEEDED|PREEMPTED" 5
}
