# A newer server's words in the full-screen program (issue 21): a fake ACP,
# shaped as tests/acp.test.sh's, lists a job whose state (PREEMPTED) and
# priority (URGENT) this build does not know, a worker in a phase it does
# not know (Evicted), and a job whose state is hostile text (a title-setting
# escape, a colour, 60 characters). `top` shows each word as the server
# said it — cleaned, cut to its width — in the jobs view, the job screen's
# header and the workers pane; a filter on STATE takes it as a value of its
# own; `describe` says it too. The fake is started here and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
TUI_ENGINE=none # no trainjobd: the backend is the fake below
. tests/tui.sh
export LANG=C.UTF-8 LC_ALL=C.UTF-8
SESSION=unknown

FAKE_PID=""
cleanup() {
    [ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null
    tui_cleanup
    rm -rf "$TMP"
}
trap cleanup EXIT

PORT=$(free_port) || exit 1
cat >"$TMP/fake.py" <<'PY'
import json, sys, http.server
port, fixture = int(sys.argv[1]), sys.argv[2]
newer = json.load(open(fixture))  # state PREEMPTED, priority URGENT
hostile = dict(newer, name="hostile-job", uid="u-hostile", display_name="hostile",
               state="\u001b]2;PWNED\u0007PRE\u001b[31mEMPTED_THAT_GOES_ON_AND_ON_AND_ON_FOREVER")
plain = dict(newer, name="plain-run", uid="u-plain", display_name="plain", state="RUNNING",
             framework="PYTORCH_DDP", scheduling={"priority": "HIGH"})
jobs = {j["name"]: j for j in (newer, hostile, plain)}
worker = {"name": "worker-0", "role": "worker", "phase": "Evicted", "node_name": "node-7"}
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        parts = self.path.split("?")[0].split("/")
        if parts[-1] == "trainingJobs":
            return self.reply(200, {"training_jobs": list(jobs.values()),
                                    "total_size": len(jobs), "next_page_token": ""})
        if parts[-1] == "workers" and parts[-2] in jobs:
            return self.reply(200, {"workers": [worker]})
        if parts[-1] in jobs:
            return self.reply(200, jobs[parts[-1]])
        self.reply(404, {"code": 5, "message": "not found"})
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
python3 "$TMP/fake.py" "$PORT" tests/fixtures/acp/training-job-newer.json >"$TMP/fake.log" 2>&1 &
FAKE_PID=$!
cat >"$TMP/config.yaml" <<YAML
contexts:
  - name: fake
    driver: acp
    endpoint: http://127.0.0.1:$PORT
    workspace: share-space-01e
YAML
export TRAINJOB_CONFIG="$TMP/config.yaml"
n=0
until curl -s -o /dev/null "http://127.0.0.1:$PORT/x" || [ $n -ge 100 ]; do sleep 0.05; n=$((n + 1)); done

# ---- the CLI: describe says the server's word, cleaned ------------------------------

run "$TRAINJOB_BIN" --context fake describe job jax-4f8k2p
expect_rc "describe a job in a state this build does not know" 0
expect_grep "...says the state as the server did" "$TMP/out" "PREEMPTED"
expect_grep "...and the priority" "$TMP/out" "URGENT"
expect_no_grep "...never STATE_UNSPECIFIED" "$TMP/out" "STATE_UNSPECIFIED"
expect_grep "...and the worker's phase" "$TMP/out" "Evicted"
run "$TRAINJOB_BIN" --context fake describe job hostile-job
expect_rc "describe a job whose state is hostile text" 0
if grep -q "$(printf '\033')" "$TMP/out"; then fail "...no escape reaches the terminal" "$(od -c "$TMP/out" | head -5)"
else pass "...no escape reaches the terminal"; fi

# ---- top: the jobs view, its filter, the job screen, the workers pane ----------------

TUI_ENV="TRAINJOB_CONFIG='$TMP/config.yaml' LANG=C.UTF-8 LC_ALL=C.UTF-8"
start_tui 200 30 "--context fake top"
see "top lists the fake's jobs" "plain-run" 10
see_row "the jobs view shows the state as the server said it" "jax-4f8k2p" "? PREEMPTED"
see_row "...and the priority" "jax-4f8k2p" "URGENT"
see_row "a known state still reads as before" "plain-run" "RUNNING"
screen
expect_no_grep "...never as STATE_UNSPECIFIED" "$TMP/screen" "STATE_UNSPECIFIED"
see_row "a hostile state is cleaned and cut to its width" "hostile-job" "? PREEMPTED_T"
expect_no_grep "...its escape gone whole" "$TMP/screen" "PWNED"
expect_no_grep "...cut before its end" "$TMP/screen" "FOREVER"
title=$(tmux display-message -p -t "$SESSION" '#{pane_title}')
case $title in *PWNED*) fail "...setting no terminal title" "title: $title" ;;
*) pass "...setting no terminal title" ;; esac

keys "/"
keys "state=PREEMPTED" Enter
see "a filter on STATE takes the server's word as a value" "jax-4f8k2p"
gone "...of its own: not a known state's rows" "plain-run"
gone "...nor another word that starts like it" "hostile-job"

keys Enter
see "Enter opens the job's screen" "node-7" 10
see_row "the job screen's header says the state as the server did" "? PREEMPTED" "jax-4f8k2p"
see "...and the priority" "priority URGENT"
see_row "the workers pane says a phase this build does not know" "worker-0" "Evicted"
keys q
