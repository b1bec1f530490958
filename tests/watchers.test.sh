# Watchers that vanish while nothing changes (issue 14): 100 watch streams
# over a few thousand jobs read their first sync, park, then their clients
# close at once. No job changes, so only noticing the hang-up can free them:
# the engine must log "watch: 0 watchers", hold no more sockets than before,
# and its RSS must come back near where it was. Three rounds, so what one
# round keeps would add up. The engine is started here on a temp dir and
# stopped by pid (tests/engine.sh); jobs are seeded in process by
# tests/tools/seedjobs, which writes the config (one unschedulable node).
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

WATCHLOAD="$(dirname "$TRAINJOBD_BIN")/tests/tools/watchload"
SEEDJOBS="$(dirname "$TRAINJOBD_BIN")/tests/tools/seedjobs"
SEEDED=3000
WATCHERS=100
ROUNDS=3
SLACK_KB=$((8 * 1024)) # allocator noise; what one round kept was ~300 MB
# While they sync, each watcher's buffers are bounded whatever the job count
# (a refill batch and MHD's buffer): 640 KB, where a whole sync here is ~3 MB.
PEAK_PER_WATCHER_KB=640
PATH_WATCH="$JOBS?watch=true"

# check NAME COMMAND… : tests/engine.sh's, quiet, and a failure shows the engine's log
check() {
    name=$1
    shift
    if "$@" >/dev/null 2>&1; then pass "$name"; else fail "$name" "$(tail -n 5 "$TMP/engine.log")"; fi
}

proc_kb() { sed -n "s/^$1:[[:space:]]*\([0-9]*\).*/\1/p" "/proc/$ENGINE_PID/status"; }
rss_kb() { proc_kb VmRSS; }
fds() { ls "/proc/$ENGINE_PID/fd" | wc -l; }

# The last "watch: N watchers" line the engine logged is "watch: 0 watchers" (≤ 10 s).
wait_no_watchers() {
    i=0
    while [ $i -lt 100 ]; do
        [ "$(grep -o 'watch: [0-9]* watchers' "$TMP/engine.log" | tail -n 1)" = "watch: 0 watchers" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

run "$SEEDJOBS" "$CONF" "$STATE" "$SEEDED" w
expect_rc "watchers: $SEEDED jobs seeded" 0

ENGINE_UP_SECONDS=20
start_engine
curl -s -o /dev/null --unix-socket "$SOCK" "http://x$JOBS?page_size=500"
base_rss=$(rss_kb)
base_fds=$(fds)
# The peak from here on (VmHWM is reset by writing 5 to clear_refs).
echo 5 >"/proc/$ENGINE_PID/clear_refs" 2>/dev/null || base_rss=$(proc_kb VmHWM)

r=1
while [ $r -le $ROUNDS ]; do
    "$WATCHLOAD" watch "$SOCK" "$PATH_WATCH" "$WATCHERS" >"$TMP/watch$r" 2>&1
    expect_grep "watchers: round $r: $WATCHERS watchers read the first sync" "$TMP/watch$r" "synced $WATCHERS"
    check "watchers: round $r: the engine notices they left without any job changing" wait_no_watchers
    r=$((r + 1))
done
rss=$(rss_kb)
hwm=$(proc_kb VmHWM)
now_fds=$(fds)
echo "watchers: engine RSS $base_rss kB before, peak $hwm kB, $rss kB after $ROUNDS rounds of $WATCHERS; fds $base_fds -> $now_fds"
check "watchers: every socket is closed again" test "$now_fds" -le "$base_fds"
# AddressSanitizer keeps freed memory in quarantine: memory is measured only without it.
if grep -q __asan_init "$TRAINJOBD_BIN"; then
    echo "watchers: RSS not checked: $TRAINJOBD_BIN is built with AddressSanitizer"
else
    check "watchers: a syncing watcher's buffers stay bounded (peak)" \
        test "$hwm" -le $((base_rss + WATCHERS * PEAK_PER_WATCHER_KB))
    check "watchers: engine RSS is back near its baseline" test "$rss" -le $((base_rss + SLACK_KB))
fi
check "watchers: the engine still answers" curl -sf -o /dev/null --unix-socket "$SOCK" http://x/trainjob/v1/catalog

# A parked watcher hears of a job at once even when the POST's client closes
# its connection with the reply (Connection: close), so no later socket event
# runs the HTTP server again: the resumed watcher must not wait for one.
curl -sN --unix-socket "$SOCK" "http://x$PATH_WATCH" >"$TMP/live" 2>/dev/null &
CURL_PID=$!
i=0
while [ $i -lt 50 ] && ! grep -q SYNCED "$TMP/live"; do sleep 0.1; i=$((i + 1)); done
curl -s -o /dev/null --unix-socket "$SOCK" -H 'Connection: close' -X POST \
    -H 'Content-Type: application/json' \
    --data-binary '{"display_name":"late","framework":"PYTORCH_DDP","resource_pool":{"name":"std"},"roles":[{"total_replicas":1,"resource_spec":[{"name":"cpu-1"}],"image_path":"local/host","startup_script":"true"}]}' \
    "http://x$JOBS?training_job_name=late"
i=0
while [ $i -lt 50 ] && ! grep -q '"name":"late"' "$TMP/live"; do sleep 0.1; i=$((i + 1)); done
check "watchers: a parked watcher hears of a job whose POST closed its connection" \
    grep -q '"name":"late"' "$TMP/live"
kill "$CURL_PID" 2>/dev/null
