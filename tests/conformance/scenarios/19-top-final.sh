# top left open while a job finishes shows the final state on the jobs view
# and on the workers pane.
scenario_top_final() {
    cf_job ok topend
    cf_submit topend || return
    TUI_ENV="TRAINJOB_CONFIG='$TRAINJOB_CONFIG' LANG=C.UTF-8"
    start_tui 150 30 "--context $CF_BACKEND top"
    if wait_screen "topend" 15; then
        keys "/" C-u "topend" Enter
        if wait_screen "SUCCEEDED" 60; then cf_pass "the jobs view shows topend SUCCEEDED"; else
            cf_fail "the jobs view shows topend SUCCEEDED" "$(grep topend "$TMP/screen" | tr -s ' ')"
        fi
        keys Enter
        if wait_screen "master-0" 10; then
            n=0
            while [ $n -lt 50 ]; do
                screen
                m=$(grep -E 'master-0 ' "$TMP/screen" | head -n 1)
                w=$(grep -E 'worker-0 ' "$TMP/screen" | head -n 1)
                case "$m$w" in *Running* | *Pending*) ;; *) break ;; esac
                sleep 0.2
                n=$((n + 1))
            done
            case $m in *Succeeded*) cf_pass "the workers pane shows master-0 Succeeded" ;;
            *) cf_fail "the workers pane shows master-0 Succeeded" "$(echo "$m" | tr -s ' ')" ;; esac
            case $w in *Succeeded*) cf_pass "...and worker-0 Succeeded" ;;
            *) cf_fail "...and worker-0 Succeeded" "$(echo "$w" | tr -s ' ')" ;; esac
            cf_no_grep "...its history naming every state" "$TMP/screen" "STATE_UNSPECIFIED"
        else
            cf_fail "Enter opens the job's screen" "$(tr -s ' ' <"$TMP/screen" | tr '\n' '|')"
        fi
    else
        cf_fail "top lists topend" "$(tr -s ' ' <"$TMP/screen" | tr '\n' '|')"
    fi
    tui_cleanup
}
