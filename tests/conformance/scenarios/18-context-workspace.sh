# A job file without workspace_name goes to the context's workspace:
# validate, submit and get all take it from there.
scenario_context_workspace() {
    cf_job no-workspace nows
    cf_run tj validate "$TMP/jobs/nows.yaml"
    cf_rc "validate takes the context's workspace" 0
    cf_submit nows || return
    cf_expect_state "...the job runs there" nows "SUCCEEDED|FAILED|RUNNING" 60
    w=$(tj get job nows -o json | jq -r '.workspace_name // ""')
    [ "$w" = "$CF_WS" ] && cf_pass "...in workspace $CF_WS" || cf_fail "...in workspace $CF_WS" "workspace_name '$w'"
}
