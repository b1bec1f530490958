# `trainjob exec` on a real Slurm cluster (tests/slurm/cluster.sh, started
# here and stopped by pid): a command in a worker is an overlapping step of
# the worker's Slurm job on the worker's node (srun --overlap), so it sees
# the job's SLURM_JOB_ID and that node; its exit status is trainjob's; -w
# picks the worker; a terminal through tmux gives an interactive shell there;
# `s` on the job screen's Workers pane does the same in tmux, and the screen
# comes back; a finished job's worker is refused saying it is not running.
# If the cluster cannot start, the suite fails and says why.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

if [ "$(id -u)" != 0 ]; then
    fail "the Slurm cluster starts" "the Slurm suite needs root (slurmd launches jobs as their users)"
    exit 1
fi
. tests/slurm/suite.sh
slurm_tui_start "tj-slurm-exec-$$"
export SLURM_CONF

# The job's user runs exec (srun) with their own credentials, as a person would: Slurm
# lets no one else (root included) start a step in their job.
U=$SLURMRESTD_USER
UD=$TMP/u
mkdir -p "$UD"
cp "$TMP/token" "$UD/token"
export TRAINJOB_CONFIG="$UD/config.yaml"
{
    printf 'current_context: lab\ncontexts:\n'
    slurm_context lab
    printf '    token_file: %s\n    workspace: default\n' "$UD/token"
} >"$TRAINJOB_CONFIG"
# Root's files, which both may read (trainjob trusts a config only its user or root may write).
chmod 0755 "$UD"
chmod 0644 "$UD/token" "$TRAINJOB_CONFIG"
# ux CMD…: trainjob as the job's user
ux() { as_user "$U" env TRAINJOB_CONFIG="$TRAINJOB_CONFIG" SLURM_CONF="$SLURM_CONF" "$TRAINJOB_BIN" "$@"; }
# job_file NAME REPLICAS SCRIPT
job_file() {
    cat >"$TMP/$1.yaml" <<EOF
workspace_name: default
name: $1
display_name: $1
framework: PYTORCH_DDP
resource_pool: {name: standard}
roles:
  - total_replicas: $2
    resource_spec: [{name: gpu-1}]
    image_path: local/host
    startup_script: "$3"
EOF
}

job_file pair 2 "sleep 300"
run tj submit -f "$TMP/pair.yaml"
expect_rc "a two-worker job is submitted" 0
expect_state "...and runs" pair RUNNING 60
# The workers run once the supervisor says so; their nodes from get workers.
n=0
until tj get workers pair 2>/dev/null | grep -q "worker-0 .*Running" || [ $n -gt 150 ]; do
    sleep 0.2
    n=$((n + 1))
done
tj get workers pair >"$TMP/workers" 2>&1
node0=$(awk '$1 == "worker-0" { print $3 }' "$TMP/workers")
id=$(squeue -h -n pair -o %i 2>/dev/null | head -n 1)
[ -n "$node0" ] && [ -n "$id" ] && pass "the job has a Slurm id ($id) and worker-0 a node ($node0)" ||
    fail "the job has a Slurm id and worker-0 a node" "id '$id', workers: $(cat "$TMP/workers")"

run ux exec pair -w worker-0 -- sh -c 'echo "JOB=$SLURM_JOB_ID NODE=$SLURMD_NODENAME"'
expect_rc "exec -w worker-0 -- CMD runs on Slurm (0)" 0
expect_grep "...as a step of the worker's own Slurm job, on its node" "$TMP/out" "JOB=$id NODE=$node0"
run ux exec pair -- hostname
expect_rc "exec -- hostname in the first running worker (0)" 0
[ -s "$TMP/out" ] && pass "...printing the node's host name" || fail "...printing the node's host name" "$(cat "$TMP/err")"
run ux exec pair -- sh -c 'exit 4'
expect_rc "the command's exit status is trainjob's (4)" 4
echo "from stdin" | ux exec -i pair -- cat >"$TMP/out" 2>"$TMP/err"
expect_grep "-i passes stdin through srun" "$TMP/out" "from stdin"

# A terminal: an interactive shell on the node through srun --pty.
tmux kill-session -t "$SESSION" 2>/dev/null
new_session -d -s "$SESSION" -x 80 -y 24 \
    "setpriv --reuid='$U' --regid='$U' --init-groups env TRAINJOB_CONFIG='$TRAINJOB_CONFIG' SLURM_CONF='$SLURM_CONF' TERM=tmux-256color '$TRAINJOB_BIN' exec pair; echo EXIT=\$?; sleep 60"
wait_screen '$ ' 20
keys '[ -t 0 ] && echo "IN-JOB-$((SLURM_JOB_ID + 0))"' Enter
see "exec in a terminal: an interactive shell in the Slurm job" "IN-JOB-${id:-none}" 20
keys "exit 6" Enter
see "...and its exit status when it ends" "EXIT=6" 20

# s on the job screen's Workers pane: the same srun, curses aside, the screen back after.
mkdir -p "$UD/home"
chown "$U" "$UD/home"
tmux kill-session -t "$SESSION" 2>/dev/null
new_session -d -s "$SESSION" -x 80 -y 24 \
    "setpriv --reuid='$U' --regid='$U' --init-groups env HOME='$UD/home' TRAINJOB_CONFIG='$TRAINJOB_CONFIG' SLURM_CONF='$SLURM_CONF' TERM=tmux-256color '$TRAINJOB_BIN' top --job pair; echo EXIT=\$?; sleep 60"
see "top --job pair opens the job's screen" "master-0" 20
keys s
see "s on the Workers pane opens a shell through srun" "a shell in pair/master-0" 20
wait_screen '$ ' 20
keys 'echo "IN-JOB-$((SLURM_JOB_ID + 0))"' Enter
see "...in the worker's Slurm job" "IN-JOB-${id:-none}" 20
keys 'exit 5' Enter
see "...and the job screen is back after exit" "Workers 2" 20
see "...with the status in the status line" "exited 5" 10
tmux kill-session -t "$SESSION" 2>/dev/null

# A finished job's worker.
job_file brief 1 "true"
run tj submit -f "$TMP/brief.yaml"
expect_state "a one-worker job succeeds" brief SUCCEEDED 90
run ux exec brief -w master-0 -- true
expect_rc "exec into its finished worker is refused (1)" 1
expect_grep "...saying it is not running and why" "$TMP/err" "worker master-0 is not running (Succeeded)"

cleanup
