# `trainjob exec` and `s` on the job screen's Workers pane against a real
# trainjobd run by root, its jobs run as their members' own users (issue 22):
#   - a command runs in the worker: its exit status is trainjob's, its
#     environment, working directory, namespaces (pid, mount, UTS, IPC),
#     cgroup and user are the worker's own, and it sees no more than the
#     worker (pid 1 is the sandbox's init, the engine's state directory and
#     /etc/shadow are out of reach);
#   - -w picks a worker; a missing one and a finished one are refused saying
#     so ("worker master-0 is not running (Succeeded)");
#   - a pseudo-terminal through tmux: an interactive shell, Ctrl-C to its
#     foreground command, the exit status back;
#   - `s` on the Workers pane at 80×24: curses steps aside for the shell
#     and the job screen is back after `exit` (and after the shell is
#     killed), the status in the status line; --readonly has no `s`;
#   - tj-alice runs a command in her job (as tj-alice); tj-bob is refused.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-exec-$$"
. tests/tui.sh
unset TRAINJOB_ENDPOINT XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR

tj_users || { fail "the test users exist" "tj_users could not make them (needs root)"; exit 1; }
engine_config <<EOF
  members: [$TJ_ALICE, $TJ_BOB]
limits: {streams_per_member: 1}
EOF
start_engine || { fail "the engine starts" "$(cat "$TMP/engine.log")"; exit 1; }
shared_tmp "$TMP/run"
chmod 0666 "$SOCK"
E="--endpoint $EP --workspace default"

# job_file NAME REPLICAS SCRIPT : a job at $TMP/NAME.yaml (readable by the test users).
job_file() {
    cat >"$TMP/$1.yaml" <<EOF
name: $1
display_name: $1
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: $2
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: |
$(printf '%s\n' "$3" | sed 's/^/      /')
env:
  - key: EXEC_PROBE
    value: from-the-job
EOF
    chmod 0644 "$TMP/$1.yaml"
}

# What the worker itself sees, written to its log for the checks below.
PROBE='echo "NS $(readlink /proc/self/ns/pid) $(readlink /proc/self/ns/mnt) $(readlink /proc/self/ns/uts) $(readlink /proc/self/ns/ipc)"
echo "CG $(sort /proc/self/cgroup | tr "\n" " ")"
echo "WHO $(id -u)"
echo "DIR $(pwd)"
sleep 600'
job_file box 2 "$PROBE"
run tj $E create -f "$TMP/box.yaml"
expect_rc "a two-worker job is created" 0
wait_state box RUNNING 30 || fail "box runs" "$(cat "$TMP/out")"
n=0
until tj $E logs box -w worker-0 2>/dev/null | grep -q "^DIR" || [ $n -gt 100 ]; do
    sleep 0.1
    n=$((n + 1))
done
tj $E logs box -w master-0 >"$TMP/wlog" 2>&1

# ---- a command, its exit status, what it sees ----------------------------------------
run tj $E exec box -- sh -c 'exit 7'
expect_rc "exec's exit status is the command's (7)" 7
run tj $E exec box -- sh -c 'echo "NS $(readlink /proc/self/ns/pid) $(readlink /proc/self/ns/mnt) $(readlink /proc/self/ns/uts) $(readlink /proc/self/ns/ipc)"
echo "CG $(sort /proc/self/cgroup | tr "\n" " ")"
echo "WHO $(id -u)"
echo "DIR $(pwd)"
echo "ENV $EXEC_PROBE $ECP_JOB_NAME"
echo "PID1 $(tr "\0" " " </proc/1/cmdline)"'
expect_rc "exec of a command in the default worker: 0" 0
for k in NS CG WHO DIR; do
    want=$(grep "^$k " "$TMP/wlog" | head -n1)
    got=$(grep "^$k " "$TMP/out" | head -n1)
    if [ -n "$want" ] && [ "$want" = "$got" ]; then pass "...the command's $k is master-0's ($want)"; else
        fail "...the command's $k is master-0's" "worker: '$want', command: '$got'"; fi
done
expect_grep "...with the worker's environment (the job's env and ECP_JOB_NAME)" "$TMP/out" \
    "ENV from-the-job box"
expect_grep "...and pid 1 is the sandbox's init" "$TMP/out" "PID1 /trainjob/init --init"
who=$(grep '^WHO ' "$TMP/out" | cut -d' ' -f2)
[ -n "$who" ] && [ "$who" != 0 ] && pass "...not root (uid $who)" || fail "...not root" "uid '$who'"

