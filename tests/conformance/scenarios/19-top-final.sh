# top left open while a job finishes: the job's screen, opened while its
# workers run, shows them Succeeded once the job has ended, and the jobs
# view shows it SUCCEEDED, its history naming every state.
scenario_top_final() {
    cf_job watched topend
    cf_submit topend || return
    TUI_ENV="TRAINJOB_CONFIG='$TRAINJOB_CONFIG' LANG=C.UTF-8"
    start_tui 150 30 "--context $CF_BACKEND top"
    if ! wait_screen "topend" 15; then
        cf_fail "top lists topend" "$(tr -s ' ' <"$TMP/screen" | tr '\n' '|')"
        tui_cleanup
        return
    fi
    keys "/" C-u "topend" Enter
    see_running=0
    wait_screen "RUNNING" 30 && see_running=1
    keys Enter
    if [ "$see_running" = 1 ] && wait_screen "master-0" 10 && wait_screen "Running" 5; then
        cf_pass "the job's screen opens while its workers run"
    else
        cf_fail "the job's screen opens while its workers run" "$(tr -s ' ' <"$TMP/screen" | tr '\n' '|')"
    fi
    cf_wait topend "SUCCEEDED|FAILED" 60
    # the screen catches up within 15 s of the end (three of ACP's 5 s polls)
    n=0
    while [ $n -lt 75 ]; do
        screen
        m=$(grep -E '^ *master-0 ' "$TMP/screen" | head -n 1)
        w=$(grep -E '^ *worker-0 ' "$TMP/screen" | head -n 1)
        case "$m|$w" in *Succeeded*"|"*Succeeded*) break ;; esac
        sleep 0.2
        n=$((n + 1))
    done
    case $m in *Succeeded*) cf_pass "the workers pane shows master-0 Succeeded" ;;
    *) cf_fail "the workers pane shows master-0 Succeeded" "$(echo "$m" | tr -s ' ')" ;; esac
    case $w in *Succeeded*) cf_pass "...and worker-0 Succeeded" ;;
    *) cf_fail "...and worker-0 Succeeded" "$(echo "$w" | tr -s ' ')" ;; esac
    cf_no_grep "...its history naming every state" "$TMP/screen" "STATE_UNSPECIFIED"
    keys Escape
    if wait_screen "SUCCEEDED" 10; then cf_pass "the jobs view shows topend SUCCEEDED"; else
        cf_fail "the jobs view shows topend SUCCEEDED" "$(grep topend "$TMP/screen" | tr -s ' ')"
    fi
    tui_cleanup
}
