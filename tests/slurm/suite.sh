# What the Slurm suites (tests/slurm*.test.sh) share, sourced after lib.sh
# from the top of the tree: their private cluster and the waits on it.
#
# slurm_start CHECK: starts a throw-away cluster in $CL ($TMP/cluster) with
# tests/slurm/cluster.sh — ports from TJ_SLURM_PORT_BASE (unset: a free
# range of 110 that free_port finds and exports), accounting when
# TJ_SLURM_ACCOUNTING=1 — then passes CHECK, or fails it with the end of
# the cluster's log and exits. It sources the cluster's env (SLURMRESTD_*,
# TJ_SLURM_JOBS_DIR, SLURM_CONF, …) and writes the token to $TMP/token,
# mode 600. slurm_stop stops the cluster by its pids; a suite's cleanup
# calls it.
#
# wait_state NAME STATE SECONDS [CMD]: until `CMD get jobs` (CMD: tj) shows
# job NAME in STATE (the last listing in $TMP/jobs); expect_state CHECK NAME STATE
# SECONDS passes or fails CHECK on it.
CL="$TMP/cluster"

slurm_start() {
    if [ -z "${TJ_SLURM_PORT_BASE:-}" ]; then
        TJ_SLURM_PORT_BASE=$(free_port 110) || { fail "$1" "no free TCP ports below the ephemeral range"; exit 1; }
        export TJ_SLURM_PORT_BASE
    fi
    chmod 755 "$TMP" # slurmrestd and the jobs run as unprivileged users: DIR must be o+x
    if ! sh tests/slurm/cluster.sh start "$CL" >"$TMP/cluster.log" 2>&1; then
        fail "$1" "tests/slurm/cluster.sh start failed: $(tail -c 1500 "$TMP/cluster.log")"
        exit 1
    fi
    pass "$1"
    . "$CL/env"
    printf '%s\n' "$SLURMRESTD_TOKEN" >"$TMP/token"
    chmod 600 "$TMP/token"
}

slurm_stop() { sh tests/slurm/cluster.sh stop "$CL" >/dev/null 2>&1; }

# slurm_tui_start SESSION: what a Slurm suite that drives the TUI begins with
# — tmux session SESSION (tests/tui.sh, no engine of its own: the cluster is
# the backend), a cleanup on exit that ends the TUI, the cluster and $TMP,
# then the cluster itself (slurm_start). A suite may call cleanup early.
slurm_tui_start() {
    SESSION=$1
    TUI_ENGINE=none
    . tests/tui.sh
    cleanup() {
        tui_cleanup
        slurm_stop
        rm -rf "$TMP"
    }
    trap cleanup EXIT
    slurm_start "the Slurm cluster starts"
}

# slurm_context NAME [ENDPOINT]: the config.yaml lines of a context on this
# cluster (slurmrestd's socket unless ENDPOINT) as far as every suite's are
# the same; the suite adds its token, workspace, qos, volumes, ...
slurm_context() {
    printf '  - name: %s\n    driver: slurm\n    endpoint: %s\n    user: %s\n    jobs_dir: %s\n' \
        "$1" "${2:-http+unix://$SLURMRESTD_SOCKET}" "$SLURMRESTD_USER" "$TJ_SLURM_JOBS_DIR"
}

tj() { "$TRAINJOB_BIN" "$@"; }

wait_state() {
    n=0
    while [ $n -lt $(($3 * 5)) ]; do
        "${4:-tj}" get jobs >"$TMP/jobs" 2>&1
        awk -v n="$1" -v s="$2" '$1 == n && index($0, s) { f = 1 } END { exit !f }' "$TMP/jobs" && return 0
        sleep 0.2
        n=$((n + 1))
    done
    return 1
}

expect_state() { # CHECK NAME STATE SECONDS
    if wait_state "$2" "$3" "$4"; then pass "$1"; else fail "$1" "$(cat "$TMP/jobs")"; fi
}