# No more than the worker sees: the engine's state directory and /etc/shadow.
run tj $E exec box -- sh -c "ls '$STATE' || echo NO-STATE; cat /etc/shadow || echo NO-SHADOW; ps -e 2>/dev/null | wc -l; ls /proc | grep -c '^[0-9]'"
expect_grep "...the engine's state directory is out of its reach" "$TMP/out" NO-STATE
expect_grep "...and /etc/shadow too" "$TMP/out" NO-SHADOW
procs=$(tail -n1 "$TMP/out")
host=$(ls /proc | grep -c '^[0-9]')
[ "${procs:-999}" -le 20 ] && [ "$host" -gt "$procs" ] &&
    pass "...it sees the sandbox's few processes ($procs), not the host's ($host)" ||
    fail "...it sees the sandbox's few processes, not the host's" "$procs pids of $host: $(cat "$TMP/out")"
run tj $E exec box -- sh -c 'cat /proc/self/status | grep -E "^(CapEff|CapBnd|NoNewPrivs)"'
expect_grep "...no capabilities" "$TMP/out" "CapEff:	0000000000000000"
expect_grep "...none to gain (bounding set empty)" "$TMP/out" "CapBnd:	0000000000000000"
expect_grep "...and no_new_privs, as the worker" "$TMP/out" "NoNewPrivs:	1"

# -w, a missing worker, stdin
tj $E logs box -w worker-0 >"$TMP/wlog0" 2>&1
run tj $E exec box -w worker-0 -- sh -c 'echo "NS $(readlink /proc/self/ns/pid) $(readlink /proc/self/ns/mnt) $(readlink /proc/self/ns/uts) $(readlink /proc/self/ns/ipc)"'
want=$(grep "^NS " "$TMP/wlog0" | head -n1)
[ -n "$want" ] && grep -qxF "$want" "$TMP/out" && pass "-w worker-0 enters worker-0's namespaces" ||
    fail "-w worker-0 enters worker-0's namespaces" "worker: '$want', command: $(cat "$TMP/out" "$TMP/err")"
run tj $E exec box -w nosuch -- true
expect_rc "a worker the job has not is refused (1)" 1
expect_grep "...saying so" "$TMP/err" "job 'box' has no worker 'nosuch'"
echo "through stdin" | tj $E exec -i box -- cat >"$TMP/out" 2>"$TMP/err"
expect_grep "-i passes stdin to the command" "$TMP/out" "through stdin"
echo "not passed" | tj $E exec box -- cat >"$TMP/out" 2>"$TMP/err"
expect_no_grep "...without -i the command's stdin is empty" "$TMP/out" "not passed"
run tj $E exec box -- /no/such/program
expect_rc "a command not found: 127, as a shell says" 127
expect_grep "...naming it" "$TMP/err" "/no/such/program"
run tj $E exec box ls
expect_rc "a command not after -- is a usage error (2)" 2
expect_grep "...that shows where it goes" "$TMP/err" "put the command after --"

# ---- completion ---------------------------------------------------------------------------
run tj $E __complete exec ""
expect_grep "completion: exec <Tab> offers the jobs" "$TMP/out" "box"
run tj $E __complete exec box -w ""
expect_grep "completion: exec JOB -w <Tab> offers its workers" "$TMP/out" "worker-0"
run tj $E __complete exec box --
expect_grep "completion: exec's options" "$TMP/out" "--tty"

# ---- a terminal, through tmux -----------------------------------------------------------
tmux kill-session -t "$SESSION" 2>/dev/null
new_session -d -s "$SESSION" -x 80 -y 24 \
    "env HOME='$HOME' TERM=tmux-256color '$TRAINJOB_BIN' $E exec box; echo EXIT=\$?; sleep 60"
wait_screen '$ ' 10
keys "[ -t 0 ] && [ -t 1 ] && echo TTY-OK-\$((6*7))" Enter
see "exec in a terminal: an interactive shell with a terminal of its own" "TTY-OK-42" 10
keys "sleep 100" Enter
sleep 0.5
keys C-c
keys "echo AFTER=\$?" Enter
see "...Ctrl-C goes to the shell's foreground command, not to trainjob" "AFTER=130" 5
keys "stty size" Enter
see "...the terminal's size is ours" "24 80" 5
keys "exit 5" Enter
see "...and exit ends it with the shell's status" "EXIT=5" 10

