# trainjobd's requests, overload and access, attacked the way issue 10 did,
# over its real Unix socket and loopback TCP with two (and more) AK/SK users:
#   a request that crashed it (%ff in a job name), half-sent connections that
#   used up its descriptors, unsigned bodies it buffered before checking the
#   signature, replayed and re-purposed signatures, workspaces created by
#   anyone, members changing other users' jobs.
# The engine is started here on a temp dir and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/hmac.sh
. tests/engine.sh
. tests/locale.sh

NETLOAD="$(dirname "$TRAINJOBD_BIN")/tests/tools/netload"
PORT=$(free_port) || { echo "FAIL no free TCP port below the ephemeral range"; exit 1; }
ENGINE_ARGS="--listen 127.0.0.1:$PORT"
# With the usual soft limit of 1024 descriptors, as a login shell gives it.
ENGINE_NOFILE=1024
API_TIMEOUT=10
JOB_SPEC=gpu-1
HOLD_PID=""
V1=/trainjob/v1/workspaces

cleanup() {
    [ -n "$HOLD_PID" ] && kill "$HOLD_PID" 2>/dev/null
    engine_cleanup
    rm -rf "$TMP"
}

# alice and bob are members of `shared`, carol owns it, dave is an admin; the
# user running the engine ($ME) is an admin without being listed.
engine_config nodes="sim 1 16" specs=gpu-1:1:1:256 volume <<EOF2
- name: shared
  owners: [carol]
  members: [alice, bob]
admins: [dave]
keys:
- {access_key: AKA, secret_key: SKA, user: alice}
- {access_key: AKB, secret_key: SKB, user: bob}
- {access_key: AKC, secret_key: SKC, user: carol}
- {access_key: AKD, secret_key: SKD, user: dave}
EOF2

start_engine

# as USER METHOD PATH [BODY] : over TCP, signed with USER's key (alice, bob, carol, dave)
as() {
    u=$(printf '%s' "$1" | cut -c1 | tr a-z A-Z)
    tcp_api "AK$u" "SK$u" "$PORT" "$2" "$3" "${4:-}"
}
alive() {
    kill -0 "$ENGINE_PID" 2>/dev/null && api GET /trainjob/v1/catalog && [ "$code" = 200 ]
}
msg_has() { jq -r .message "$TMP/body" | grep -q -- "$1"; }
rss() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$ENGINE_PID/status"; }

check "engine is up" alive

# --- 11: every decoded path segment and query value is checked before a handler ---
api DELETE "$V1/nosuchws/trainingJobs/%ff"
check "DELETE …/trainingJobs/%ff is a 400" test "$code" = 400
check "...naming the segment" msg_has "path segment 6 (after 'trainingJobs'): not valid UTF-8"
check "...and the engine is still up" alive
as alice DELETE "$ACP/shared/trainingJobs/%ff"
check "the same, signed over TCP, is a 400" test "$code" = 400
check "...and the engine is still up (TCP)" alive
api DELETE "$V1/default/trainingJobs/$(printf '%%c3%%a9%.0s' $(seq 1 126))"
check "a 252-byte name of é is answered, not cut inside a character" test "$code $(jq -r '.results[0].result' "$TMP/body")" = "200 NOT_FOUND"
api GET "$V1/default/trainingJobs/a%00b/events"
check "a %00 in the path is a 400" test "$code" = 400
api GET "$V1/default/trainingJobs/a%1b%5b2Jb"
check "an escape sequence in a segment is a 400" test "$code" = 400
api GET "$ACP/default/trainingJobs?filter=name%3D%27%ff%27"
check "a query value that is not UTF-8 is a 400 naming it" test "$code $(jq -r '.details[0].field' "$TMP/body")" = "400 filter"
api GET "$V1/default/trainingJobs/$(printf 'a%.0s' $(seq 1 300))"
check "a 300-byte segment is a 400" test "$code" = 400

