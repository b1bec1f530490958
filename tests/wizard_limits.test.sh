# The wizard's resource-spec hint says whether trainjobd holds a worker to
# its spec (issue 10 item 3): the catalog's resource_limits, after the device
# total — "limits enforced (cgroup …)" where cgroups are usable, and "limits
# not enforced: <why>" where they are not (here: an engine pointed at an empty
# cgroup root). Driven in tmux against a real trainjobd, stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

SESSION="tj-wizard-limits-$$"
. tests/tui.sh

# spec_hint : opens the wizard on the DDP example and focuses the resource spec
spec_hint() {
    tmux kill-session -t "$SESSION" 2>/dev/null
    new_session -d -s "$SESSION" -x 160 -y 30 \
        "env HOME='$HOME' TERM=tmux-256color '$TRAINJOB_BIN' --endpoint '$EP' new -f examples/pytorch-ddp.yaml; sleep 60"
    wait_screen "Basics" 10
    tmux send-keys -t "$SESSION" PgDn
    wait_screen "Resource spec"
    tmux send-keys -t "$SESSION" Tab Tab Tab
}

start_engine
LIMITS=$(curl -s --unix-socket "$SOCK" http://x/trainjob/v1/catalog | jq -r .resource_limits)
spec_hint
see "the spec hint shows the device total and the engine's limits" "total: 2 × 0 = 0 devices · limits $LIMITS"

kill "$ENGINE_PID"
n=0
while [ $n -lt 50 ] && kill -0 "$ENGINE_PID" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
mkdir -p "$TMP/no-cgroups"
"$TRAINJOBD_BIN" --foreground --grace 1 --config "$TMP/engine.yaml" --state-dir "$TMP/state" \
    --socket "$SOCK" --cgroup-root "$TMP/no-cgroups" >>"$TMP/engine.log" 2>&1 &
ENGINE_PID=$!
i=0
while [ $i -lt 100 ] && ! curl -s -o /dev/null --unix-socket "$SOCK" http://x/trainjob/v1/catalog; do
    sleep 0.1
    i=$((i + 1))
done
spec_hint
see "without cgroups the spec hint says limits are not enforced" "· limits not enforced: no cgroup v2 hierarchy"
