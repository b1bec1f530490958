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
    start_tui 160 30 "--endpoint '$EP' new -f examples/pytorch-ddp.yaml"
    wait_screen "Basics" 10
    tmux send-keys -t "$SESSION" PgDn
    wait_screen "Resource spec"
    tmux send-keys -t "$SESSION" Tab Tab Tab
}

start_engine
LIMITS=$(curl -s --unix-socket "$SOCK" http://x/trainjob/v1/catalog | jq -r .resource_limits)
spec_hint
see "the spec hint shows the device total and the engine's limits" "total: 2 × 0 = 0 devices · limits $LIMITS"

stop_engine
mkdir -p "$TMP/no-cgroups"
start_engine --cgroup-root "$TMP/no-cgroups"
spec_hint
see "without cgroups the spec hint says limits are not enforced" "· limits not enforced: no cgroup v2 hierarchy"
