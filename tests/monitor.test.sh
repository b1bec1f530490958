# The live jobs view driven the way a person uses it: `trainjob top` in
# tmux against a real trainjobd on a private socket (started here, stopped
# and restarted by pid), keys typed with send-keys, the screen read back
# with capture-pane. A failing worker's restarts reach the workers and
# events panes and the job's end reaches the jobs view without a keypress;
# logs follow; filter, sort and stop work from the keyboard; a hostile job
# name is drawn harmlessly; a killed engine shows as disconnected and the
# view recovers when it is back.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-top-$$"
. tests/tui.sh

# Two simulated nodes with room for every job here, whatever this machine has.
engine_config nodes="sim 2 16" specs=gpu-1:1:1:512 </dev/null
start_engine

start_top() { # [ARGS...]
    start_tui 120 40 "--endpoint '$EP' top $*"
}

# A 2-worker job: rank 1 prints, then exits 201 each time; RESTART_POD, backoff 2.
cat >"$TMP/flaky.yaml" <<'EOF'
workspace_name: default
name: flaky
display_name: flaky
framework: PYTORCH_DDP
resource_pool:
  name: std
roles:
  - total_replicas: 2
    resource_spec:
      - name: gpu-1
    image_path: local/host
    startup_script: |
      echo "rank $RANK says hello"
      if [ "$RANK" = 1 ]; then sleep 2; echo "rank 1 failing"; exit 201; fi
      while true; do echo "rank $RANK tick"; sleep 1; done
fault_tolerance:
  backoff_limit: 2
  rules:
    - exit_codes: "201"
      action: RESTART_POD
EOF
# A quiet long job, and one whose display name carries escape sequences.
sed -e 's/^name: flaky/name: steady/' -e 's/^display_name: flaky/display_name: steady/' \
    -e '/exit 201/d' -e '/^fault_tolerance/,$d' "$TMP/flaky.yaml" >"$TMP/steady.yaml"

start_top
see "top opens the jobs view" "NAME"
see "...with the column titles" "RESTARTS"
see "...live on the watch stream" "live"

run tj submit -f "$TMP/steady.yaml"
see "a submitted job appears without a keypress" "steady"
see "...and reaches RUNNING" "RUNNING"
run tj submit -f "$TMP/flaky.yaml"
see "the flaky job appears" "flaky"

# Open the flaky job: workers and events.
keys "/" ; keys "flaky" Enter
see "the filter leaves the flaky job" "flaky"
gone "...and hides the steady one" "steady "
keys Enter
see "Enter opens the job" "worker-0"
see "the workers pane shows exit 201 on the failing worker" "201" 15
see "the events pane shows the matched rule and restarts 1/2" "restarts 1/2" 15
see "the job ends FAILED after the limit" "FAILED" 30
keys Escape
see "Esc goes back to the jobs view" "PRIORITY"
keys "/" C-u Enter
see "clearing the filter shows every job again" "steady"
see "the jobs view shows the flaky job FAILED" "FAILED"

# Logs of a worker follow new lines.
keys "/" C-u "steady" Enter
keys Enter
see "the steady job opens" "master-0"
keys l
see "the logs pane shows the worker's output" "says hello" 10
n1=$(grep -c "tick" "$TMP/screen")
sleep 3
screen
n2=$(grep -c "tick" "$TMP/screen")
if [ "$n2" -gt "$n1" ]; then pass "...and follows new lines"; else fail "...and follows new lines" "ticks $n1 → $n2: $(cat "$TMP/screen")"; fi
keys Escape
keys Escape
see "back to the jobs view" "PRIORITY"
keys "/" C-u Enter

# Sort: by name, then reversed (F6): the first row changes.
keys ">"
screen
first=$(grep -oE "flaky|steady" "$TMP/screen" | head -1)
keys F6
screen
second=$(grep -oE "flaky|steady" "$TMP/screen" | head -1)
if [ "$first" != "$second" ]; then pass "reversing the sort changes the order"; else fail "reversing the sort changes the order" "$first / $second"; fi

# Only the faulty jobs, and back.
keys f
see "f shows only faulty jobs" "[faulty only]"
gone "...hiding the healthy one" "steady "
keys f
see "f again shows every job" "steady"

# Marks: two jobs marked, one stop asks about both (answered no).
keys g Space Down Space
keys s
see "a stop with two marked jobs asks about both" "Stop 2 jobs"
keys n
gone "...and no leaves them alone" "Stop 2 jobs"
keys g Space Down Space

# The command line: a scheme by name, and a wrong command named.
keys : "theme mono" Enter
see ":theme switches the scheme" "theme mono"
keys : "theme nosuch" Enter
see "an unknown scheme is named once" "theme: unknown scheme 'nosuch'"
gone "...without a doubled prefix" "theme: theme:"
keys : "frobnicate" Enter
see "an unknown command says so" "unknown command :frobnicate"

# Stop from the jobs view: confirm, then the job is suspended.
keys "/" C-u "steady" Enter
keys s
see "stop asks first" "Stop steady?"
keys y
see "the stopped job shows SUSPENDED" "SUSPENDED" 15
run tj get job steady -o json
expect_grep "...on the engine too" "$TMP/out" '"state": "SUSPENDED"'

