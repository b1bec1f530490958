# The Slurm backend: the project's throw-away cluster (tests/slurm/cluster.sh,
# with accounting, so the QOS map exists), driven through slurmrestd's Unix
# socket with a JWT, workspace default, the shared volume as volume scratch.
CF_WS=default

backend_up() {
    TJ_SLURM_PORT_BASE=$(free_port 110) || return 1
    export TJ_SLURM_PORT_BASE TJ_SLURM_ACCOUNTING=${CONFORMANCE_SLURM_ACCOUNTING:-1}
    CF_SLURM_STARTED=1
    if ! sh tests/slurm/cluster.sh start "$CL" >"$TMP/cluster.log" 2>&1; then
        echo "slurm: tests/slurm/cluster.sh start failed: $(tail -c 1500 "$TMP/cluster.log")"
        return 1
    fi
    . "$CL/env"
    printf '%s\n' "$SLURMRESTD_TOKEN" >"$TMP/token"
    chmod 600 "$TMP/token"
    {
        slurm_context slurm
        cat <<EOF2
    token_file: $TMP/token
    workspace: default
    volumes: {scratch: $CF_VOL}
    qos:
      NORMAL: normal
      HIGH: high
      HIGHEST: highest
EOF2
    } >>"$TRAINJOB_CONFIG"
}

backend_down() { slurm_stop; }

backend_unsupported() {
    case $1 in
    newer-server)
        echo "slurmrestd's enums are Slurm's, mapped by this client; no newer trainjob server stands between (the job's own record is written by this client's batch script)"
        ;;
    *) return 1 ;;
    esac
}
