# validate --context uses the backend's catalog: a job naming a pool and a
# spec the backend does not have is invalid there, both said at once, and
# submit refuses it with the same two errors.
scenario_validate_catalog() {
    cf_job bad-catalog badcat
    cf_run tj validate "$TMP/jobs/badcat.yaml"
    cf_rc "validate --context refuses the pool and spec it lacks" 1
    cat "$TMP/out" "$TMP/err" >"$TMP/val"
    cf_grep "...naming the pool" "$TMP/val" "no-such-pool"
    cf_grep "...and the spec, at once" "$TMP/val" "no-such-spec"
    cf_run tj submit -f "$TMP/jobs/badcat.yaml"
    cf_rc "submit refuses it" 1
    cat "$TMP/out" "$TMP/err" >"$TMP/sub"
    cf_grep "...naming the pool" "$TMP/sub" "no-such-pool"
    cf_grep "...and the spec, at once" "$TMP/sub" "no-such-spec"
}
