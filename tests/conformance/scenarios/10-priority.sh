# Priority change: `p` on the jobs view offers HIGH, the job is HIGH after,
# and the PRIORITY column says so (there is no CLI verb for it: top is how).
scenario_priority() {
    cf_job long prio
    cf_submit prio || return
    cf_expect_state "prio runs" prio "RUNNING" 60
    cf_run tj get jobs
    p=$(cf_col "$TMP/out" prio PRIORITY)
    [ "$p" = NORMAL ] && cf_pass "PRIORITY reads NORMAL" || cf_fail "PRIORITY reads NORMAL" "reads '$p'"
    TUI_ENV="TRAINJOB_CONFIG='$TRAINJOB_CONFIG' LANG=C.UTF-8"
    start_tui 150 30 "--context $CF_BACKEND top"
    if wait_screen "prio" 15; then
        keys "/" C-u "prio" Enter
        keys p
        if wait_screen "New priority of prio" 5; then
            cf_pass "p asks the new priority"
            keys h Enter
            if wait_screen "prio is now HIGH" 10; then cf_pass "...and says HIGH is set"; else
                cf_fail "...and says HIGH is set" "$(tr -s ' ' <"$TMP/screen" | tail -n 5 | tr '\n' '|')"
            fi
        else
            cf_fail "p asks the new priority" "$(tr -s ' ' <"$TMP/screen" | tr '\n' '|')"
        fi
    else
        cf_fail "top lists prio" "$(tr -s ' ' <"$TMP/screen" | tr '\n' '|')"
    fi
    tui_cleanup
    p=$(tj get job prio -o json | jq -r '.scheduling.priority')
    [ "$p" = HIGH ] && cf_pass "the job's priority is HIGH" || cf_fail "the job's priority is HIGH" "it is $p"
    cf_run tj get jobs
    p=$(cf_col "$TMP/out" prio PRIORITY)
    [ "$p" = HIGH ] && cf_pass "PRIORITY reads HIGH" || cf_fail "PRIORITY reads HIGH" "reads '$p'"
    tj delete prio >/dev/null 2>&1
}
