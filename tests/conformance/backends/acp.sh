# The ACP backend: tests/tools/acpfake.py on loopback TCP, in front of the
# suite's engine, answering in the public schema's shapes; the context is
# driver acp with the user's AK/SK, which the fake passes on with the
# request to the engine's TCP listener, where the signature is checked and
# names the user (as ACP's AK does); workspace acp of the engine.
CF_WS=acp
# the engine behind the fake: 16 workers of gpu-1 take its two nodes of 8 GPUs
CF_BLOCK_N=16
CF_BLOCK_SPEC=gpu-1
ACPFAKE_PID=""

backend_up() {
    cf_engine_up || return 1
    rm -f "$TMP/acpfake.port"
    python3 tests/tools/acpfake.py --socket "$SOCK" --engine-tcp "$CF_ENGINE_TCP" \
        --port-file "$TMP/acpfake.port" --newer newer- 2>>"$TMP/acpfake.log" &
    ACPFAKE_PID=$!
    _n=0
    while [ ! -s "$TMP/acpfake.port" ] && [ $_n -lt 100 ]; do sleep 0.1; _n=$((_n + 1)); done
    [ -s "$TMP/acpfake.port" ] || { echo "acp: the fake did not listen: $(tail -c 500 "$TMP/acpfake.log")"; return 1; }
    printf 'SK-%s\n' "$ME" >"$TMP/acp.sk"
    chmod 600 "$TMP/acp.sk"
    cat >>"$TRAINJOB_CONFIG" <<EOF2
  - name: acp
    driver: acp
    endpoint: http://127.0.0.1:$(cat "$TMP/acpfake.port")
    access_key: AK-$ME
    secret_key_file: $TMP/acp.sk
    subscription: local
    resource_group: default
    zone: local-1z
    workspace: acp
EOF2
}

# backend_user USER: USER's own context on the fake, with USER's AK/SK, in
# $TMP/users/USER
backend_user() {
    cf_user_dir "$1"
    _d=$TMP/users/$1
    printf 'SK-%s\n' "$1" >"$_d/sk"
    cat >"$_d/config.yaml" <<EOF2
contexts:
  - name: acp
    driver: acp
    endpoint: http://127.0.0.1:$(cat "$TMP/acpfake.port")
    access_key: AK-$1
    secret_key_file: $_d/sk
    subscription: local
    resource_group: default
    zone: local-1z
    workspace: acp
EOF2
    chown "$1" "$_d/sk" "$_d/config.yaml"
    chmod 600 "$_d/sk"
}

backend_down() {
    [ -n "$ACPFAKE_PID" ] && kill "$ACPFAKE_PID" 2>/dev/null && wait "$ACPFAKE_PID" 2>/dev/null
    ACPFAKE_PID=""
}

backend_unsupported() {
    case $1 in
    ready-workers)
        echo "ACP's TrainingJob carries no ready-worker count (WORKERS shows - for it, the total beside)"
        ;;
    job-restarts)
        echo "ACP's TrainingJob carries no restart count (RESTARTS shows - for it, the limit beside; the deprecated lme.current_retries is not read)"
        ;;
    worker-restarts)
        echo "the list-workers page's worker has no restart count and no exit code (a phase only)"
        ;;
    start) echo "ACP has no REST call to start a stopped job (the API lists create, list, get, list workers, batch delete and update; only the sco CLI restarts one)" ;;
    stop-start)
        echo "ACP has no REST call to start a stopped job (the API lists create, list, get, list workers, batch delete and update; only the sco CLI restarts one); stop and delete are in missing-job and the others"
        ;;
    history)
        echo "ACP has no events or history API; a client sees only the state a GET says now"
        ;;
    logs)
        echo "ACP serves worker logs from its Monitor service, whose request names a pod but no job; the fake cannot tell which job's worker-0 is asked for"
        ;;
    metrics)
        echo "ACP serves no TensorBoard scalars over its API; its log_path is read on the cluster's own storage"
        ;;
    exec-in-worker)
        echo "ACP's OpenAPI has no exec; its own CLI opens a terminal in a worker (sco acp jobs exec JOB --worker-name W)"
        ;;
    *) return 1 ;;
    esac
}
