# The job screen's log pane at 80×24, driven the way a person does (tmux,
# keys, the screen read back) against a real trainjobd on a private socket:
# `z` on the Logs pane puts the log on the whole screen and back; `e` jumps
# to the error line and marks it (the selected role) until the next move.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-logs-$$"
. tests/tui.sh

engine_config nodes="sim 1 16" specs=gpu-1:1:1:512 </dev/null
start_engine

# A job that writes 40 lines, one of them an error, then fails.
cat >"$TMP/noisy.yaml" <<'EOF'
workspace_name: default
name: noisy
display_name: noisy
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: gpu-1}]
    image_path: local/host
    startup_script: |
      i=1
      while [ $i -le 40 ]; do
        if [ $i = 12 ]; then echo "step 12 RuntimeError: boom"; else echo "step $i fine"; fi
        i=$((i + 1))
      done
      exit 3
fault_tolerance:
  backoff_limit: 0
EOF
run tj submit -f "$TMP/noisy.yaml"
wait_state noisy FAILED
expect_grep "the noisy job fails" "$TMP/out" '"state": "FAILED"'

start_tui -C "$TMP" 80 24 "--endpoint '$EP' top --job noisy"
see "top --job opens the job's screen" "master-0" 10
keys l
see "l shows the worker's log" "step 40 fine" 10
see "...under the workers pane" "Workers 1"
gone "...not yet on the whole screen" "z: back"

# z: the log on the whole screen (no summary, no workers pane), and back.
keys z
see "z puts the log on the whole screen" "z: back"
gone "...without the workers pane" "Workers 1"
screen
shown=$(grep -c "step [0-9]* fine" "$TMP/screen")
if [ "$shown" -ge 18 ]; then pass "...showing a screenful of lines"; else
    fail "...showing a screenful of lines" "$shown lines: $(cat "$TMP/screen")"; fi
keys z
see "z again brings the panes back" "Workers 1"
gone "...and leaves full screen" "z: back"
keys z
see "z on the log again: full screen" "z: back"
keys Escape
see "Esc leaves full screen first" "Workers 1"
see "...staying on the log" "Logs master-0"

