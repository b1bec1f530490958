# RESTART_POD: worker-0 fails once and is restarted alone; master-0 never
# restarts; the job SUCCEEDED with one restart used. A worker that
# succeeded reads EXIT 0, with no rule.
scenario_restart_pod() {
    cf_job restart-pod rpod
    cf_submit rpod || return
    cf_expect_state "rpod ends SUCCEEDED" rpod "SUCCEEDED|FAILED" 90
    [ "$cf_seen" = SUCCEEDED ] && cf_pass "...(SUCCEEDED)" || cf_fail "...(SUCCEEDED)" "ended $cf_seen"
    cf_restarts rpod 0 1 1
}

# cf_restarts JOB MASTER WORKER JOBCOUNT [noexit]: the RESTARTS of master-0
# and worker-0, the restarts the job used (get jobs' RESTARTS, USED/LIMIT;
# - for USED where the backend has no count: job-restarts), and EXIT 0 with
# no rule for a worker that succeeded
cf_restarts() {
    cf_run tj get jobs
    r=$(cf_col "$TMP/out" "$1" RESTARTS)
    n=$4
    cf_lacks job-restarts && n=- # no count: shown as -, the limit beside
    case $r in "$n"/[0-9]*) cf_pass "the job's RESTARTS reads $n/… ($r)" ;;
    *) cf_fail "the job's RESTARTS reads $n/…" "reads '$r'" ;; esac
    cf_lacks worker-restarts && return
    cf_run tj get workers "$1"
    cp "$TMP/out" "$TMP/workers"
    m=$(cf_col "$TMP/workers" master-0 RESTARTS)
    w=$(cf_col "$TMP/workers" worker-0 RESTARTS)
    [ "$m" = "$2" ] && cf_pass "master-0 RESTARTS $2" || cf_fail "master-0 RESTARTS $2" "reads '$m': $(tr '\n' '|' <"$TMP/workers")"
    [ "$w" = "$3" ] && cf_pass "worker-0 RESTARTS $3" || cf_fail "worker-0 RESTARTS $3" "reads '$w': $(tr '\n' '|' <"$TMP/workers")"
    if [ "${5:-}" != noexit ]; then
        e=$(cf_col "$TMP/workers" master-0 EXIT)
        [ "$e" = 0 ] && cf_pass "master-0 EXIT reads 0" || cf_fail "master-0 EXIT reads 0" "reads '$e'"
        # a worker that succeeded matched no rule: its EXIT is 0 and nothing more
        grep -E '^(master|worker)-[0-9]+ .*Succeeded' "$TMP/workers" >"$TMP/ok-workers"
        cf_no_grep "...and no worker that succeeded shows a rule" "$TMP/ok-workers" "rule"
    fi
}
