# The live screens at 80×24, driven the way a person does (tmux, keys, the
# screen read back), against a real trainjobd on a private socket: the job
# screen opened by itself (`top --job`) loads its events; a refusal is an
# error, not a lost connection; the status line belongs to the screen that
# said it; the banner never writes over the header.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-live-$$"
. tests/tui.sh

# Loopback TCP too (AK/SK signed): over TCP the watch stream runs inside curl,
# where a request started from its callback used to be refused.
PORT=$(free_port) || { echo "FAIL no free TCP port below the ephemeral range"; exit 1; }
ENGINE_ARGS="--listen 127.0.0.1:$PORT"
GRACE=3 # a stop takes this long: the job ignores SIGTERM
engine_config nodes="sim 2 16" specs=gpu-1:1:1:512 <<EOF2
- name: team
  owners: [someone-else]
  members: [alice]
keys:
- {access_key: AKME, secret_key: SKME, user: $ME}
- {access_key: AKAL, secret_key: SKAL, user: alice}
EOF2
start_engine
mkdir -p "$HOME/.config/trainjob"
printf 'SKME\n' >"$HOME/.config/trainjob/me.sk"
printf 'SKAL\n' >"$HOME/.config/trainjob/alice.sk"
cat >"$HOME/.config/trainjob/config.yaml" <<EOF2
contexts:
- name: tcp
  endpoint: http://127.0.0.1:$PORT
  driver: trainjobd
  workspace: default
  access_key: AKME
  secret_key_file: $HOME/.config/trainjob/me.sk
- name: alice
  endpoint: http://127.0.0.1:$PORT
  driver: trainjobd
  workspace: team
  access_key: AKAL
  secret_key_file: $HOME/.config/trainjob/alice.sk
EOF2

start_top() { start_top_at "--endpoint '$EP'" "$@"; }
start_top_at() { # WHERE [ARGS...]
    where=$1
    shift
    start_tui 80 24 "$where top $*"
}

# A job that fails at once: its events are its state changes and the failure.
cat >"$TMP/broken.yaml" <<'EOF'
workspace_name: default
name: broken
display_name: broken
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: gpu-1}]
    image_path: local/host
    startup_script: |
      echo "about to fail"
      exit 3
fault_tolerance:
  backoff_limit: 0
EOF
run tj submit -f "$TMP/broken.yaml"
wait_state broken FAILED
expect_grep "the broken job fails" "$TMP/out" '"state": "FAILED"'

# The job screen opened by itself, from inside the watch stream's callback.
start_top --job broken
see "top --job opens the job's screen" "master-0" 10
see "...its events load" "RUNNING → FAILED" 10
gone "...with no 'cannot start a transfer'" "cannot start a transfer"
gone "...and no error about them" "events of broken"
gone "...the events pane is not empty" "no events yet"
keys Escape
see "Esc goes back to the jobs view" "broken"
keys q
see "q leaves top" "EXIT=0"

# The same over loopback TCP, where the stream's callback runs inside curl.
start_top_at "--context tcp" --job broken
see "over TCP, top --job opens the job's screen" "master-0" 10
see "...and its events load" "RUNNING → FAILED" 10
gone "...with no 'cannot start a transfer'" "cannot start a transfer"
keys Escape


# A status line belongs to the screen that said it.
start_top
see "top opens at 80×24" "broken"
keys f
see "f says it shows faulty jobs only" "showing faulty jobs only"
keys Enter
see "Enter opens the faulty job" "master-0" 10
gone "...where the jobs view's message is not shown" "showing faulty jobs only"
keys Escape
keys f
see "f again shows every job" "showing all jobs"

# A status about a job goes when the job's state moves, or the job goes.
sed -e 's/^name: broken/name: steady/' -e 's/^display_name: broken/display_name: steady/' \
    -e "s/exit 3/trap '' TERM; sleep 600/" "$TMP/broken.yaml" >"$TMP/steady.yaml"