# Start it again (no question: nothing is lost).
keys S
see "S starts the stopped job again" "RUNNING" 15

# Save it as YAML: the path asked for, the file a valid job.
keys y
see "y asks where to save the job" "Save the job as YAML"
keys C-u "$TMP/saved.yaml" Enter
see "...and says where it went" "saved steady to"
run "$TRAINJOB_BIN" validate "$TMP/saved.yaml"
expect_rc "...a job file trainjob validate accepts" 0

# Clone it into the wizard: prefilled, and leaving it comes back here.
keys c
see "c clones the job into the wizard" "Resource pool" 10
see "...prefilled with its display name" "steady"
keys Escape
wait_screen "Leave without submitting?" 2 && keys y
see "...and leaving the wizard returns to the jobs view" "PRIORITY" 10

# Mark the node of a worker unschedulable for the job, from its screen.
keys Enter
see "the steady job opens again" "master-0"
keys m
see "m asks before marking the worker's node" "unschedulable for steady?"
keys y
see "...then marks it" "node marked unschedulable for steady"
see "...which the events pane shows" "marked unschedulable for this job" 10
keys Escape
keys Escape
see "back to the jobs view" "PRIORITY"
keys "/" C-u Enter

# Text from outside (here a worker's output) is drawn harmlessly.
cat >"$TMP/evil.yaml" <<'EOF'
workspace_name: default
name: evil
display_name: evil
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: gpu-1}]
    image_path: local/host
    startup_script: |
      printf 'be\033]0;pwned\007\033[2Jfore\n'
      sleep 600
EOF
run tj submit -f "$TMP/evil.yaml"
keys "/" C-u "evil" Enter
keys Enter
keys l
see "a log line with escape sequences shows" "before" 10
title=$(tmux display-message -p -t "$SESSION" '#{pane_title}')
if [ "$title" = pwned ]; then fail "a log line cannot retitle the terminal"; else pass "a log line cannot retitle the terminal"; fi
see "...nor clear the screen" "master-0"
keys Escape
keys Escape
keys "/" C-u Enter

# Delete from the job screen: confirmed, and the job leaves the jobs view.
keys "/" C-u "evil" Enter
keys Enter
see "the evil job's screen opens" "master-0"
keys D
see "delete asks first, from the job screen" "Delete evil?"
keys y
see "...and the job is gone from the list" "PRIORITY" 15
see "...for good (two jobs left)" "jobs 2 "
keys "/" C-u Enter

# Priority from the jobs view: asked for, then shown.
keys "/" C-u "steady" Enter
keys p
see "p asks for the new priority" "New priority of steady"
see "...as a list of what the engine takes" "HIGHEST"
keys h Enter
see "...and the job shows it" "HIGH" 10
keys "/" C-u Enter

# Another workspace by command: none there, so the view says why; back again.
keys : "ws nowhere" Enter
see ":ws switches the workspace" "workspace nowhere"
see "...whose refusal shows, as an error" "refused" 10
keys : "ws default" Enter
see "...and :ws default comes back live" "live" 15
see "...with its jobs" "flaky"

# Another context by command (config.yaml), on the same engine.
mkdir -p "$HOME/.config/trainjob"
cat >"$HOME/.config/trainjob/config.yaml" <<EOF
contexts:
  - name: second
    endpoint: $EP
    driver: trainjobd
    workspace: default
EOF
keys : "ctx second" Enter
see ":ctx switches to another context" "context second"
see "...live there too" "live" 15
see "...with the jobs of its workspace" "flaky"
keys : "ctx nosuch" Enter
see "a context that does not exist is named, and why" "context nosuch: cannot open it: "

# The help lists this screen's keys, from the keymap.
keys "?"
see "? shows the jobs view's keys" "stop-job"
see "...with what they do" "stop the job (it can be started again)"
keys Escape
see "Esc closes the help" "PRIORITY"

# Kill the engine: the view says so; start it again: it recovers by itself.
stop_engine
erc=$ENGINE_RC
# With our watch stream and a log follow parked in it, SIGTERM must still end it cleanly.
if [ "$erc" = 0 ]; then pass "trainjobd stops cleanly with streams open"; else fail "trainjobd stops cleanly with streams open" "exit $erc: $(tail -3 "$TMP/engine.log")"; fi
see "a killed engine shows as disconnected" "DISCONNECTED" 10
see "...with the age of the data" "data from"
keys j
see "...and the terminal still answers keys" "PRIORITY"
start_engine
see "a restarted engine is picked up again" "live" 40
gone "...and the banner goes" "DISCONNECTED"
see "...with the jobs still listed" "flaky"

# A context's theme: a wrong one does not lock anyone out (the default, and why).
cat >"$HOME/.config/trainjob/config.yaml" <<EOF
contexts:
  - name: second
    endpoint: $EP
    driver: trainjobd
    workspace: default
    theme: nosuch
EOF
start_tui 120 40 "--context second top"
see "a context naming a missing theme still opens top" "PRIORITY"
see "...and says what was wrong with the theme" "config.yaml theme:"
keys q

# Read-only top offers no actions.
start_top --readonly
see "top --readonly opens" "NAME"
keys s
see "...and refuses actions" "read-only"

keys q
see "q leaves top" "EXIT=0"

