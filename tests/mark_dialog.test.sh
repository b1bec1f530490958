# The mark dialog in top (issue 22): `m` on the workers pane asks before
# marking the worker's node unschedulable for the job. On a pool of one node
# it says so specifically — the job will wait until the mark is lifted —
# and on a pool with another node it does not. Driven in tmux against a
# real trainjobd: one node, then two.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-markdlg-$$"
. tests/tui.sh

held() { # NAME SPEC
    cat >"$TMP/$1.yaml" <<EOF2
workspace_name: default
name: $1
display_name: $1
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: $2}]
    image_path: local/host
    startup_script: sleep 600
EOF2
    run tj submit -f "$TMP/$1.yaml"
    [ "$rc" -eq 0 ] || fail "submit $1" "$(cat "$TMP/err")"
}

# One node (n1) in pool std.
engine_config </dev/null
start_engine || { fail "the engine starts" "$(cat "$TMP/engine.log")"; exit 1; }
held only cpu-1
wait_state only RUNNING || fail "the job runs" "$(cat "$TMP/out")"
start_tui 100 30 "--endpoint '$EP' top --job only"
see "the job screen shows its worker on n1" "master-0" 10
keys m
see "m on the workers pane, a one-node pool: the dialog says n1 is the pool's only node" \
    "n1 is the only node of pool std" 5
see "...that the job will wait until the mark is lifted (u)" "until the mark is lifted" 2
keys Escape
gone "Esc closes the dialog" "the only node of pool"
run tj get events only
expect_no_grep "...and marks nothing" "$TMP/out" "marked unschedulable"
tmux kill-session -t "$SESSION" 2>/dev/null
stop_engine
end_workers "$STATE" # its job's worker outlives the engine: ended before its state goes

# Two nodes (n1, n2) in pool std: another node could take the job.
rm -rf "$STATE"
engine_config nodes="sim 2 16" specs="gpu-1:1:1:512" </dev/null
start_engine || { fail "the engine starts again" "$(cat "$TMP/engine.log")"; exit 1; }
held two gpu-1
wait_state two RUNNING || fail "the job runs" "$(cat "$TMP/out")"
start_tui 100 30 "--endpoint '$EP' top --job two"
see "the job screen shows its worker" "master-0" 10
keys m
see "m with another node in the pool: the general question" "unschedulable for two?" 5
screen
if grep -q "only node" "$TMP/screen"; then fail "...which does not call it the only node" "$(cat "$TMP/screen")"
else pass "...which does not call it the only node"; fi
keys Escape
