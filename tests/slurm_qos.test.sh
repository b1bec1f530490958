#!/bin/sh
# QOS preemption on a real Slurm cluster in accounting mode: tests/slurm/cluster.sh
# starts a throw-away Slurm 22.05 with slurmdbd and a private MariaDB
# (TJ_SLURM_ACCOUNTING=1: mariadbd on a Unix socket in this test's temp dir,
# QOS normal/high/highest and idle_*, PreemptType=preempt/qos), on ports
# derived from $$, and stops it by pid at the end. A context with `driver:
# slurm` and a `qos:` map then drives it through the CLI:
#   the catalog offers HIGH only because the user's association allows its
#     QOS, and not HIGHEST once the association no longer allows highest and
#     idle_highest; a HIGHEST job is refused naming scheduling.priority;
#   an idle NORMAL job fills every GPU; an idle HIGH job preempts it: the NORMAL
#     job is requeued and shows QUEUEING "preempted …", the HIGH one runs.
# If the cluster cannot start, the suite fails and says why. A fresh machine
# first installs slurmdbd and mariadb-server (~20 s on a quiet box).
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

if [ "$(id -u)" != 0 ]; then
    fail "the accounting cluster starts" "the Slurm suite needs root (slurmd launches jobs as their users)"
    exit 1
fi
. tests/slurm/suite.sh
cleanup() {
    slurm_stop
    rm -rf "$TMP"
}
trap cleanup EXIT

# ports apart from the other Slurm suites (20000-59999 by $$)
export TJ_SLURM_ACCOUNTING=1
t0=$(date +%s)
slurm_start "the accounting cluster starts"
echo "accounting cluster up in $(($(date +%s) - t0)) s"
export SLURM_CONF
if sacctmgr -n -P show qos format=name,preempt | grep -q '^idle_high|idle_normal$'; then
    pass "...with QOS preemption (idle_high preempts idle_normal)"
else
    fail "...with QOS preemption (idle_high preempts idle_normal)" "$(sacctmgr -n -P show qos format=name,preempt 2>&1)"
fi

export TRAINJOB_CONFIG="$TMP/config.yaml"
{
    printf 'current_context: acct\ncontexts:\n'
    slurm_context acct
    cat <<EOF
    token_file: $TMP/token
    workspace: default
    qos:
      NORMAL: normal
      HIGH: high
      HIGHEST: highest
      IDLE_NORMAL: idle_normal
      IDLE_HIGH: idle_high
      IDLE_HIGHEST: idle_highest
EOF
} >"$TRAINJOB_CONFIG"
# idle_job NAME PRIORITY REPLICAS: an idle job file holding REPLICAS whole nodes
idle_job() {
    cat >"$TMP/$1.yaml" <<EOF
workspace_name: default
name: $1
display_name: $1
framework: PYTORCH
resource_pool:
  name: idle
  zone: z
  vpc_id: v
scheduling:
  quota_type: SPOT
  preemptible: true
  priority: $2
roles:
  - total_replicas: $3
    resource_spec:
      - name: gpu-8
    image_path: local/host
    startup_script: |
      echo "run of $1 restart_count=\${SLURM_RESTART_COUNT:-0}"
      sleep 300
EOF
}

# --- the catalog: HIGH/HIGHEST offered where the association allows them
run tj get catalog -o json
expect_rc "the catalog comes from the accounting cluster" 0
expect_grep "...offering HIGH (the association allows high)" "$TMP/out" '"HIGH"'
expect_grep "...and HIGHEST (it allows highest)" "$TMP/out" '"HIGHEST"'
# the association no longer allows highest nor idle_highest
sacctmgr -i modify user "$SLURMRESTD_USER" set QOS-=highest,idle_highest >"$TMP/sacctmgr.log" 2>&1 ||
    fail "the association drops highest" "$(cat "$TMP/sacctmgr.log")"
run tj get catalog -o json
expect_grep "...then HIGH is still offered" "$TMP/out" '"HIGH"'
expect_no_grep "...but HIGHEST is not" "$TMP/out" '"HIGHEST"'
run tj get catalog
expect_grep "...and the table says why" "$TMP/out" "association"
idle_job top HIGHEST 1
run tj submit -f "$TMP/top.yaml"
expect_rc "a HIGHEST job is refused" 1
expect_grep "...naming scheduling.priority" "$TMP/err" "scheduling.priority"
expect_grep "...and the QOS the association does not allow" "$TMP/err" "idle_highest"
run tj get jobs
expect_no_grep "...and nothing was submitted" "$TMP/out" "top"

# --- idle HIGH preempts idle NORMAL
idle_job low NORMAL 3
idle_job high HIGH 2
run tj submit -f "$TMP/low.yaml"
expect_rc "an idle NORMAL job is submitted" 0
expect_state "...and runs on every node" low RUNNING 60
if [ "$(squeue -h -o '%q' -n low 2>/dev/null)" = idle_normal ]; then pass "...with QOS idle_normal"; else
    fail "...with QOS idle_normal" "$(squeue -h -o '%i %j %q %T' 2>&1)"
fi
run tj submit -f "$TMP/high.yaml"
expect_rc "an idle HIGH job is submitted" 0
expect_state "...the NORMAL job is preempted back to QUEUEING" low QUEUEING 30
run tj get job low -o json
expect_grep "...saying it was preempted" "$TMP/out" "preempted"
expect_state "...and the HIGH job runs" high RUNNING 30
if [ "$(squeue -h -o '%q' -n high 2>/dev/null)" = idle_high ]; then pass "...with QOS idle_high"; else
    fail "...with QOS idle_high" "$(squeue -h -o '%i %j %q %T' 2>&1)"
fi
run tj get jobs
if awk '$1 == "low" && /QUEUEING/ { q = 1 } $1 == "high" && /RUNNING/ { r = 1 } END { exit !(q && r) }' "$TMP/out"; then
    pass "...while the NORMAL job waits"
else
    fail "...while the NORMAL job waits" "$(cat "$TMP/out")"
fi
tj delete high >/dev/null 2>&1
tj delete low >/dev/null 2>&1

pids=$(cat "$CL"/run/*.pid "$CL/munge/munged.pid" 2>/dev/null)
sh tests/slurm/cluster.sh stop "$CL" >"$TMP/stop.log" 2>&1
left=
for p in $pids; do [ -d "/proc/$p" ] && left="$left $p"; done
if [ -z "$left" ]; then pass "the accounting cluster stops, mariadbd too"; else fail "the accounting cluster stops, mariadbd too" "still running:$left"; fi
echo "slurm qos suite: $(($(date +%s) - t0)) s"
