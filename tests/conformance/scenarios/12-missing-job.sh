# A job that does not exist: every verb exits 1 and names it.
scenario_missing_job() {
    for verb in "get job" "describe job" "stop" "start" "delete" "get workers" "logs"; do
        [ "$verb" = start ] && cf_lacks start && continue
        [ "$verb" = logs ] && cf_lacks logs && continue
        cf_run tj $verb no-such-job
        if [ "$rc" -eq 1 ] && grep -qF "no-such-job" "$TMP/err"; then cf_pass "$verb of a missing job exits 1 naming it"; else
            cf_fail "$verb of a missing job exits 1 naming it" "exit $rc; stdout: $(head -c 200 "$TMP/out" | tr '\n' ' '); stderr: $(head -c 200 "$TMP/err" | tr '\n' ' ')"
        fi
    done
}