# --- 14: signatures cover the request line and the body, once, within 5 minutes ---
as alice GET /trainjob/v1/catalog
check "alice's signed GET is accepted" test "$code" = 200
cp "$TMP/hdr" "$TMP/captured"
hmac_send "$TMP/captured" "$PORT" GET /trainjob/v1/catalog
check "the same request replayed is refused" test "$code" = 401
check "...saying the signature was used" msg_has "used before"
hmac_headers AKA SKA GET "$ACP/shared/trainingJobs" "" "$(hmac_now)" >"$TMP/get"
hmac_send "$TMP/get" "$PORT" POST "$ACP/shared/trainingJobs?training_job_name=hijack" "$(job_json hijack "sleep 300")"
check "a GET's headers reused on a POST are refused" test "$code" = 401
api GET "$ACP/shared/trainingJobs/hijack"
check "...and no job was created" test "$code" = 404
hmac_headers AKA SKA POST "$ACP/shared/trainingJobs?training_job_name=tamper" "$(job_json tamper "sleep 300")" "$(hmac_now)" >"$TMP/post"
hmac_send "$TMP/post" "$PORT" POST "$ACP/shared/trainingJobs?training_job_name=tamper" \
    "$(job_json tamper "sleep 300" | jq '.scheduling = {priority: "HIGHEST"}')"
check "a signed POST with a tampered body is refused" test "$code" = 401
check "...saying the digest does not match" msg_has "Digest"
hmac_headers AKA SKA GET /trainjob/v1/catalog "" "$(hmac_now '-6 minutes')" >"$TMP/stale"
hmac_send "$TMP/stale" "$PORT" GET /trainjob/v1/catalog
check "a date 6 minutes old is refused" test "$code" = 401
d=$(hmac_now)
s=$(printf 'x-date: %s' "$d" | openssl dgst -sha256 -hmac SKA -binary | base64)
printf 'X-Date: %s\nAuthorization: hmac accesskey="AKA", algorithm="hmac-sha256", headers="x-date", signature="%s"\n' "$d" "$s" >"$TMP/old"
hmac_send "$TMP/old" "$PORT" GET /trainjob/v1/catalog
check "a signature over x-date alone is refused on TCP" test "$code" = 401
check "...saying the request line must be signed" msg_has "request line"

# trainjob's own client signs the same way (submit, get, stop, delete over TCP).
mkdir -p "$HOME/.config/trainjob"
printf 'SKA\n' >"$HOME/.config/trainjob/alice.sk"
cat >"$HOME/.config/trainjob/config.yaml" <<EOF
current_context: alice
contexts:
- name: alice
  endpoint: http://127.0.0.1:$PORT
  driver: trainjobd
  workspace: shared
  access_key: AKA
  secret_key_file: $HOME/.config/trainjob/alice.sk
EOF
job_json by-client "sleep 300" | jq '.name = "by-client"' >"$TMP/by-client.json"
run "$TRAINJOB_BIN" --workspace shared submit -f "$TMP/by-client.json"
expect_rc "trainjob submit over TCP signs its POST" 0
run "$TRAINJOB_BIN" get jobs
expect_rc "trainjob get jobs over TCP" 0
expect_grep "...lists the job" "$TMP/out" by-client
# issue 12: under zh_CN.UTF-8 the X-Date went out as "二, 01 12月 2026 …" and was refused.
if zh_locale; then
    run env $ZH_ENV "$TRAINJOB_BIN" get jobs
    expect_rc "trainjob under zh_CN.UTF-8 signs a date the server takes" 0
    expect_grep "...and lists the job" "$TMP/out" by-client
    run env $ZH_ENV TRAINJOB_TEST_LOCALE=zh_CN.UTF-8 "$(dirname "$TRAINJOB_BIN")/tests/test_hmac"
    expect_rc "the signer's date tests pass under zh_CN.UTF-8" 0
    expect_no_grep "...none skipped" "$TMP/out" "SKIP"
fi
run "$TRAINJOB_BIN" --workspace shared stop by-client
expect_rc "trainjob stop over TCP" 0
run "$TRAINJOB_BIN" --workspace shared delete by-client
expect_rc "trainjob delete over TCP" 0

# --- 15: creating a workspace is an admin's act ---
as alice POST /trainjob/v1/workspaces '{"name": "mine"}'
check "a member cannot create a workspace" test "$code" = 403
check "...told it is an admin's act" msg_has "admin"
as dave POST /trainjob/v1/workspaces '{"name": "daves"}'
check "an admin listed in engine.yaml can" test "$code" = 200
api POST /trainjob/v1/workspaces '{"name": "owners"}'
check "the engine's own user, on the Unix socket, can" test "$code" = 200
check "...and engine.yaml does not list it as an admin" test "$(sed -n '/^admins:/,/^[a-z]/p' "$CONF" | grep -c -- "$ME")" = 0

