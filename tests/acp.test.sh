# The ACP client against two servers: trainjobd's ACP paths (a context with
# `driver: acp` on its socket) and a small fake here, shaped as ACP answers
# (schemas/acp.json of NotDesigned/SLAI-sensecore-tool; its batch replies
# carry no per-name result), for what trainjobd does not do: a missing
# name's 200, 401, 429/503 with Retry-After, a newer server's enum values.
# Checked as a user would: a file without workspace_name validates, renders
# and submits on the context's workspace; ACP's limit of 10 env vars holds;
# render prints the body submit sends; describe shows what ACP has; a job
# read with `get -o yaml` submits back, on ACP and on trainjobd; stop/delete
# of a missing job exit 1; errors name their status; User-Agent is the
# build's version. Both servers are started here and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

FAKE_PID=""
cleanup() {
    [ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null
    engine_cleanup
    rm -rf "$TMP"
}

mkdir -p "$TMP/vol"
engine_config volume </dev/null
start_engine || exit 1

PORT=$(free_port) || exit 1
cat >"$TMP/fake.py" <<'PY'
import json, sys, http.server
port, fixture, agents = int(sys.argv[1]), sys.argv[2], sys.argv[3]
job = json.load(open(fixture))
tries = {}
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def reply(self, code, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(code)
        for k, v in headers: self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        with open(agents, "a") as f: f.write(self.headers.get("User-Agent", "") + "\n")
        name = self.path.split("?")[0].rsplit("/", 1)[-1]
        tries[name] = tries.get(name, 0) + 1
        if name == "trainingJobs":
            return self.reply(200, {"training_jobs": [job], "total_size": 1, "next_page_token": ""})
        if name == "workers":
            return self.reply(200, {"workers": []})
        if name == job["name"]:
            return self.reply(200, job)
        if name == "busy" and tries[name] == 1:
            return self.reply(503, {"code": 14, "message": "unavailable"}, [("Retry-After", "1")])
        if name == "busy":
            return self.reply(200, dict(job, name="busy"))
        if name == "always-busy":
            return self.reply(429, {"code": 8, "message": "slow down"}, [("Retry-After", "0")])
        if name == "locked":
            return self.reply(401, {"code": 16, "message": "unauthenticated"})
        self.reply(404, {"code": 5, "message": "training job not found"})
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if ":batch" not in self.path:
            with open(agents + ".created", "wb") as f: f.write(body)
        self.reply(200, {})
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
python3 "$TMP/fake.py" "$PORT" tests/fixtures/acp/training-job-newer.json "$TMP/agents" \
    >"$TMP/fake.log" 2>&1 &
FAKE_PID=$!

cat >"$TMP/config.yaml" <<YAML
contexts:
  - name: acp
    driver: acp
    endpoint: http+unix://$SOCK
    subscription: local
    resource_group: default
    zone: local-1z
    workspace: default
  - name: engine
    driver: trainjobd
    endpoint: http+unix://$SOCK
  - name: fake
    driver: acp
    endpoint: http://127.0.0.1:$PORT
    workspace: share-space-01e
YAML
export TRAINJOB_CONFIG="$TMP/config.yaml"
T="$TRAINJOB_BIN"
n=0
until curl -s -o /dev/null "http://127.0.0.1:$PORT/x" || [ $n -ge 100 ]; do sleep 0.05; n=$((n + 1)); done
: >"$TMP/agents" # from here on, only trainjob asks

cat >"$TMP/job.yaml" <<'YAML'
display_name: acp-file
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: sleep 600
mount:
  - {id: scratch, mount_path: /mnt/scratch}
YAML

# ---- the request's workspace: --workspace, else the context's ---------------------

for verb in validate render; do
    run "$T" --context acp "$verb" "$TMP/job.yaml"
    expect_rc "$verb: a file without workspace_name takes the context's" 0
done
run "$T" --context acp submit -f "$TMP/job.yaml"
expect_rc "submit: a file without workspace_name goes to the context's workspace" 0
run "$T" --context acp validate --workspace other "$TMP/job.yaml"
expect_rc "validate: --workspace still wins over the context's" 0

# ---- ACP's limits on an ACP context ------------------------------------------------

{
    cat "$TMP/job.yaml"
    echo "env:"
    for i in 1 2 3 4 5 6 7 8 9 10 11; do echo "  - {key: V$i, value: x}"; done
} >"$TMP/env11.yaml"
run "$T" --context acp validate "$TMP/env11.yaml"
expect_rc "an ACP context holds a file to ACP's 10 env vars" 1
expect_grep "...and says the limit" "$TMP/err" "at most 10 variables"
run "$T" --context engine validate "$TMP/env11.yaml"
expect_rc "...trainjobd's context does not" 0

# ---- render prints the body submit sends ---------------------------------------------

run "$T" --context acp render -o json "$TMP/job.yaml"
expect_rc "render on an ACP context" 0
if [ -s "$TMP/out" ] && jq -e '(.scheduling.preemptible == null) and (.workspace_name == null) and
          (.mount[0].type == null) and (.ssh == null) and (.fault_tolerance == null) and
          (.state == null) and (.display_name == "acp-file")' "$TMP/out" >/dev/null; then
    pass "...is the body sent: no preemptible, workspace_name or defaults ACP fills itself"
else
    fail "...is the body sent: no preemptible, workspace_name or defaults ACP fills itself" \
        "$(head -c 600 "$TMP/out")"
fi
run "$T" --context engine render "$TMP/job.yaml"
expect_grep "render on trainjobd's context still fills the defaults (mount type)" "$TMP/out" "type: PV_AFS"

# ---- describe: what ACP has ----------------------------------------------------------------

# a job of the engine's own, made over its API (not by the client under test)
JOBNAME=seed
submit "$JOBNAME" 'sleep 600' '.mount = [{id: "scratch", mount_path: "/mnt/scratch"}]'
[ "$code" = 200 ] || fail "the engine takes a job over its API" "HTTP $code: $(head -c 300 "$TMP/body")"
run "$T" --context acp describe job "$JOBNAME"
expect_rc "describe on ACP shows the job" 0
expect_grep "...its state" "$TMP/out" "State:"
expect_grep "...its workers" "$TMP/out" "Workers:"
expect_grep "...and says in one line that events are not served" "$TMP/out" \
    "Events: not served by this backend"

# ---- get -o yaml, renamed, submits back: on ACP and on trainjobd --------------------------

for ctx in acp engine; do
    run "$T" --context "$ctx" get job "$JOBNAME" -o yaml
    sed "s/^name: .*/name: back-$ctx/" "$TMP/out" >"$TMP/back-$ctx.yaml"
    run "$T" --context "$ctx" validate "$TMP/back-$ctx.yaml"
    expect_rc "$ctx: a job read with get -o yaml validates" 0
    run "$T" --context "$ctx" submit -f "$TMP/back-$ctx.yaml"
    expect_rc "$ctx: ...and submits back" 0
    expect_grep "$ctx: ...as the new job" "$TMP/out" "job back-$ctx created"
done

# ---- a newer server: values trainjob does not know, kept as text ---------------------------

run "$T" --context fake get jobs
expect_rc "fake: get jobs" 0
expect_grep "a state this build does not know is shown as the server said it" "$TMP/out" "PREEMPTED"
expect_no_grep "...never as STATE_UNSPECIFIED" "$TMP/out" "STATE_UNSPECIFIED"
run "$T" --context fake get job jax-4f8k2p -o yaml
for v in PREEMPTED JAX PV_BOS RESTART_NODE URGENT ON_DEMAND "cpu: 64"; do
    expect_grep "get -o yaml keeps $v" "$TMP/out" "$v"
done
sed "s/^name: .*/name: jax-again/" "$TMP/out" >"$TMP/jax.yaml"
run "$T" --context fake validate "$TMP/jax.yaml"
expect_rc "...and that file validates (warned of the unknown values)" 0
expect_grep "...saying what is kept" "$TMP/err" "'RESTART_NODE' is not a value trainjob knows"
run "$T" --context fake submit -f "$TMP/jax.yaml"
expect_rc "...and submits back" 0
if jq -e '(.fault_tolerance.rules[0].action == "RESTART_NODE") and (.framework == "JAX") and
          (.roles[0].total_replicas == 4) and ([.roles[0].resource_spec[].replicas] == [null, null]) and
          (.state == null) and (.roles[0].resource_spec[0].limits == null)' \
    "$TMP/agents.created" >/dev/null 2>&1; then
    pass "...sending the values as the server said them, total_replicas alone, no output-only field"
else
    fail "...sending the values as the server said them, total_replicas alone, no output-only field" \
        "$(head -c 600 "$TMP/agents.created" 2>/dev/null)"
fi

# ---- stop/delete of a missing job; refusals with their status ---------------------------------

for verb in delete stop; do
    run "$T" --context fake "$verb" ghost
    expect_rc "$verb of a job ACP does not have exits 1" 1
    expect_grep "...saying it is not found" "$TMP/err" "ghost not found"
done
run "$T" --context fake delete jax-4f8k2p
expect_rc "delete of one it has exits 0" 0
run "$T" --context fake get job locked
expect_rc "401 exits 1" 1
expect_grep "...naming its status" "$TMP/err" "HTTP 401"
expect_grep "...and how to set the key" "$TMP/err" "secret_key_file"
run "$T" --context fake get job busy
expect_rc "503 with Retry-After is asked again, and then answers" 0
run "$T" --context fake get job always-busy
expect_rc "429 every time fails" 1
expect_grep "...naming the status and the tries" "$TMP/err" "after 3 tries"

# ---- User-Agent: the build's version ---------------------------------------------------------

want="trainjob/$("$T" --version | awk '{ print $2 }')"
if [ -s "$TMP/agents" ] && ! grep -qvxF "$want" "$TMP/agents"; then
    pass "User-Agent is $want"
else
    fail "User-Agent is $want" "$(sort -u "$TMP/agents" | head -3)"
fi
