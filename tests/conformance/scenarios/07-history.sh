# Events and history: `get events` and describe's history show the job's way
# QUEUEING → RUNNING → SUCCEEDED, each state named.
scenario_history() {
    cf_run tj get events life-ok
    cf_rc "get events works" 0
    cp "$TMP/out" "$TMP/events"
    cf_grep "...with the change to RUNNING" "$TMP/events" "→ RUNNING"
    cf_grep "...and to SUCCEEDED" "$TMP/events" "→ SUCCEEDED"
    cf_run tj describe job life-ok
    sed -n '/^State history:/,/^$/p' "$TMP/out" >"$TMP/history"
    cf_grep "describe's history starts QUEUEING" "$TMP/history" "QUEUEING →"
    cf_grep "...is RUNNING" "$TMP/history" "→ RUNNING"
    cf_grep "...and ends SUCCEEDED" "$TMP/history" "→ SUCCEEDED"
    cf_no_grep "...naming every state" "$TMP/history" "STATE_UNSPECIFIED"
}