run tj submit -f "$TMP/steady.yaml"
keys "/" C-u "steady" Enter
see "the steady job runs" "RUNNING" 20
keys s
see "s asks before stopping" "Stop steady?"
keys y
see "...then says it is stopping" "stopping 1 job"
see "...the job stops" "SUSPENDED" 20
gone "...and 'stopping 1 job' goes with it" "stopping 1 job"
keys Enter
see "the job screen's state history says who stopped it" "SUSPENDED  stopped by $ME" 10
keys Escape
keys S
see "S starts it again" "RUNNING" 20
keys p
see "p offers the priorities as a list" "New priority of steady"
see "...every one to the workspace's owner" "HIGHEST"
keys h Enter
see "...and says the job's new priority" "steady is now HIGH" 10
run tj delete steady
see "the job deleted elsewhere leaves the list" "jobs 1 " 20
gone "...and its priority message goes with it" "steady is now HIGH"
keys "/" C-u Enter

# A refusal is an error, not a lost connection with a retry loop.
keys : "ws nosuch" Enter
see ":ws nosuch is refused" "refused" 10
see "...saying why" "nosuch"
gone "...not as a disconnection" "DISCONNECTED"
sleep 2.5
screen
if grep -q "retry in" "$TMP/screen"; then fail "...and not retried" "$(cat "$TMP/screen")"; else pass "...and not retried"; fi
keys : "ws default" Enter
see ":ws default comes back live" "live" 15

# The DISCONNECTED banner leaves the header alone.
stop_engine
see "a stopped engine shows as disconnected" "DISCONNECTED" 10
see_row "...beside the header, not over it" "jobs 1" "DISCONNECTED"
start_engine
see "a restarted engine is picked up again" "live" 40

keys q
see "q leaves top" "EXIT=0"

# A member of a workspace (alice, over TCP; the engine's own user is an admin) is
# offered only the priority the engine takes from a member.
sed -e 's/^workspace_name: default/workspace_name: team/' -e 's/^name: broken/name: teamjob/' \
    -e 's/^display_name: broken/display_name: teamjob/' "$TMP/broken.yaml" >"$TMP/team.yaml"
run "$TRAINJOB_BIN" --context alice submit -f "$TMP/team.yaml"
expect_rc "a member submits a job to team" 0
start_top_at "--context alice"
see "top opens workspace team" "teamjob" 10
keys p
see "p on a member's job asks" "New priority of teamjob"
see "...saying why HIGH is not offered" "owners only; you are a member of team"
gone "...and offering no HIGH" "  HIGHEST"
keys Escape
keys q
see "q leaves top again" "EXIT=0"

# Triage at 80×24: the row count and the cursor's position, and the columns
# that matter (STATE, PRIORITY, WORKERS) not cut.
start_top
see "the jobs view shows the cursor's row of the rows shown" "1/1  jobs 1"
see_row "...STATE, PRIORITY and WORKERS titles whole" "STATE" "PRIORITY"
see "...WORKERS too" "WORKERS"
see_row "...and the row's state and priority whole" "FAILED" "NORMAL"
# Y copies the job's name through OSC 52 (tmux, with set-clipboard on, keeps it as a buffer).
tmux set -s set-clipboard on
keys Y
see "Y says it copied the job's name" "copied broken to the clipboard"
buf=$(tmux show-buffer 2>/dev/null)
if [ "$buf" = broken ]; then pass "...which the terminal has"; else fail "...which the terminal has" "buffer: $buf"; fi
keys q
see "q leaves top at last" "EXIT=0"

# "Mine": in team, alice sees her job and the engine's own user's; m leaves hers.
sed -e 's/^name: teamjob/name: adminjob/' -e 's/^display_name: teamjob/display_name: adminjob/' \
    "$TMP/team.yaml" >"$TMP/admin.yaml"
run tj --workspace team submit -f "$TMP/admin.yaml"
expect_rc "the engine's user submits a job to team too" 0
start_top_at "--context alice"
see "alice's top lists both jobs of team" "adminjob" 10
see "...hers too" "teamjob"
keys m
see "m shows only the jobs she created" "[mine]"
gone "...hiding the other user's" "adminjob"
see "...keeping hers" "teamjob"
keys m
see "m again shows every job" "adminjob"
keys q
see "q leaves alice's top" "EXIT=0"