# ---- s on the Workers pane, 80×24 --------------------------------------------------------
start_tui -C "$TMP" 80 24 "$E top --job box"
see "top --job opens the job's screen" "master-0" 10
see "...its key bar offers s for the shell on the Workers pane" "s shell"
keys "?"
see "...and its help says what s does there" "a shell in the selected worker"
keys Escape
gone "...(the help closes)" "a shell in the selected worker"
keys C-k
see "...and the job still stops from there, with C-k (k9s's kill)" "Stop box?"
keys n
gone "...(not now)" "Stop box?"
keys s
see "s opens a shell in the selected worker" "a shell in box/master-0" 10
keys "echo IN-\$ECP_JOB_NAME; exit 3" Enter
see "...curses is back after exit: the job screen" "Workers 2" 10
see "...with the shell's status in the status line" "exited 3"
keys Down
keys s
see "s on worker-0: a shell there" "a shell in box/worker-0" 10
keys 'kill -9 $$' Enter
see "...a killed shell gives the screen back too" "Workers 2" 10
see "...saying how it ended" "exited 137"
keys q
start_tui -C "$TMP" 80 24 "$E top --readonly --job box"
see "top --readonly opens the job's screen" "master-0" 10
screen
grep -q "shell" "$TMP/screen" && fail "--readonly shows no shell key" "$(cat "$TMP/screen")" ||
    pass "--readonly shows no shell key"
keys "?"
see "...its help opens" "Keys"
screen
grep -q "a shell in the selected worker" "$TMP/screen" &&
    fail "...and lists no shell" "$(cat "$TMP/screen")" || pass "...and lists no shell"
keys Escape
keys s
gone "...and s opens none" "a shell in"
keys q

# ---- two users ----------------------------------------------------------------------------
job_file alices 1 'sleep 600'
run as_user "$TJ_ALICE" "$TRAINJOB_BIN" $E create -f "$TMP/alices.yaml"
expect_rc "$TJ_ALICE creates a job" 0
wait_state alices RUNNING 30 || fail "alice's job runs" "$(cat "$TMP/out")"
run as_user "$TJ_ALICE" "$TRAINJOB_BIN" $E exec alices -- id -un
expect_rc "$TJ_ALICE runs a command in her own job" 0
expect_grep "...as herself" "$TMP/out" "$TJ_ALICE"
as_user "$TJ_ALICE" "$TRAINJOB_BIN" $E exec alices -- sleep 5 >/dev/null 2>&1 &
held=$!
sleep 1
run as_user "$TJ_ALICE" "$TRAINJOB_BIN" $E exec alices -- true
expect_rc "a command running counts with her streams: one more past the limit is refused (1)" 1
expect_grep "...naming the limit" "$TMP/err" "limits.streams_per_member"
wait $held
# The helper answers, then ends; the engine gives the share back when it sees that end.
n=0
until as_user "$TJ_ALICE" "$TRAINJOB_BIN" $E exec alices -- true >"$TMP/out" 2>"$TMP/err" || [ $n -gt 50 ]; do
    sleep 0.1
    n=$((n + 1))
done
[ $n -le 50 ] && pass "...and once it ended she may run one again" ||
    fail "...and once it ended she may run one again" "$(cat "$TMP/err")"
run as_user "$TJ_BOB" "$TRAINJOB_BIN" $E exec alices -- id -un
expect_rc "$TJ_BOB's exec into $TJ_ALICE's job is refused (1)" 1
expect_grep "...saying only its creator may" "$TMP/err" "user '$TJ_BOB' may not exec in job 'alices', created by $TJ_ALICE"
expect_no_grep "...and nothing ran" "$TMP/out" "$TJ_ALICE"
run as_user nobody "$TRAINJOB_BIN" $E exec alices -- id -un
expect_rc "nobody (no member) is refused too" 1

# ---- a personal engine (a user's own, unprivileged bwrap: a user namespace) ---------------
P=$TMP/personal
mkdir -p "$P"
chown "$TJ_ALICE" "$P"
as_user "$TJ_ALICE" sh -c "HOME='$P' XDG_RUNTIME_DIR='$P' '$TRAINJOBD_BIN' --foreground --state-dir '$P/state' \
    --socket '$P/e.sock' --config '$P/engine.yaml' >'$P/log' 2>&1 & echo \$! >'$P/pid'"
PE="--endpoint http+unix://$P/e.sock --workspace default"
n=0
until as_user "$TJ_ALICE" env HOME="$P" "$TRAINJOB_BIN" $PE get jobs >/dev/null 2>&1 || [ $n -gt 100 ]; do
    sleep 0.1
    n=$((n + 1))
done
sed -e 's/^name: .*/name: mine/' -e 's/^display_name: .*/display_name: mine/' \
    -e 's/name: std}/name: local}/' "$TMP/box.yaml" >"$P/mine.yaml"
