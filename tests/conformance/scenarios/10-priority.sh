# Priority change: `p` on the jobs view offers HIGH, the job is HIGH after,
# and the PRIORITY column says so (there is no CLI verb for it: top is how).
# Changed on a pending job, which every backend can do (Slurm changes the
# QOS of a pending job only): a blocker takes every slot of the pool (the
# backend's CF_BLOCK_N workers of CF_BLOCK_SPEC) so prio waits behind it;
# then on the running blocker where the backend can.
scenario_priority() {
    cf_job blocker blk
    cf_submit blk || return
    if cf_wait blk RUNNING 120; then cf_pass "blk ($CF_BLOCK_N × $CF_BLOCK_SPEC, every slot of the pool) runs"; else
        cf_fail "blk ($CF_BLOCK_N × $CF_BLOCK_SPEC, every slot of the pool) runs" "state ${cf_seen:-unreadable} after 120 s"
        tj delete blk >/dev/null 2>&1
        return
    fi
    cf_job long prio
    if cf_submit prio; then
        cf_expect_state "prio waits behind it" prio "QUEUEING" 10
        cf_run tj get jobs
        p=$(cf_col "$TMP/out" prio PRIORITY)
        [ "$p" = NORMAL ] && cf_pass "PRIORITY reads NORMAL" || cf_fail "PRIORITY reads NORMAL" "reads '$p'"
        cf_tui_priority prio
        # no preemption here (a standard job is never a victim): it waited all along
        s=$(cf_state prio)
        [ "$s" = QUEUEING ] && cf_pass "...changed while prio waited" || cf_fail "...changed while prio waited" "prio is $s"
    fi
    if ! cf_lacks priority-running; then
        cf_tui_priority blk
    fi
    tj delete prio >/dev/null 2>&1
    tj delete blk >/dev/null 2>&1
}

# cf_tui_priority JOB: in top, p on JOB and HIGH; then the job's priority
# (get -o json) and its PRIORITY column read HIGH
cf_tui_priority() {
    TUI_ENV="TRAINJOB_CONFIG='$TRAINJOB_CONFIG' LANG=C.UTF-8"
    start_tui 150 30 "--context $CF_BACKEND top"
    if wait_screen "$1" 15; then
        keys "/" C-u "$1" Enter
        keys p
        if wait_screen "New priority of $1" 10; then
            cf_pass "p asks the new priority of $1"
            keys h Enter
            if wait_screen "$1 is now HIGH" 20; then cf_pass "...and says HIGH is set"; else
                cf_fail "...and says HIGH is set" "$(tr -s ' ' <"$TMP/screen" | tail -n 5 | tr '\n' '|')"
            fi
        else
            cf_fail "p asks the new priority of $1" "$(tr -s ' ' <"$TMP/screen" | tr '\n' '|')"
        fi
    else
        cf_fail "top lists $1" "$(tr -s ' ' <"$TMP/screen" | tr '\n' '|')"
    fi
    tui_cleanup
    p=$(tj get job "$1" -o json | jq -r '.scheduling.priority')
    [ "$p" = HIGH ] && cf_pass "$1's priority is HIGH" || cf_fail "$1's priority is HIGH" "it is $p"
    cf_run tj get jobs
    p=$(cf_col "$TMP/out" "$1" PRIORITY)
    [ "$p" = HIGH ] && cf_pass "$1's PRIORITY reads HIGH" || cf_fail "$1's PRIORITY reads HIGH" "reads '$p'"
}
