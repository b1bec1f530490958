# The ACP backend: tests/tools/acpfake.py on loopback TCP, in front of the
# suite's engine, answering in the public schema's shapes; the context is
# driver acp with an AK/SK (the fake checks only that requests are signed),
# workspace acp of the engine.
CF_WS=acp
ACPFAKE_PID=""

backend_up() {
    cf_engine_up || return 1
    rm -f "$TMP/acpfake.port"
    python3 tests/tools/acpfake.py --socket "$SOCK" --port-file "$TMP/acpfake.port" \
        --newer newer- 2>>"$TMP/acpfake.log" &
    ACPFAKE_PID=$!
    _n=0
    while [ ! -s "$TMP/acpfake.port" ] && [ $_n -lt 100 ]; do sleep 0.1; _n=$((_n + 1)); done
    [ -s "$TMP/acpfake.port" ] || { echo "acp: the fake did not listen: $(tail -c 500 "$TMP/acpfake.log")"; return 1; }
    printf 'SKFAKE\n' >"$TMP/acp.sk"
    chmod 600 "$TMP/acp.sk"
    cat >>"$TRAINJOB_CONFIG" <<EOF2
  - name: acp
    driver: acp
    endpoint: http://127.0.0.1:$(cat "$TMP/acpfake.port")
    access_key: AKFAKE
    secret_key_file: $TMP/acp.sk
    subscription: local
    resource_group: default
    zone: local-1z
    workspace: acp
EOF2
}

backend_down() {
    [ -n "$ACPFAKE_PID" ] && kill "$ACPFAKE_PID" 2>/dev/null && wait "$ACPFAKE_PID" 2>/dev/null
    ACPFAKE_PID=""
}

backend_unsupported() {
    case $1 in
    worker-restarts)
        echo "the list-workers page's worker has no restart count and no exit code (a phase only)"
        ;;
    start) echo "ACP has no REST call to start a stopped job (the reference notes: only the sco CLI restarts one)" ;;
    stop-start)
        echo "ACP has no REST call to start a stopped job (the reference notes: only the sco CLI restarts one); stop and delete are in missing-job and the others"
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
    *) return 1 ;;
    esac
}