sed -i 's/total_replicas: 2/total_replicas: 1/' "$P/mine.yaml"
chmod 0644 "$P/mine.yaml"
mine() { as_user "$TJ_ALICE" env HOME="$P" "$TRAINJOB_BIN" $PE "$@"; }
run mine create -f "$P/mine.yaml"
expect_rc "$TJ_ALICE's own engine takes her job" 0
n=0
until mine logs mine 2>/dev/null | grep -q "^DIR" || [ $n -gt 150 ]; do sleep 0.1; n=$((n + 1)); done
mine logs mine >"$TMP/plog" 2>&1
run mine exec mine -- sh -c 'echo "NS $(readlink /proc/self/ns/pid) $(readlink /proc/self/ns/mnt) $(readlink /proc/self/ns/uts) $(readlink /proc/self/ns/ipc)"; echo "USERNS $(readlink /proc/self/ns/user)"; id -un; grep CapEff /proc/self/status'
expect_rc "exec in a personal engine's worker: 0" 0
want=$(grep "^NS " "$TMP/plog" | head -n1)
[ -n "$want" ] && grep -qxF "$want" "$TMP/out" && pass "...in the worker's namespaces" ||
    fail "...in the worker's namespaces" "worker: '$want'; command: $(cat "$TMP/out" "$TMP/err")"
mine exec mine -- readlink /proc/1/ns/user >"$TMP/wuser" 2>&1
grep -qF "USERNS $(cat "$TMP/wuser")" "$TMP/out" && pass "...its user namespace too (pid 1's)" ||
    fail "...its user namespace too (pid 1's)" "pid 1: $(cat "$TMP/wuser"); command: $(cat "$TMP/out")"
expect_grep "...as $TJ_ALICE" "$TMP/out" "$TJ_ALICE"
expect_grep "...with no capabilities there" "$TMP/out" "CapEff:	0000000000000000"
mine delete mine >/dev/null 2>&1
kill "$(cat "$P/pid")" 2>/dev/null
end_workers "$P/state"

# ---- a command ends with its worker ---------------------------------------------------------
job_file brief 1 'sleep 600'
run tj $E create -f "$TMP/brief.yaml"
wait_state brief RUNNING 30 || fail "brief runs" "$(cat "$TMP/out")"
# the job reads RUNNING as its worker starts; exec needs the worker itself Running
n=0
until tj $E get workers brief 2>/dev/null | grep -q " Running " || [ $n -gt 100 ]; do
    sleep 0.1
    n=$((n + 1))
done
tj $E exec brief -- sleep 6061 >"$TMP/bg.out" 2>"$TMP/bg.err" &
bg=$!
# ^sleep: the command itself, not trainjob's own argv that names it
n=0
until pgrep -f "^sleep 6061" >/dev/null || [ $n -gt 50 ]; do sleep 0.1; n=$((n + 1)); done
pgrep -f "^sleep 6061" >/dev/null && pass "a command runs in brief's worker (sleep 6061)" ||
    fail "a command runs in brief's worker (sleep 6061)" "$(cat "$TMP/bg.err")"
tj $E stop brief >/dev/null 2>&1
n=0
while kill -0 $bg 2>/dev/null && [ $n -lt 150 ]; do sleep 0.1; n=$((n + 1)); done
if kill -0 $bg 2>/dev/null; then
    fail "...exec returns when the worker is stopped" "still running after 15 s"
    kill $bg
else
    wait $bg
    brc=$?
    [ $brc -eq 137 ] && pass "...exec returns when the worker is stopped, the command killed (137)" ||
        fail "...exec returns when the worker is stopped, the command killed (137)" "exit $brc: $(cat "$TMP/bg.err")"
fi
pgrep -f "sleep 6061" >/dev/null && fail "...and nothing of it is left" "$(pgrep -af "sleep 6061")" ||
    pass "...and nothing of it is left"
zombies=$(ps -o stat= --ppid "$ENGINE_PID" | grep -c Z)
[ "$zombies" -eq 0 ] && pass "the engine leaves no exec helper unreaped" ||
    fail "the engine leaves no exec helper unreaped" "$(ps -o pid,stat,args --ppid "$ENGINE_PID")"

# ---- a finished worker ---------------------------------------------------------------------
job_file quick 1 'exit 0'
run tj $E create -f "$TMP/quick.yaml"
wait_state quick SUCCEEDED 30 || fail "quick succeeds" "$(cat "$TMP/out")"
run tj $E exec quick -w master-0 -- true
expect_rc "exec into a finished worker is refused (1)" 1
expect_grep "...saying it is not running and why" "$TMP/err" "worker master-0 is not running (Succeeded)"
run curl -s --unix-socket "$SOCK" -X POST -H "Connection: Upgrade" -H "Upgrade: trainjob-exec" \
    "http://x/trainjob/v1/workspaces/default/trainingJobs/quick/workers/master-0/exec"
expect_grep "the engine refuses it too, whatever the client checked" "$TMP/out" \
    "worker master-0 is not running (Succeeded)"
run curl -s --unix-socket "$SOCK" -X POST \
    "http://x/trainjob/v1/workspaces/default/trainingJobs/box/workers/master-0/exec"
expect_grep "an exec request without Upgrade is refused (426), naming the header" "$TMP/out" \
    "Upgrade: trainjob-exec"

cleanup
