# The form's edges: TensorBoard off and an unknown scoring_strategy key are
# taken everywhere (validate and submit); a job over the backend's own
# limit of environment variables is judged the same by validate --context
# and by submit, so "valid" never meets a refusal.
scenario_form_edges() {
    cf_job edges edges
    cf_run tj validate "$TMP/jobs/edges.yaml"
    cf_rc "validate takes tensorboard.log_path \"\" and an unknown scoring_strategy key" 0
    cf_egrep "...warning of the unknown key" "$TMP/err" "warning: .*future_knob"
    cf_submit edges && cf_expect_state "...and the job runs to its end" edges "SUCCEEDED|FAILED" 60
    cf_job env11 env11
    cf_run tj validate "$TMP/jobs/env11.yaml"
    v=$rc
    cp "$TMP/err" "$TMP/env11.val"
    cf_run tj submit -f "$TMP/jobs/env11.yaml"
    if [ "$v" -eq "$rc" ]; then cf_pass "validate and submit agree on 11 variables (exit $rc)"; else
        cf_fail "validate and submit agree on 11 variables" "validate exit $v ($(head -c 200 "$TMP/env11.val" | tr '\n' ' ')), submit exit $rc ($(head -c 200 "$TMP/err" | tr '\n' ' '))"
    fi
    tj delete env11 >/dev/null 2>&1
}