# e: to the error line, marked until the next move. A row's look is the last run of
# SGR escapes before its text in the capture (tmux writes one only where the look changes).
look_of() { # TEXT
    tmux capture-pane -t "$SESSION" -p -e | tr "\n" "\r" |
        awk -v t="$1" '{ i = index($0, t); if (!i) exit; p = substr($0, 1, i - 1); s = "";
            while (match(p, /\033\[[0-9;]*m(\033\[[0-9;]*m)*/)) {
                s = substr(p, RSTART, RLENGTH); p = substr(p, RSTART + RLENGTH) }
            print "look:" s }' | cat -v
}
keys e
see "e jumps to the error line" "step 12 RuntimeError: boom"
marked=$(look_of "step 12 RuntimeError")
plain=$(look_of "step 13 fine")
if [ -n "$marked" ] && [ "$marked" != "$plain" ]; then
    pass "...and marks it (its row looks unlike the next one)"
else
    fail "...and marks it (its row looks unlike the next one)" "error row $marked, next row $plain"
fi
keys Up
see "Up moves the log" "step 11 fine"
after=$(look_of "step 12 RuntimeError")
plain=$(look_of "step 13 fine")
if [ -n "$after" ] && [ "$after" = "$plain" ] && [ "$after" != "$marked" ]; then
    pass "...and takes the mark away"
else
    fail "...and takes the mark away" "error row $after (marked: $marked), next row $plain"
fi
keys e
marked2=$(look_of "step 12 RuntimeError")
if [ "$marked2" = "$marked" ]; then pass "e marks it again"; else fail "e marks it again" "$marked2"; fi
keys n
after=$(look_of "step 12 RuntimeError")
if [ "$after" != "$marked" ]; then pass "...any key moves on from it (n)"; else fail "...any key moves on from it (n)" "$after"; fi

# S (on the Logs pane; the job screen's S starts a job elsewhere): the whole log to a
# file named in a prompt, written in one step, never over a file without asking.
tj logs noisy -w master-0 >"$TMP/noisy.expected" 2>&1
keys S
see "S asks where to save the log" "Save the whole log"
keys Escape
see "the key bar on the Logs pane offers S save" "S save"
keys "?"
see "? on the Logs pane lists the keys it takes first, under its own heading" "logs — a worker's log"
if grep -qE '^ +S +save-log ' "$TMP/screen"; then pass "...S among them (save-log)"; else
    fail "...S among them (save-log)" "$(cat "$TMP/screen")"
fi
if awk '/logs — a worker.s log/ { l = NR } /job — one job/ { j = NR } END { exit !(l && (!j || l < j)) }' "$TMP/screen" &&
    ! grep -qE '^ +S +start-job ' "$TMP/screen"; then
    pass "...before the job screen's keys, where S is not also listed as start-job"
else
    fail "...before the job screen's keys, where S is not also listed as start-job" "$(cat "$TMP/screen")"
fi
keys Escape
keys S
see "...offering ./JOB-WORKER.log" "./noisy-master-0.log"
keys Enter
see "Enter saves it" "saved to ./noisy-master-0.log" 10
if cmp -s "$TMP/noisy-master-0.log" "$TMP/noisy.expected"; then pass "...the log's own bytes, whole"; else
    fail "...the log's own bytes, whole" "$(head -c 300 "$TMP/noisy-master-0.log")"; fi
printf 'mine\n' >"$TMP/noisy-master-0.log"
keys S Enter
see "a file that exists is not replaced without asking" "Replace the file?"
keys Escape
see "...Esc keeps it" "not replaced: ./noisy-master-0.log"
if [ "$(cat "$TMP/noisy-master-0.log")" = mine ]; then pass "...untouched"; else
    fail "...untouched" "$(head -c 200 "$TMP/noisy-master-0.log")"; fi
keys S Enter Enter
see "...Enter there replaces it" "saved to ./noisy-master-0.log" 10
if cmp -s "$TMP/noisy-master-0.log" "$TMP/noisy.expected"; then pass "...with the whole log"; else
    fail "...with the whole log" "$(head -c 200 "$TMP/noisy-master-0.log")"; fi
keys S C-u Enter
see "an empty name saves nothing" "not saved: no file named"
keys S C-u "nodir/x.log" Enter
see "a file in no directory is not saved, saying why" "not saved to nodir/x.log" 10
keys a
see "a shows every worker's log" "all workers" 10
keys S
see "...where S offers ./JOB-all.log" "./noisy-all.log"
keys Enter
see "...and saves every worker's log" "saved to ./noisy-all.log" 10
expect_grep "...each headed with its worker" "$TMP/noisy-all.log" "==> master-0 <=="
expect_grep "...with its lines" "$TMP/noisy-all.log" "step 12 RuntimeError: boom"
keys Escape
see "Esc leaves the log" "Events"
keys q
see "q goes back to the jobs view" "jobs 1"
keys q
see "q leaves top" "EXIT=0"

# A user stop shows as stopped, not as `Failed 143`: in the workers pane, in
# the events, and to `get workers`; started again, the worker runs.
sed -e 's/^name: noisy/name: sleeper/' -e 's/^display_name: noisy/display_name: sleeper/' \
    -e '/^    startup_script: |/,/^fault_tolerance:/{/^      /d}' \
    -e 's/^    startup_script: |/    startup_script: sleep 600/' "$TMP/noisy.yaml" >"$TMP/sleeper.yaml"
run tj submit -f "$TMP/sleeper.yaml"
expect_rc "a sleeping job is accepted" 0
wait_state sleeper RUNNING
expect_grep "...runs" "$TMP/out" '"state": "RUNNING"'
run tj stop sleeper
wait_state sleeper SUSPENDED
expect_grep "stop suspends it" "$TMP/out" '"state": "SUSPENDED"'
run tj get workers sleeper
expect_grep "get workers says the worker stopped" "$TMP/out" "Stopped"
expect_no_grep "...not that it failed" "$TMP/out" "Failed"
expect_no_grep "...nor that it was killed" "$TMP/out" "SIGTERM"
start_tui 80 24 "--endpoint '$EP' top --job sleeper"
see "the stopped job's screen opens" "master-0" 10
see_row "...its worker Stopped" "master-0" "Stopped"
gone "...not Failed" "Failed"
see_row "...its last exit told as a stop" "Stopped" "143 stopped"
see "...and its events say why" "master-0 stopped by $ME (exit 143)" 10
run tj start sleeper
wait_state sleeper RUNNING
expect_grep "start runs it again" "$TMP/out" '"state": "RUNNING"'
see_row "...and the worker shows Running" "master-0" "Running"
gone "...no longer Stopped" "Stopped"
keys q
see "q goes back to the jobs view" "jobs 2"
keys q
see "q leaves top" "EXIT=0"
run tj delete sleeper
