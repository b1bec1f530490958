# What trainjob says, where issue 22 found it said nothing or said it twice,
# driven the way the user met it (tmux at 80x24, the CLI, a real trainjobd):
#  - `c` (clone) on a job opens the wizard titled "clone of NAME", not "new
#    job", and shows no temporary file: not on the status line, not as F2's
#    suggested path;
#  - the clone's Fault tolerance (a rule, max restarts 0) says once that the
#    rules have no effect, not twice;
#  - a job whose back-off ends has no empty WAITING event ("-"): the event
#    says which wait is over.
# The engine and tmux are started here on temp dirs and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-wording-$$"
. tests/tui.sh

engine_config </dev/null
start_engine
submit sleeper "sleep 600"
check "a job that runs is accepted" test "$code" = 200
check "...runs" wait_for sleeper .state RUNNING 30
# exits 201 under a RESTART_POD rule: restarted twice, the second after a back-off of 10 s
submit bouncer "sleep 1; exit 201" \
    '.fault_tolerance = {backoff_limit: 2, rules: [{exit_codes: "201", action: "RESTART_POD"}]}'
check "a job whose worker exits 201 under RESTART_POD is accepted" test "$code" = 200

# ---- a clone ------------------------------------------------------------------

start_tui 80 24 "--endpoint '$EP' top"
see "top lists the job" "sleeper" 10
keys / sleeper Enter
keys c
see "c opens the wizard titled 'clone of sleeper'" "trainjob · clone of sleeper" 10
expect_no_grep "...not 'new job'" "$TMP/screen" "trainjob · new job"
expect_no_grep "...with no temporary file on screen" "$TMP/screen" "trainjob-clone-"
keys PgDn PgDn PgDn
see "...its Fault tolerance section" "Rules (first match wins)"
n=$(grep -c "no effect while max restarts" "$TMP/screen")
check "...says once that its rule has no effect while max restarts is 0 ($n)" test "$n" = 1
keys F2
see "F2 asks where to save" "Save the job"
expect_no_grep "...suggesting no temporary file" "$TMP/screen" "trainjob-clone-"
tmux kill-session -t "$SESSION" 2>/dev/null

# ---- events -------------------------------------------------------------------

check "the restarting job ends FAILED after its restarts" wait_for bouncer .state FAILED 60
run "$TRAINJOB_BIN" --endpoint "$EP" get events bouncer
expect_rc "get events" 0
expect_grep "...a back-off WAITING event" "$TMP/out" "back-off 10s restarting failed master-0"
if awk '$2 == "WAITING" && NF == 2 || $2 == "WAITING" && $3 == "-" { f = 1 } END { exit !f }' "$TMP/out"; then
    fail "...no WAITING event without text" "$(cat "$TMP/out")"
else
    pass "...no WAITING event without text"
fi
expect_grep "...the end of the back-off said as such" "$TMP/out" "no longer waiting: back-off 10s"

tui_cleanup
engine_cleanup
