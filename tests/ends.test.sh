# Worker ends saved together (issue 14): every end trainjobd reads in one
# wave of status-directory events is saved in one store transaction (a
# store batch, as a scheduling pass's changes are), and each end's status,
# pid, claim and script files go only once that transaction has committed.
# Here 24 jobs end within moments of each other — 20 succeed, 4 fail with
# no restarts left — so waves hold many ends, and the test checks what must
# hold whatever the grouping: every job in its end state with its end event,
# none of their files left in the status directory, and the same states
# after a restart (the ends are on disk, not only in memory).
# The engine is started here on a temp dir and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

engine_config </dev/null
start_engine

i=0
while [ $i -lt 24 ]; do
    if [ $i -lt 20 ]; then
        submit "ok-$i" 'sleep 2'
    else
        submit "bad-$i" 'sleep 2; exit 3' '.fault_tolerance = {backoff_limit: 0}'
    fi
    [ "$code" = 200 ] || fail "ends: job $i is accepted" "code $code: $(cat "$TMP/body")"
    i=$((i + 1))
done

# all_in STATE FIRST LAST PREFIX : every job PREFIX-FIRST..LAST is in STATE within 60 s
all_in() {
    _i=$2
    while [ "$_i" -le "$3" ]; do
        wait_for "$4-$_i" .state "$1" 60 || return 1
        _i=$((_i + 1))
    done
}
check "ends: the 20 jobs that exit 0 are SUCCEEDED" all_in SUCCEEDED 0 19 ok
check "ends: the 4 that exit 3 with no restarts left are FAILED" all_in FAILED 20 23 bad

# Each job's end event was recorded with its end (events are held until their job is saved).
missing=""
i=0
while [ $i -lt 24 ]; do
    name=ok-$i want="exited 0"
    [ $i -lt 20 ] || name=bad-$i want="exited 3"
    api GET "$JOBS/$name/events"
    grep -q "master-0 $want" "$TMP/body" || missing="$missing $name"
    i=$((i + 1))
done
check "ends: every job's end event says how its worker exited" test -z "$missing"
[ -z "$missing" ] || echo "# no end event:$missing"

# The shims have written their status and trainjobd has read each: nothing of theirs is left.
left=""
n=0
while [ $n -lt 100 ]; do
    left=$(ls "$STATE/status" 2>/dev/null)
    [ -z "$left" ] && break
    sleep 0.05
    n=$((n + 1))
done
check "ends: no status, pid, claim or script file is left once the ends are saved" test -z "$left"
[ -z "$left" ] || echo "# left: $(echo "$left" | head -5 | tr '\n' ' ')"

stop_engine
start_engine
bad=""
i=0
while [ $i -lt 24 ]; do
    name=ok-$i want=SUCCEEDED
    [ $i -lt 20 ] || name=bad-$i want=FAILED
    [ "$(field "$name" .state)" = "$want" ] || bad="$bad $name=$(jq -r .state "$TMP/job")"
    i=$((i + 1))
done
check "ends: after a restart every job is still in its end state (the ends were committed)" \
    test -z "$bad"
[ -z "$bad" ] || echo "# changed:$bad"
stop_engine
