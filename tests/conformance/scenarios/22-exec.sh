# Exec: a command in a running worker prints what it prints and exits with
# its status, as kubectl exec's does; a backend without exec says why and
# what does it there. On trainjobd the suite's user runs it through the
# engine's Unix socket; on Slurm the job's own user (tj-alice, her own
# context: Slurm lets no one else start a step in her job) runs srun.
scenario_exec() {
    if cf_lacks exec-in-worker; then
        cf_run tj exec life-ok -w master-0 -- true
        cf_rc "exec is refused (1)" 1
        cf_grep "...saying why, with the platform's own command" "$TMP/err" \
            "sco acp jobs exec life-ok --worker-name master-0"
        return
    fi
    xu=""
    if [ "$CF_BACKEND" = slurm ]; then
        if ! tj_users || ! backend_user "$TJ_ALICE" >"$TMP/user.log" 2>&1; then
            cf_fail "a context for $TJ_ALICE" "$(tail -c 400 "$TMP/user.log")"
            return
        fi
        xu=$TJ_ALICE
    fi
    cf_job long exec-run
    chmod 755 "$TMP/jobs"
    chmod 644 "$TMP/jobs/exec-run.yaml"
    cf_run cf_x submit -f "$TMP/jobs/exec-run.yaml"
    cf_rc "submit exec-run" 0
    [ "$rc" -eq 0 ] || return
    n=0
    until cf_x get workers exec-run 2>/dev/null | grep -q "master-0 .*Running" || [ $n -gt 300 ]; do
        sleep 0.2
        n=$((n + 1))
    done
    cf_run cf_x exec exec-run -- sh -c 'echo "EXEC-$((6 * 7))"; exit 3'
    cf_rc "exec -- CMD exits with the command's status (3)" 3
    cf_grep "...and prints its output" "$TMP/out" "EXEC-42"
    cf_run cf_x exec exec-run -w nosuch -- true
    cf_rc "a worker the job has not is refused (1)" 1
    cf_x delete exec-run >/dev/null 2>&1
}

# cf_x ARGS…: trainjob as the user exec runs as on this backend (see above)
cf_x() {
    if [ -n "$xu" ]; then cf_as "$xu" "$@"; else tj "$@"; fi
}
