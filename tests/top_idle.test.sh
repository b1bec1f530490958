# An idle `trainjob top` wakes at most once a second while the ages it shows
# tick each second, however many jobs were made at different instants of a
# second: the ages of all rows move together on the clock's whole second
# (tui/jobs_view's tick). Before, each row's age was its own timer, and ten
# thousand jobs made over a few seconds woke top ~75 times a second. Counted
# as top's context switches (voluntary and not) over a few seconds: work, not
# time.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-idle-$$"
. tests/tui.sh

engine_config </dev/null
start_engine

# Twelve jobs, each made at its own instant of a second (a submit takes some
# milliseconds; a pause of 70 ms spreads them over a second whatever they take).
i=0
while [ $i -lt 12 ]; do
    sleeper_job default "idle-$i" >"$TMP/j$i.yaml"
    tj submit -f "$TMP/j$i.yaml" >/dev/null 2>&1
    sleep 0.07
    i=$((i + 1))
done
run tj get jobs
expect_grep "twelve jobs to watch" "$TMP/out" "idle-11"

start_tui 120 40 "--endpoint '$EP' top"
see "top shows the jobs" "idle-11"
see "...live on the watch stream" "live"
pane=$(tmux display-message -p -t "$SESSION" '#{pane_pid}')
top_pid=$(ps -o pid= --ppid "$pane" | tr -d ' ' | head -1)
# switches [non] : top's voluntary context switches (each a sleep it woke
# from), or with "non" the times it was preempted, which grow with the
# machine's load (other suites run beside this one), not with top's work
switches() {
    awk -v k="${1:-}voluntary_ctxt_switches:" '$1 == k {print $2 + 0}' "/proc/$top_pid/status" 2>/dev/null
}
if [ -n "$top_pid" ] && [ -r "/proc/$top_pid/status" ]; then
    pass "top's process is found"
    sleep 1
    before=$(switches) pre0=$(switches non)
    sleep 4
    after=$(switches) pre1=$(switches non)
    n=$((after - before))
    # Four ticks of a second (each a timer's wake-up and a frame's few writes)
    # stay well under 20; a tick per row's second (12 a second, 48) does not.
    if [ "$n" -lt 20 ]; then pass "an idle top wakes about once a second ($n wake-ups in 4 s)"; else
        fail "an idle top wakes about once a second" "$n wake-ups in 4 s (and preempted $((pre1 - pre0)) times)"
    fi
else
    fail "top's process is found" "pane $pane: no child"
fi
screen
shown=$(grep -c "idle-" "$TMP/screen")
[ "$shown" -ge 12 ] && pass "...and still shows every job" || fail "...and still shows every job" "$(cat "$TMP/screen")"
