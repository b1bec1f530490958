# trainjob top on a Slurm cluster whose slurmrestd stops answering: the
# driver's calls run on top's event loop (http_multi), so while slurmrestd
# is SIGSTOPped (by its pid) top keeps reading keys and drawing — a key
# typed while a refresh is waiting for the server is acted on within half a
# second — and when slurmrestd is continued top recovers and shows a job
# submitted meanwhile. The old driver made each call blocking inside the
# loop, so the key waited for the server (60 s). Also: GET /jobs is
# incremental (?update_time=, 304 when nothing changed) and counted through
# TRAINJOB_HTTP_STATS; a token_command that hangs fails after 10 s naming
# itself.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

. tests/slurm/suite.sh
SESSION="tj-slurmloop-$$"
TUI_ENGINE=none # the cluster is the backend
. tests/tui.sh
REST_PID=
cleanup() {
    [ -n "$REST_PID" ] && kill -CONT "$REST_PID" 2>/dev/null
    tui_cleanup
    slurm_stop
    rm -rf "$TMP"
}
trap cleanup EXIT

slurm_start "the Slurm cluster starts"
REST_PID=$(cat "$CL/run/slurmrestd.pid")

chmod 640 "$TMP/token" # readable by its group: used, and warned about once
ln -s "$TMP/token" "$TMP/token-link"
export TRAINJOB_CONFIG="$TMP/config.yaml"
{
    printf 'current_context: lab\ncontexts:\n'
    slurm_context lab
    printf '    token_file: %s\n    workspace: default\n' "$TMP/token"
    slurm_context hang
    echo "    token_command: sleep 60"
    slurm_context link
    echo "    token_file: $TMP/token-link"
} >"$TRAINJOB_CONFIG"

job_file() { # NAME
    cat >"$TMP/$1.yaml" <<EOF
workspace_name: default
name: $1
display_name: $1
framework: PYTORCH_DDP
resource_pool:
  name: standard
roles:
  - total_replicas: 1
    resource_spec:
      - name: gpu-1
    image_path: local/host
    startup_script: |
      sleep 300
EOF
}

job_file slow
run tj submit -f "$TMP/slow.yaml"
expect_rc "a job is submitted" 0
expect_grep "...warning once that the token file is readable by its group" "$TMP/err" \
    "token_file $TMP/token is readable by its group (mode 0640)"
if [ "$(grep -c 'readable by' "$TMP/err")" = 1 ]; then pass "...once"; else fail "...once" "$(cat "$TMP/err")"; fi
run tj --context link get jobs
expect_grep "a token file that is a symlink is refused, naming it" "$TMP/err" "token_file $TMP/token-link is a symlink; refused"
# the name is the directory's: a second create of it is refused at once
run tj submit -f "$TMP/slow.yaml"
expect_grep "...a second create of the name is refused by its directory" "$TMP/err" "already used in workspace default"

TUI_ENV="TRAINJOB_CONFIG='$TRAINJOB_CONFIG' TRAINJOB_HTTP_STATS='$TMP/stats' LANG=C.UTF-8"
start_tui 140 30 "top --refresh 1"
if screen_has "RUNNING" 300 && grep -q "slow" "$TMP/screen"; then
    pass "top lists the running job"
else
    fail "top lists the running job" "$(cat "$TMP/screen")"
fi
if screen_has "is readable by its group (mode 0640)" 50; then
    pass "...and its status line says the token file is readable by its group"
else
    fail "...and its status line says the token file is readable by its group" "$(cat "$TMP/screen")"
fi

# slurmrestd stops answering; a refresh (every second) is soon waiting for it
kill -STOP "$REST_PID"
sleep 2.5
tmux send-keys -t "$SESSION" '?'
t0=$(date +%s%N)
if screen_has "Keys ·" 5; then
    pass "a key typed while slurmrestd hangs is acted on within 0.5 s"
else
    fail "a key typed while slurmrestd hangs is acted on within 0.5 s" "$(cat "$TMP/screen")"
fi
tmux send-keys -t "$SESSION" Escape
if screen_has "slow" 10 && ! grep -qF "Keys ·" "$TMP/screen"; then
    pass "...and the next key too"
else
    fail "...and the next key too" "$(cat "$TMP/screen")"
fi
sleep 1
kill -CONT "$REST_PID"
echo "note: slurmrestd stopped for $((($(date +%s%N) - t0) / 1000000 + 2500)) ms"

# recovered: a job submitted now shows up
job_file late
run tj submit -f "$TMP/late.yaml"
expect_rc "after slurmrestd answers again, a job is submitted" 0
if screen_has "late" 300; then
    pass "...and top shows it: it recovered"
else
    fail "...and top shows it: it recovered" "$(cat "$TMP/screen")"
fi
# idle: one GET /jobs a second at most, 304 while nothing changes
sleep 6
tmux send-keys -t "$SESSION" q
n=0
while [ ! -s "$TMP/stats" ] && [ $n -lt 50 ]; do
    sleep 0.1
    n=$((n + 1))
done
if grep -q "^slurm calls=" "$TMP/stats"; then
    pass "TRAINJOB_HTTP_STATS counts top's REST calls"
else
    fail "TRAINJOB_HTTP_STATS counts top's REST calls" "$(cat "$TMP/stats" 2>&1)"
fi
calls=$(sed -n 's/^slurm calls=\([0-9]*\) .* seconds=\([0-9]*\).*/\1 \2/p' "$TMP/stats" | head -1)
c=${calls% *}
s=${calls#* }
echo "note: top at --refresh 1: ${c:-?} REST calls in ${s:-?} s ($(cat "$TMP/stats"))"
if [ -n "$c" ] && [ -n "$s" ] && [ "$s" -gt 0 ] && [ $((c * 60 / s)) -le 90 ]; then
    pass "...at most about one list call a second ($((c * 60 / s)) a minute)"
else
    fail "...at most about one list call a second" "calls=$c seconds=$s"
fi
tui_cleanup

# a token_command that hangs: killed after 10 s, the error says so and names it
start=$(date +%s)
run tj --context hang get jobs
elapsed=$(($(date +%s) - start))
expect_grep "a hanging token_command times out" "$TMP/err" "timed out after 10 s"
expect_grep "...naming the context and the command" "$TMP/err" "context 'hang': token_command 'sleep 60'"
if [ $elapsed -ge 9 ] && [ $elapsed -le 20 ]; then pass "...after 10 s"; else fail "...after 10 s" "$elapsed s"; fi

run tj stop slow late
expect_rc "the jobs are stopped" 0
