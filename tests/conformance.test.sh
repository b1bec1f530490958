# The conformance suite (issue 21): one set of scenarios, written once
# (tests/conformance/scenarios/), run through each backend's context —
# trainjobd (the suite's own engine on a Unix socket), the local Slurm
# cluster (tests/slurm/cluster.sh) and ACP (tests/tools/acpfake.py: a
# loopback server in the public schema's shapes, in front of the same
# engine). Each backend is started once (tests/conformance/backends/B.sh),
# every scenario runs on it and prints PASS/FAIL lines, or one UNSUPPORTED
# line with the backend's reason; then the parity table (scenario ×
# backend) is printed and written to $CONFORMANCE_TABLE when set (make
# conformance writes build/conformance.md). CONFORMANCE_BACKENDS=trainjobd,acp
# limits the backends, CONFORMANCE_SCENARIOS=lifecycle,logs the scenarios
# (a scenario may read the jobs of lifecycle: keep it in). Every service is started here and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

. tests/engine.sh
. tests/slurm/suite.sh
SESSION="tj-conf-$$"
TUI_ENGINE=none
. tests/tui.sh
. tests/conformance/lib.sh

CF_SLURM_STARTED=""
ACPFAKE_PID=""
cleanup() {
    tui_cleanup
    [ -n "$ACPFAKE_PID" ] && kill "$ACPFAKE_PID" 2>/dev/null
    [ -n "$CF_SLURM_STARTED" ] && slurm_stop
    engine_cleanup
    rm -rf "$TMP"
}

# The shared volume: the same directory on every backend (Slurm's nodes and
# trainjobd's sandbox both see it at its own path), writable by the user the
# workers run as, with the test tools the job files call.
chmod 755 "$TMP"
CF_VOL="$TMP/vol"
mkdir -p "$CF_VOL/bin"
for b in trainjobd slurm acp; do mkdir -p "$CF_VOL/$b/marks" "$CF_VOL/$b/tb"; done
cp "$(dirname "$TRAINJOBD_BIN")/tests/tools/tfwrite" "$CF_VOL/bin/tfwrite"
chmod -R a+rwX "$CF_VOL"
printf 'contexts:\n' >"$TRAINJOB_CONFIG"

# cf_engine_up: the suite's one trainjobd (both the trainjobd and acp
# backends use it): two simulated nodes, pool standard and spec gpu-1 as the
# Slurm cluster names them, workspaces default and acp, volume scratch; on
# its Unix socket (the suite's user) and on loopback TCP at $CF_ENGINE_TCP
# with an AK/SK for each user (AK-USER, SK-USER): the suite's, and tj-alice
# and tj-bob (two-users), members of both workspaces.
cf_engine_up() {
    [ -n "$ENGINE_PID" ] && return 0
    tj_users
    _port=$(free_port) || return 1
    CF_ENGINE_TCP=127.0.0.1:$_port
    ENGINE_ARGS="--listen $CF_ENGINE_TCP"
    engine_config nodes="sim 2 16" pools=standard specs=gpu-1:1:1:512 volume <<EOF2 || return 1
  members: [$TJ_ALICE, $TJ_BOB]
- name: acp
  owners: [$ME]
  members: [$TJ_ALICE, $TJ_BOB]
keys:
- {access_key: AK-$ME, secret_key: SK-$ME, user: $ME}
- {access_key: AK-$TJ_ALICE, secret_key: SK-$TJ_ALICE, user: $TJ_ALICE}
- {access_key: AK-$TJ_BOB, secret_key: SK-$TJ_BOB, user: $TJ_BOB}
EOF2
    start_engine
}

BACKENDS=$(echo "${CONFORMANCE_BACKENDS:-trainjobd,slurm,acp}" | tr ',' ' ')
t0=$(date +%s)
for CF_BACKEND in $BACKENDS; do
    if [ ! -f "$CF_DIR/backends/$CF_BACKEND.sh" ]; then
        echo "FAIL conformance/$CF_BACKEND: no such backend (tests/conformance/backends/)"
        continue
    fi
    . "$CF_DIR/backends/$CF_BACKEND.sh"
    for f in "$CF_DIR"/scenarios/[0-9]*.sh; do . "$f"; done
    b0=$(date +%s)
    if backend_up >"$TMP/up.log" 2>&1; then
        echo "PASS conformance/$CF_BACKEND: the backend is up ($(($(date +%s) - b0)) s)"
        for s in $(cf_scenarios); do cf_scenario "$s"; done
    else
        echo "FAIL conformance/$CF_BACKEND: the backend did not start: $(tail -c 800 "$TMP/up.log")"
        for s in $(cf_scenarios); do echo "$s $CF_BACKEND FAIL" >>"$CF_RESULTS"; done
    fi
    backend_down
    echo "conformance/$CF_BACKEND: $(($(date +%s) - b0)) s"
done

echo
echo "Parity table ($(($(date +%s) - t0)) s):"
cf_table $BACKENDS | tee "$TMP/table.md"
[ -z "${CONFORMANCE_TABLE:-}" ] || cp "$TMP/table.md" "$CONFORMANCE_TABLE"
# The README shows the table of every backend: it must be this run's
# (scripts/readme-parity.sh TABLE writes a new one into README.md).
if [ "$BACKENDS" = "trainjobd slurm acp" ] && [ -z "${CONFORMANCE_SCENARIOS:-}" ]; then
    if scripts/readme-parity.sh --check "$TMP/table.md" >"$TMP/parity.diff" 2>&1; then
        pass "README's parity table is the one this run produced"
    else
        fail "README's parity table is the one this run produced" \
            "$(cat "$TMP/parity.diff"); refresh it: make conformance && scripts/readme-parity.sh build/conformance.md"
    fi
fi
