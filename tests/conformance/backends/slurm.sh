# The Slurm backend: the project's throw-away cluster (tests/slurm/cluster.sh,
# with accounting, so the QOS map exists), driven through slurmrestd's Unix
# socket with a JWT, workspace default, the shared volume as volume scratch.
CF_WS=default
# tests/slurm/cluster.sh's three nodes of 8 GPUs: a worker of gpu-8 on each
CF_BLOCK_N=3
CF_BLOCK_SPEC=gpu-8

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

# backend_user USER: USER's own JWT and context, in $TMP/users/USER, on
# the team's jobs directory $TMP/shared/jobs (root's, sticky; workspace
# default the team's, set-gid and sticky, as a site would make it), where
# the cluster runs USER's jobs as USER
backend_user() {
    cf_user_dir "$1"
    _j=$TMP/shared/jobs
    if [ ! -d "$_j/default" ]; then
        shared_tmp "$TMP/shared"
        mkdir -p "$_j/default"
        chmod 1777 "$_j"
        chgrp "$TJ_TEAM" "$_j/default"
        chmod 3775 "$_j/default"
    fi
    _d=$TMP/users/$1
    if [ "$TJ_SLURM_ACCOUNTING" = 1 ]; then
        # with accounting a user submits only under an account: the cluster's (ml), as its job user
        printf 'add user %s Account=ml Cluster=trainjob\nmodify user %s set QOS=normal,high,highest DefaultQOS=normal\n' \
            "$1" "$1" | SLURM_CONF=$SLURM_CONF sacctmgr -i >"$TMP/sacctmgr-$1.log" 2>&1
    fi
    _tok=$(SLURM_CONF=$SLURM_CONF scontrol token username="$1" lifespan=3600 | sed -n 's/^SLURM_JWT=//p')
    [ -n "$_tok" ] || { echo "slurm: scontrol token gave no token for $1"; return 1; }
    printf '%s\n' "$_tok" >"$_d/token"
    {
        printf 'contexts:\n  - name: slurm\n    driver: slurm\n    endpoint: http+unix://%s\n' "$SLURMRESTD_SOCKET"
        printf '    user: %s\n    jobs_dir: %s\n    token_file: %s\n    workspace: default\n' "$1" "$_j" "$_d/token"
        printf '    volumes: {scratch: %s}\n' "$CF_VOL"
    } >"$_d/config.yaml"
    chown "$1" "$_d/token" "$_d/config.yaml"
    chmod 600 "$_d/token"
}

backend_down() { slurm_stop; }

backend_unsupported() {
    case $1 in
    others-jobs)
        echo "a job directory owned by another user is not trusted (its owner could swap what it holds), so a teammate's job in the shared jobs directory is not shown"
        ;;
    priority-running)
        echo "Slurm changes the QOS of a pending job only (slurmrestd answers error 2073 for a running one; top says so)"
        ;;
    newer-server)
        echo "slurmrestd's enums are Slurm's, mapped by this client; no newer trainjob server stands between (the job's own record is written by this client's batch script)"
        ;;
    *) return 1 ;;
    esac
}