# --- 16: members change only their own jobs; owners and admins change all ---
as alice POST "$ACP/shared/trainingJobs?training_job_name=j-alice" "$(job_json j-alice "sleep 300")"
check "alice creates j-alice" test "$code" = 200
as bob POST "$ACP/shared/trainingJobs?training_job_name=j-bob" "$(job_json j-bob "sleep 300")"
check "bob creates j-bob" test "$code" = 200
as bob GET "$ACP/shared/trainingJobs/j-alice"
check "bob may read alice's job" test "$code" = 200
as bob GET "$ACP/shared/trainingJobs?page_size=50"
check "bob lists both jobs" test "$(jq '.training_jobs | length' "$TMP/body")" = 2
as bob PATCH "$ACP/shared/trainingJobs/j-alice?update_mask=display_name" '{"display_name": "mine-now"}'
check "bob may not rename alice's job" test "$code" = 403
check "...told the rule" msg_has "change only the jobs they created"
as bob POST "$ACP/shared/trainingJobs:batchStop" '{"training_job_names": ["j-bob", "j-alice"]}'
check "bob may not stop alice's job, even in a batch with his own" test "$code" = 403
as bob GET "$ACP/shared/trainingJobs/j-bob"
st=$(jq -r .state "$TMP/body")
check "...and that batch stopped nothing ($st)" test "$code" = 200 -a "$st" != SUSPENDING -a "$st" != SUSPENDED
as bob DELETE "$ACP/shared/trainingJobs/j-alice"
check "bob may not delete alice's job" test "$code" = 403
as bob POST "$V1/shared/trainingJobs/j-alice:markNode" '{"node": "n1"}'
check "bob may not mark a node for alice's job" test "$code" = 403
as bob POST "$V1/shared/trainingJobs/j-alice:start"
check "bob may not start alice's job" test "$code" = 403
as bob PATCH "$ACP/shared/trainingJobs/j-bob?update_mask=display_name" '{"display_name": "bobs"}'
check "bob renames his own job" test "$code" = 200
as carol PATCH "$ACP/shared/trainingJobs/j-alice?update_mask=display_name" '{"display_name": "by-owner"}'
check "carol, the owner, renames alice's job" test "$code" = 200
as carol POST "$ACP/shared/trainingJobs:batchStop" '{"training_job_names": ["j-alice"]}'
check "carol stops alice's job" test "$code" = 200
as dave DELETE "$ACP/shared/trainingJobs/j-bob"
check "dave, an admin, deletes bob's job" test "$code" = 200
api DELETE "$ACP/shared/trainingJobs/j-alice"
check "the engine's user deletes alice's job" test "$code" = 200

# --- 13: unsigned bodies are refused on the headers, before a byte is read ---
before=$(rss VmRSS)
"$NETLOAD" bigpost "$PORT" 200 1048576 </dev/null >"$TMP/bigpost" 2>&1 &
load=$!
n=0
while [ $n -lt 100 ] && ! grep -q answered "$TMP/bigpost"; do sleep 0.1; n=$((n + 1)); done
peak=$(rss VmHWM)
check "200 unsigned 1 MB POSTs are each answered before their body is sent" grep -q "^answered 200 before-body; 401 200" "$TMP/bigpost"
check "...and engine memory stays bounded (${before} kB → peak ${peak} kB)" \
    test -n "$before" -a -n "$peak" -a "$((${peak:-0} - ${before:-0}))" -lt 61440
wait "$load"
check "...and the engine is still up" alive

# --- 12: half-sent requests over TCP do not block the owner's Unix socket ---
# 1500: more than the 1024 descriptors the engine was started with.
lines=$(wc -l <"$TMP/engine.log")
mkfifo "$TMP/hold"
"$NETLOAD" halfopen "$PORT" 1500 <"$TMP/hold" >"$TMP/halfopen" 2>&1 &
HOLD_PID=$!
exec 7>"$TMP/hold"
n=0
while [ $n -lt 100 ] && ! grep -q open "$TMP/halfopen"; do sleep 0.1; n=$((n + 1)); done
check "1500 half-sent requests are open over TCP" grep -q "^open 1500" "$TMP/halfopen"
api GET /trainjob/v1/catalog
check "...while the Unix socket still answers" test "$code" = 200
api GET "$ACP/default/trainingJobs"
check "...every time" test "$code" = 200
exec 7>&-
wait "$HOLD_PID"
HOLD_PID=""
n=0
while [ $n -lt 100 ]; do
    as alice GET /trainjob/v1/catalog
    [ "$code" = 200 ] && break
    sleep 0.1
    n=$((n + 1))
done
check "TCP answers again once the attacker has gone" test "$code" = 200
check "...and the attack added at most 200 lines to the engine's log" \
    test $(($(wc -l <"$TMP/engine.log") - lines)) -le 200
check "...and the engine is still up after it all" alive
