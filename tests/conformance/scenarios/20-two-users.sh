# Two real Unix users (tj-alice and tj-bob, of one team) on the backend,
# each through a context of their own (backend_user): a job tj-alice
# submits is hers wherever it shows — to her, and to tj-bob where the
# backend shows a teammate's jobs, get -o json and describe name tj-alice
# as its creator.
scenario_two_users() {
    if ! tj_users; then
        cf_fail "the users tj-alice and tj-bob can be made" "tj_users failed (needs root)"
        return
    fi
    for u in "$TJ_ALICE" "$TJ_BOB"; do
        if ! backend_user "$u" >"$TMP/user.log" 2>&1; then
            cf_fail "a context for $u" "$(tail -c 400 "$TMP/user.log")"
            return
        fi
    done
    cf_job ok alice-job
    chmod 755 "$TMP/jobs"
    chmod 644 "$TMP/jobs/alice-job.yaml"
    cf_run cf_as "$TJ_ALICE" submit -f "$TMP/jobs/alice-job.yaml"
    cf_rc "$TJ_ALICE submits a job" 0
    [ "$rc" -eq 0 ] || return
    for u in "$TJ_ALICE" "$TJ_BOB"; do
        [ "$u" = "$TJ_BOB" ] && cf_lacks others-jobs && continue
        n=0
        while [ $n -lt 150 ]; do
            s=$(cf_as "$u" get job alice-job -o json 2>/dev/null | jq -r '.state // ""')
            case $s in SUCCEEDED | FAILED) break ;; esac
            sleep 0.2
            n=$((n + 1))
        done
        if [ "$s" = SUCCEEDED ]; then cf_pass "$u sees it end SUCCEEDED"; else
            cf_as "$u" get job alice-job >/dev/null 2>"$TMP/err"
            cf_fail "$u sees it end SUCCEEDED" "state '$s': $(head -c 300 "$TMP/err")"
        fi
        c=$(cf_as "$u" get job alice-job -o json 2>/dev/null | jq -r '.ownership.user_name // ""')
        [ "$c" = "$TJ_ALICE" ] && cf_pass "...made by $TJ_ALICE, says get -o json to $u" ||
            cf_fail "...made by $TJ_ALICE, says get -o json to $u" "ownership.user_name '$c'"
        cf_run cf_as "$u" describe job alice-job
        cf_egrep "...and describe, to $u" "$TMP/out" "^Created: .* by $TJ_ALICE\$"
    done
    cf_as "$TJ_ALICE" delete alice-job >/dev/null 2>&1
}

# cf_as USER ARGS…: trainjob as USER, through USER's own context on the backend
cf_as() {
    _u=$1
    shift
    as_user "$_u" env TRAINJOB_CONFIG="$TMP/users/$_u/config.yaml" "$TRAINJOB_BIN" --context "$CF_BACKEND" "$@"
}
