# Who is calling on the Unix socket, per connection: the kernel fixes the
# peer's credentials at connect, so trainjobd looks the user's name up (a
# read of the password database) for a connection's first request only, not
# for every request a keep-alive client sends on it (each read of
# /etc/passwd was ~2 % of the engine's time per job in bench D). Two Unix
# users on one engine: each keep-alive connection stays its own user's —
# tj-bob, after requests on his connection, still may not change tj-alice's
# job, and tj-alice may. strace counts the engine's opens of /etc/passwd.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
if [ "$(id -u)" != 0 ]; then
    echo "SKIP peer (needs root to make tj-alice and tj-bob)"
    exit 0
fi
if ! command -v strace >/dev/null 2>&1; then
    fail "strace is installed (scripts/deps.sh)" "no strace: the engine's opens cannot be counted"
    exit 1
fi
. tests/engine.sh

tj_users || { echo "FAIL cannot make the test users"; exit 1; }
TRACE_PID=""
cleanup() {
    [ -n "$TRACE_PID" ] && kill "$TRACE_PID" 2>/dev/null
    engine_cleanup
    rm -rf "$TMP"
}
trap cleanup EXIT

engine_config <<EOF
  members: [$TJ_ALICE, $TJ_BOB]
EOF
start_engine || exit 1
shared_tmp "$TMP/run"
chmod 0666 "$SOCK"

# on_one_connection USER ARGS… : one curl process as USER, its requests
# separated by --next (curl keeps the connection for all of them); the
# status of each in $TMP/codes, one a line
on_one_connection() {
    _u=$1
    shift
    as_user "$_u" curl -sS -m 30 "$@" >"$TMP/codes" 2>"$TMP/curl.err"
    cat "$TMP/curl.err" >&2
}
# One request's options (--next forgets the ones before): a list, a rename.
GET_LIST="--unix-socket $SOCK -o /dev/null -w %{http_code}\n http://x$JOBS"
RENAME='{"display_name":"renamed"}'

as_user "$TJ_ALICE" curl -s -o /dev/null --unix-socket "$SOCK" -X POST \
    -H 'Content-Type: application/json' --data-binary "$(job_json alicejob 'sleep 300')" \
    "http://x$JOBS?training_job_name=alicejob"
check "tj-alice creates a job" wait_for alicejob .display_name alicejob

# The engine's opens while one connection carries five requests.
strace -qq -f -p "$ENGINE_PID" -e trace=open,openat -o "$TMP/trace" &
TRACE_PID=$!
i=0
while [ $i -lt 100 ] && ! grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$ENGINE_PID/status"; do
    sleep 0.05
    i=$((i + 1))
done
# shellcheck disable=SC2086 # GET_LIST is words on purpose
on_one_connection "$TJ_BOB" $GET_LIST --next $GET_LIST --next $GET_LIST --next $GET_LIST \
    --next --unix-socket "$SOCK" -o /dev/null -w '%{http_code}\n' -X PATCH \
    -H 'Content-Type: application/json' --data-binary "$RENAME" \
    "http://x$JOBS/alicejob?update_mask=display_name"
kill "$TRACE_PID" 2>/dev/null
wait "$TRACE_PID" 2>/dev/null
TRACE_PID=""
check "tj-bob's four lists on one connection are answered" \
    test "$(head -n 4 "$TMP/codes" | tr '\n' ' ')" = "200 200 200 200 "
check "...and on that connection he is still tj-bob: he may not rename tj-alice's job (403)" \
    test "$(sed -n 5p "$TMP/codes")" = 403
passwd_opens=$(grep -c '"/etc/passwd"' "$TMP/trace")
check "the engine read /etc/passwd once for the connection's five requests (read $passwd_opens)" \
    test "$passwd_opens" -eq 1

# tj-alice, after a list on her own connection, is herself: she renames her job.
# shellcheck disable=SC2086
on_one_connection "$TJ_ALICE" $GET_LIST --next --unix-socket "$SOCK" -o /dev/null \
    -w '%{http_code}\n' -X PATCH \
    -H 'Content-Type: application/json' --data-binary "$RENAME" \
    "http://x$JOBS/alicejob?update_mask=display_name"
check "tj-alice, on her own connection, renames her job" \
    test "$(tr '\n' ' ' <"$TMP/codes")" = "200 200 "
check "...which shows the new name" wait_for alicejob .display_name renamed
