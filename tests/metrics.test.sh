# Training curves from a job on a real trainjobd (issue 13): a job whose
# startup script writes TensorBoard event files into its tensorboard.log_path
# while it runs (tests/tools/scalarwrite, copied into its volume: the worker
# has no python) is read through GET …/scalars and `trainjob metrics`:
#  - csv, json and table print the expected values (NaN and Infinity kept);
#  - -f picks up points written later and ends when the job does, woken
#    by nothing while the job writes nothing (trainjobd pushes the pages);
#  - ?follow=true pushes pages: a new run directory is picked up, a run
#    swapped for a symlink gives nothing from outside, 50 clients that
#    vanish leave no descriptor in trainjobd, the stream ends with the job;
#  - small pages (limit=) deliver every point exactly once through the cursor;
#  - chart= (the Metrics pane's pages) sends the points a chart keeps of
#    10,000: a few per bucket, the first, the last, a spike and a dip among
#    them, each the value `metrics --logdir -o csv` prints for its step;
#  - --logdir reads a directory with no job: a corrupted record is skipped
#    and counted, a half-written last record is not yet a point; a 100 GB
#    hole (truncate -s) between two records is skipped and said as a hole
#    (where, how long; not as damage), also when tj-bob reads tj-alice's
#    file, and through the engine (trainjob metrics NAME,
#    eight ?follow=true streams at little CPU to trainjobd);
#  - a job that plants a symlink at its log path (or above it, or a run or an
#    event file linked out of the volume) gets nothing from outside it;
#  - an unknown job, a job without tensorboard, a hostile since= say so.
# The engine is started here on temp dirs and a Unix socket, stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

WRITER="$(dirname "$TRAINJOBD_BIN")/tests/tools/scalarwrite"
TFWRITE="$(dirname "$TRAINJOBD_BIN")/tests/tools/tfwrite"
E="--endpoint http+unix://$SOCK"
V1=/trainjob/v1/workspaces/default/trainingJobs
FOLLOW_PID=""
STREAM_PID=""

SPARSE_PIDS=""

cleanup() {
    for p in $SPARSE_PIDS; do kill "$p" 2>/dev/null; done
    [ -n "$FOLLOW_PID" ] && kill "$FOLLOW_PID" 2>/dev/null
    [ -n "$STREAM_PID" ] && kill "$STREAM_PID" 2>/dev/null
    engine_cleanup
    rm -rf "$TMP"
}

engine_config volume </dev/null
mkdir -p "$TMP/vol/train/bin" "$TMP/vol/evil" "$TMP/vol/evil2" "$TMP/vol/evil3/bin"
cp "$WRITER" "$TMP/vol/train/bin/scalarwrite"
cp "$WRITER" "$TMP/vol/evil3/bin/scalarwrite"
# Jobs of a root-run trainjobd never run as root: the volume is writable to them.
chmod -R a+rwX "$TMP/vol"
start_engine

# The volume as the worker sees it: /mnt/afs in the sandbox, else named in the environment.
VOLDIR='A=/mnt/afs; [ -d "$A/bin" ] || [ -z "${TRAINJOB_MOUNT_0:-}" ] || A="${TRAINJOB_MOUNT_0#*=}"'
# tb JOB SUBDIR : the jq filter giving a job volume scratch/SUBDIR at /mnt/afs, logs at /mnt/afs/tb
tb() { echo ".mount = [{id: \"scratch\", subdir: \"/$1\", mount_path: \"/mnt/afs\"}] | .tensorboard = {log_path: \"/mnt/afs/tb\"}"; }

# ---- a job writes its curves while it runs ------------------------------------

submit train "$VOLDIR"'
W="$A/bin/scalarwrite"
mkdir -p "$A/tb/rank0" "$A/tb/rank1"
"$W" "$A/tb/rank0/events.out.tfevents.1.host" loss=1:0.5 loss=2:0.25 acc=1:0.75
"$W" "$A/tb/rank1/events.out.tfevents.1.host" loss=1:0.625 loss=2:nan
touch "$A/written"
while [ ! -e "$A/go" ]; do sleep 0.05; done
"$W" "$A/tb/rank0/events.out.tfevents.1.host" loss=3:0.125 loss=4:inf
while [ ! -e "$A/end" ]; do sleep 0.05; done' "$(tb train)"
check "a job with a TensorBoard log path is accepted" test "$code" = 200
check "...runs" wait_for train .state RUNNING
n=0
while [ ! -e "$TMP/vol/train/written" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
check "...and writes its first event files" test -e "$TMP/vol/train/written"

api GET "$V1/train/scalars"
check "GET …/scalars answers 200" test "$code" = 200
check "...with the five points written" test "$(jq '.scalars | length' "$TMP/body")" = 5
check "...NaN as the string \"NaN\" (the reply stays JSON)" \
    test "$(jq -r '.scalars[] | select(.run == "rank1" and .step == 2) | .value' "$TMP/body")" = NaN
check "...the log path and a cursor" \
    test "$(jq -r '.log_path' "$TMP/body")" = /mnt/afs/tb -a -n "$(jq -r '.cursor' "$TMP/body")"
check "...nothing damaged, nothing more" \
    test "$(jq -c '[.bad_records.crc, .bad_records.protobuf, .more]' "$TMP/body")" = '[0,0,false]'
api GET "$V1/train/scalars?since=$(jq -r '.cursor | @uri' "$TMP/body")"
check "from its cursor, nothing new yet" test "$code" = 200 -a "$(jq '.scalars | length' "$TMP/body")" = 0

cat >"$TMP/want.csv" <<'EOF'
run,tag,step,wall_time,value
rank0,loss,1,1700000000.25,0.5
rank0,loss,2,1700000000.5,0.25
rank0,acc,1,1700000000.25,0.75
rank1,loss,1,1700000000.25,0.625
rank1,loss,2,1700000000.5,NaN
EOF
run "$TRAINJOB_BIN" $E metrics train -o csv
expect_rc "metrics NAME -o csv exits 0" 0
check "...and prints the expected values" cmp -s "$TMP/out" "$TMP/want.csv"
[ "$rc" = 0 ] && ! cmp -s "$TMP/out" "$TMP/want.csv" && diff "$TMP/want.csv" "$TMP/out" | head -20

run "$TRAINJOB_BIN" $E metrics train -o json
check "metrics -o json is a JSON array of the five points" test "$(jq length "$TMP/out")" = 5
check "...NaN kept as \"NaN\"" test "$(jq -r '.[4].value' "$TMP/out")" = NaN

run "$TRAINJOB_BIN" $E metrics train
expect_rc "metrics NAME (a table) exits 0" 0
check "...a header" sh -c "head -n 1 '$TMP/out' | grep -q '^RUN  *TAG  *STEP  *VALUE  *POINTS$'"
check "...the last loss of rank0 (step 2 of 2 points)" \
    sh -c "grep -Eq '^rank0 +loss +2 +0.25 +2$' '$TMP/out'"
check "...rank1's last loss is NaN" sh -c "grep -Eq '^rank1 +loss +2 +NaN +2$' '$TMP/out'"
check "...one row per run and tag" test "$(wc -l <"$TMP/out")" = 4

run "$TRAINJOB_BIN" $E metrics train -o csv --tag 'acc*'
check "--tag picks the tags it names" test "$(tail -n +2 "$TMP/out")" = "rank0,acc,1,1700000000.25,0.75"

# ---- -f follows what is written next, until the job ends ----------------------

# the file exists before the follower opens it: the checks below may come first
: >"$TMP/follow.csv"
"$TRAINJOB_BIN" $E metrics train -o csv -f >>"$TMP/follow.csv" 2>"$TMP/follow.err" &
FOLLOW_PID=$!
# rows LINES [SECONDS] : until the follower has printed LINES lines (bounded)
rows() {
    n=0
    while [ "$(wc -l <"$TMP/follow.csv")" -lt "$1" ] && [ $n -lt $((${2:-10} * 20)) ]; do
        sleep 0.05
        n=$((n + 1))
    done
    [ "$(wc -l <"$TMP/follow.csv")" -eq "$1" ]
}
check "metrics -f prints what is there" rows 6
# switches PID: the times the process went to sleep and was woken (both kinds)
switches() { awk '/ctxt_switches/ { n += $2 } END { print n }' "/proc/$1/status"; }
# Once it is asleep: printing the sixth row and reading the rest of that reply
# may still wake it after the rows are in the file (bounded: 2 s). A poller
# looks asleep for no more than its period, so it is still caught below.
w0=$(switches "$FOLLOW_PID")
n=0
while sleep 0.5 && w=$(switches "$FOLLOW_PID") && [ "$w" -ne "$w0" ] && [ $n -lt 4 ]; do
    w0=$w
    n=$((n + 1))
done
sleep 3
w1=$(switches "$FOLLOW_PID")
if [ "$w1" -eq "$w0" ]; then
    pass "...then, the job writing nothing, it is woken 0 times in 3 s (pushed, not polled)"
else
    fail "...then, the job writing nothing, it is woken 0 times in 3 s (pushed, not polled)" \
        "woken $((w1 - w0)) times (settled after $n half-seconds)"
fi
touch "$TMP/vol/train/go"
check "...then the points written later" rows 8
check "...in order, Infinity kept" sh -c "tail -n 2 '$TMP/follow.csv' | tr '\n' ' ' |
    grep -qxF 'rank0,loss,3,1700000000.75,0.125 rank0,loss,4,1700000001,Infinity '"
touch "$TMP/vol/train/end"
check "the job ends" wait_for train .state SUCCEEDED
n=0
while kill -0 "$FOLLOW_PID" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
check "...and so does metrics -f, by itself" sh -c "! kill -0 $FOLLOW_PID 2>/dev/null"
wait "$FOLLOW_PID" 2>/dev/null
check "...exiting 0" test $? = 0
FOLLOW_PID=""
check "...with nothing printed twice" test "$(sort "$TMP/follow.csv" | uniq -d | wc -l)" = 0

# ---- -f outlives an engine restart, continuing at its cursor --------------------

mkdir -p "$TMP/vol/long/bin"
cp "$WRITER" "$TMP/vol/long/bin/scalarwrite"
chmod -R a+rwX "$TMP/vol/long"
submit long "$VOLDIR"'
F="$A/tb/events.out.tfevents.1.host"
mkdir -p "$A/tb"
"$A/bin/scalarwrite" "$F" loss=1:1
while [ ! -e "$A/go" ]; do sleep 0.05; done
"$A/bin/scalarwrite" "$F" loss=2:2
while [ ! -e "$A/end" ]; do sleep 0.05; done' "$(tb long)"
wait_for long .state RUNNING
# the file exists before the follower opens it: the checks below may come first
: >"$TMP/follow.csv"
"$TRAINJOB_BIN" $E metrics long -o csv -f >>"$TMP/follow.csv" 2>"$TMP/follow.err" &
FOLLOW_PID=$!
check "a follower of another job has its first point" rows 2
stop_engine KILL
touch "$TMP/vol/long/go"
n=0 # the follower finds the engine gone (it polls each second)
while ! grep -q 'lost the engine' "$TMP/follow.err" && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
check "...which says so when the engine goes away" grep -q 'lost the engine.*reconnecting' "$TMP/follow.err"
start_engine
check "...and after an engine restart, the point written meanwhile" rows 3
check "...having said so once" test "$(grep -c 'lost the engine' "$TMP/follow.err")" = 1
touch "$TMP/vol/long/end"
wait_for long .state SUCCEEDED
n=0
while kill -0 "$FOLLOW_PID" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
wait "$FOLLOW_PID" 2>/dev/null
check "...ending with the job, exit 0" test $? = 0
FOLLOW_PID=""
check "...each point once" test "$(tail -n +2 "$TMP/follow.csv" | tr '\n' ' ')" = \
    ".,loss,1,1700000000.25,1 .,loss,2,1700000000.5,2 "

# ---- ?follow=true: the engine pushes pages as the job writes ---------------------

mkdir -p "$TMP/vol/stream/bin" "$TMP/outside2"
cp "$WRITER" "$TMP/vol/stream/bin/scalarwrite"
chmod -R a+rwX "$TMP/vol/stream"
submit stream "$VOLDIR"'
W="$A/bin/scalarwrite"
mkdir -p "$A/tb/rank0"
"$W" "$A/tb/rank0/events.out.tfevents.1.host" loss=1:1
while [ ! -e "$A/go" ]; do sleep 0.05; done
"$W" "$A/tb/rank0/events.out.tfevents.1.host" loss=2:2
while [ ! -e "$A/go2" ]; do sleep 0.05; done
mkdir -p "$A/tb/rank2/deep"
"$W" "$A/tb/rank2/deep/events.out.tfevents.1.host" late=1:3
while [ ! -e "$A/go3" ]; do sleep 0.05; done
mv "$A/tb/rank0" "$A/old0"
ln -s '"$TMP/outside2"' "$A/tb/rank0"
touch "$A/swapped"
while [ ! -e "$A/go4" ]; do sleep 0.05; done
"$W" "$A/tb/rank2/deep/events.out.tfevents.1.host" late=2:4
while [ ! -e "$A/end" ]; do sleep 0.05; done' "$(tb stream)"
wait_for stream .state RUNNING
SV="$TMP/vol/stream"
n=0
while [ ! -e "$SV/tb/rank0/events.out.tfevents.1.host" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
: >"$TMP/stream.ndjson"
curl -s -N --unix-socket "$SOCK" "http://x$V1/stream/scalars?follow=true" >"$TMP/stream.ndjson" &
STREAM_PID=$!
# has TEXT [SECONDS] : until the stream has brought a line holding TEXT (bounded)
has() {
    n=0
    while ! grep -qF "$1" "$TMP/stream.ndjson" && [ $n -lt $((${2:-10} * 20)) ]; do
        sleep 0.05
        n=$((n + 1))
    done
    grep -qF "$1" "$TMP/stream.ndjson"
}
check "follow=true sends a first page with what is there" has '"step":1,"wall_time":1700000000.25,"value":1}'
check "...a page is one JSON line, the non-follow reply's shape" \
    sh -c "head -n 1 '$TMP/stream.ndjson' | jq -e '.cursor and (.scalars | length) == 1' >/dev/null"
touch "$SV/go"
check "...a point appended later is pushed" has '"tag":"loss","step":2'
touch "$SV/go2"
check "...a run directory made after the follow started is picked up" has '"run":"rank2/deep"'
# 50 clients that connect and vanish leave no descriptor (inotify, watch, socket) behind
fds() { ls "/proc/$ENGINE_PID/fd" | wc -l; }
before=$(fds)
i=0
PIDS=""
while [ $i -lt 50 ]; do
    curl -s -N --unix-socket "$SOCK" "http://x$V1/stream/scalars?follow=true" >"$TMP/gone.$i" &
    PIDS="$PIDS $!"
    i=$((i + 1))
done
n=0
while [ "$(cat "$TMP"/gone.* | grep -c cursor)" -lt 50 ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
check "50 more followers each get their first page" test "$(cat "$TMP"/gone.* | grep -c cursor)" = 50
during=$(fds)
for p in $PIDS; do kill "$p" 2>/dev/null; done
for p in $PIDS; do wait "$p" 2>/dev/null; done
n=0
while [ "$(fds)" -gt "$before" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
check "...and when they vanish the engine holds no more descriptors than before ($before, $during with them)" \
    test "$(fds)" -le "$before" -a "$during" -gt $((before + 50))
rm -f "$TMP"/gone.*
touch "$SV/go3"
n=0
while [ ! -e "$SV/swapped" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
"$WRITER" "$TMP/outside2/events.out.tfevents.1.host" stolen=1:42
touch "$SV/go4"
check "a run swapped for a symlink while followed: the stream goes on" has '"tag":"late","step":2'
check "...and brings nothing from where the symlink points" sh -c "! grep -q stolen '$TMP/stream.ndjson'"
touch "$SV/end"
wait_for stream .state SUCCEEDED
n=0
while kill -0 "$STREAM_PID" 2>/dev/null && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
check "the stream ends by itself when the job ends" sh -c "! kill -0 $STREAM_PID 2>/dev/null"
wait "$STREAM_PID" 2>/dev/null
STREAM_PID=""
check "...with a last line saying so" sh -c "tail -n 1 '$TMP/stream.ndjson' | jq -e '.end == \"ended\"' >/dev/null"
check "...every point once" test "$(jq -c '.scalars[]? | [.run, .tag, .step]' "$TMP/stream.ndjson" | sort | uniq -d | wc -l)" = 0 \
    -a "$(jq -c '.scalars[]?' "$TMP/stream.ndjson" | wc -l)" = 4
curl -s -m 10 -N --unix-socket "$SOCK" "http://x$V1/stream/scalars?follow=true" >"$TMP/ended.ndjson"
check "following an ended job sends everything, then the end" \
    test "$(jq -c '.scalars[]?' "$TMP/ended.ndjson" | wc -l)" = 2 -a "$(tail -n 1 "$TMP/ended.ndjson" | jq -r .end)" = ended

# ---- pages: limit= cuts a backlog, the cursor delivers each point once ---------

pages=0
cursor=""
: >"$TMP/paged"
while [ $pages -lt 50 ]; do
    api GET "$V1/train/scalars?limit=40&since=$cursor"
    [ "$code" = 200 ] || break
    jq -c '.scalars[] | [.run, .tag, .step]' "$TMP/body" >>"$TMP/paged"
    cursor=$(jq -r '.cursor | @uri' "$TMP/body")
    pages=$((pages + 1))
    [ "$(jq -r .more "$TMP/body")" = true ] || break
done
check "a 40-byte limit pages the backlog" test "$pages" -gt 2
check "...every point once, in all seven" \
    test "$(wc -l <"$TMP/paged")" = 7 -a "$(sort "$TMP/paged" | uniq -d | wc -l)" = 0
api GET "$V1/train/scalars?limit=0"
check "limit=0 is refused, naming limit" \
    test "$code" = 400 -a "$(jq -r '.details[0].field' "$TMP/body")" = limit

# ---- chart=: the points a chart keeps, exactly as written ------------------------

mkdir -p "$TMP/vol/curves/tb"
"$TFWRITE" "$TMP/vol/curves/tb/events.out.tfevents.1.x" 0 5000 loss
"$WRITER" "$TMP/vol/curves/tb/events.out.tfevents.1.x" loss=5000:1000.5
"$TFWRITE" "$TMP/vol/curves/tb/events.out.tfevents.1.x" 5001 2000 loss
"$WRITER" "$TMP/vol/curves/tb/events.out.tfevents.1.x" loss=7001:-3.25
"$TFWRITE" "$TMP/vol/curves/tb/events.out.tfevents.1.x" 7002 2998 loss
chmod -R a+rwX "$TMP/vol/curves"
submit curves true "$(tb curves)"
check "a job whose log directory holds 10,000 points is accepted" test "$code" = 200
api GET "$V1/curves/scalars?chart=16&limit=8388608"
check "chart=16 answers 200" test "$code" = 200
jq -r '.scalars[] | "\(.step) \(.value)"' "$TMP/body" >"$TMP/chart"
n=$(wc -l <"$TMP/chart")
check "...with at most 5 points a bucket, not all 10,000 ($n)" test "$n" -le 80 -a "$n" -ge 16
check "...the first and the last step among them" \
    test "$(head -n 1 "$TMP/chart" | cut -d' ' -f1)" = 0 -a "$(tail -n 1 "$TMP/chart" | cut -d' ' -f1)" = 9999
check "...the spike and the dip among them" \
    grep -qx '5000 1000.5' "$TMP/chart" && grep -qx -- '7001 -3.25' "$TMP/chart"
"$TRAINJOB_BIN" metrics --logdir "$TMP/vol/curves/tb" -o csv >"$TMP/curves.csv"
# each charted point is the file's own (step, value): as numbers, the CSV's text read by jq
jq -n --rawfile csv "$TMP/curves.csv" --slurpfile page "$TMP/body" '
    ($csv | split("\n") | .[1:] | map(select(length > 0) | split(",")) |
        map({key: .[2], value: (.[4] | tonumber)}) | from_entries) as $all |
    [$page[0].scalars[] | select($all[(.step | tostring)] != .value)] | length' >"$TMP/diff"
check "...each point the value the file holds for its step" test "$(cat "$TMP/diff")" = 0
api GET "$V1/curves/scalars?chart=1"
check "chart=1 is refused, naming chart" \
    test "$code" = 400 -a "$(jq -r '.details[0].field' "$TMP/body")" = chart

# ---- --logdir: any directory, no job -------------------------------------------

mkdir -p "$TMP/fx/a/deep"
"$WRITER" "$TMP/fx/events.out.tfevents.1.x" lr=1:0.001 -c lr=2:9 lr=3:0.003
"$WRITER" "$TMP/fx/a/deep/events.out.tfevents.2.x" 'loss/train=10:-1.5' -p
run "$TRAINJOB_BIN" metrics --logdir "$TMP/fx" -o csv
expect_rc "metrics --logdir needs no job and no engine" 0
check "...runs at any depth, the root as \".\", the bad-CRC record skipped" test "$(tail -n +2 "$TMP/out" | tr '\n' ' ')" = \
    ".,lr,1,1700000000.25,0.001 .,lr,3,1700000000.75,0.003 a/deep,loss/train,10,1700000002.5,-1.5 "
check "...the damage said on stderr" grep -q "skipped 1 damaged record" "$TMP/err"
check "...a half-written last record is not a point (nor damage)" sh -c "! grep -q partial '$TMP/out'"
run "$TRAINJOB_BIN" $E metrics train -o csv
cp "$TMP/out" "$TMP/job.csv"
run "$TRAINJOB_BIN" metrics --logdir "$TMP/vol/train/tb" -o csv
check "--logdir on the job's own directory prints what the endpoint did" \
    test "$(wc -l <"$TMP/out")" = 8 -a -z "$(cmp "$TMP/out" "$TMP/job.csv")"
run "$TRAINJOB_BIN" metrics --logdir "$TMP/nowhere"
expect_rc "--logdir of a missing directory exits 2" 2
expect_grep "...naming it" "$TMP/err" "$TMP/nowhere"

# A 100 GB hole between two records (truncate: nothing on disk) is skipped, not scanned.
mkdir -p "$TMP/sparse"
"$WRITER" "$TMP/sparse/events.out.tfevents.1.x" loss=1:0.5
HOLE_AT=$(wc -c <"$TMP/sparse/events.out.tfevents.1.x")
truncate -s 100G "$TMP/sparse/events.out.tfevents.1.x"
"$WRITER" "$TMP/sparse/events.out.tfevents.1.x" loss=2:0.25
run timeout 20 "$TRAINJOB_BIN" metrics --logdir "$TMP/sparse" -o csv
expect_rc "--logdir over a 100 GB sparse file finishes" 0
check "...with the points on both sides of the hole" test "$(tail -n +2 "$TMP/out" | tr '\n' ' ')" = \
    ".,loss,1,1700000000.25,0.5 .,loss,2,1700000000.5,0.25 "
expect_grep "...says on stderr it skipped a hole, where and how long" "$TMP/err" \
    "trainjob metrics: skipped a hole of 100 GiB at offset $HOLE_AT in $(realpath "$TMP/sparse")/events.out.tfevents.1.x (a sparse file: nothing was written there, no record was lost)"
expect_no_grep "...and calls nothing damaged" "$TMP/err" "damaged"
# The same between two users: tj-alice's file, read by tj-bob.
if tj_users; then
    shared_tmp "$TMP/team"
    mkdir -p "$TMP/team/alice"
    chown "$TJ_ALICE" "$TMP/team/alice"
    F="$TMP/team/alice/events.out.tfevents.1.x"
    as_user "$TJ_ALICE" sh -c "'$WRITER' '$F' loss=1:0.5 && truncate -s 100G '$F' && '$WRITER' '$F' loss=2:0.25"
    run as_user "$TJ_BOB" timeout 20 "$TRAINJOB_BIN" metrics --logdir "$TMP/team/alice" -o csv
    expect_rc "$TJ_BOB's --logdir over $TJ_ALICE's 100 GB sparse file finishes" 0
    check "...with her points on both sides of the hole" test "$(tail -n +2 "$TMP/out" | tr '\n' ' ')" = \
        ".,loss,1,1700000000.25,0.5 .,loss,2,1700000000.5,0.25 "
    expect_grep "...and tells him of a hole in her file, not of damage" "$TMP/err" \
        "skipped a hole of 100 GiB at offset $HOLE_AT in $(realpath "$TMP/team/alice")/events.out.tfevents.1.x (a sparse file"
    expect_no_grep "...nothing damaged in her file" "$TMP/err" "damaged"
else
    fail "two users for the sparse --logdir check" "tj_users could not make them (needs root)"
fi

# ---- a job may not send the engine outside its volume ---------------------------

mkdir -p "$TMP/outside/run"
"$WRITER" "$TMP/outside/events.out.tfevents.1.x" stolen=1:42
"$WRITER" "$TMP/outside/run/events.out.tfevents.1.x" stolen=1:42
submit evil "$VOLDIR"'
ln -s '"$TMP/outside"' "$A/tb"' "$(tb evil)"
check "a job planting a symlink at its log path runs" wait_for evil .state SUCCEEDED
check "...the symlink is in the volume" test -L "$TMP/vol/evil/tb"
api GET "$V1/evil/scalars"
check "...GET scalars refuses it (403)" test "$code" = 403
check "...saying why" sh -c "jq -r .message '$TMP/body' | grep -q 'refused'"
check "...and gives nothing from outside" sh -c "! grep -q stolen '$TMP/body'"
run "$TRAINJOB_BIN" $E metrics evil
expect_rc "...metrics NAME exits 1" 1
expect_grep "...naming the log path" "$TMP/err" "tensorboard.log_path /mnt/afs/tb"

submit evil2 "$VOLDIR"'
ln -s '"$TMP/outside"' "$A/up"' \
    '.mount = [{id: "scratch", subdir: "/evil2", mount_path: "/mnt/afs"}] | .tensorboard = {log_path: "/mnt/afs/up/run"}'
check "a symlink above the log path" wait_for evil2 .state SUCCEEDED
api GET "$V1/evil2/scalars"
check "...is refused too" test "$code" = 403
check "...nothing from outside" sh -c "! grep -q stolen '$TMP/body'"

submit evil3 "$VOLDIR"'
mkdir -p "$A/tb"
"$A/bin/scalarwrite" "$A/tb/events.out.tfevents.1.own" own=1:1 "$(printf '"'"'own\033[2J\033]0;t\007=2:2'"'"')"
ln -s '"$TMP/outside/run"' "$A/tb/rank9"
ln -s '"$TMP/outside/events.out.tfevents.1.x"' "$A/tb/events.out.tfevents.2.link"' "$(tb evil3)"
check "runs and event files linked out of the log directory" wait_for evil3 .state SUCCEEDED
api GET "$V1/evil3/scalars"
check "...the job's own points are served" \
    test "$code" = 200 -a "$(jq -r '[.scalars[].tag | startswith("own")] | map(tostring) | join(",")' "$TMP/body")" = true,true
check "...a tag with escape sequences is escaped JSON" grep -qF 'own\u001b[2J' "$TMP/body"
check "...the linked ones are not followed" sh -c "! grep -q stolen '$TMP/body'"

ESC=$(printf '\033')
run "$TRAINJOB_BIN" $E metrics evil3 -o csv
check "...and printed without them (removed whole)" sh -c "! grep -q '$ESC' '$TMP/out' && grep -q '^\.,own,2,1700000000.5,2$' '$TMP/out'"
run "$TRAINJOB_BIN" $E metrics evil3
check "...in a table too" sh -c "! grep -q '$ESC' '$TMP/out' && grep -Eq '^\. +own +2 +2 +1$' '$TMP/out'"

api GET "$V1/train/scalars?since=..%2F..%2F..%2Fetc%2Fpasswd%3A0"
check "a since= naming files outside reads nothing of them" sh -c "! grep -q 'root:' '$TMP/body'"
check "...(refused, or only the job's own points)" \
    sh -c "[ '$code' = 400 ] || [ \"\$(jq '.scalars | length' '$TMP/body')\" = 7 ]"

# ---- a sparse event file through the engine ------------------------------------------

submit sparse 'true' "$(tb sparse)"
wait_for sparse .state SUCCEEDED
mkdir -p "$TMP/vol/sparse/tb"
"$WRITER" "$TMP/vol/sparse/tb/events.out.tfevents.1.x" loss=1:0.5
truncate -s 100G "$TMP/vol/sparse/tb/events.out.tfevents.1.x"
"$WRITER" "$TMP/vol/sparse/tb/events.out.tfevents.1.x" loss=2:0.25
run timeout 20 "$TRAINJOB_BIN" $E metrics sparse -o csv
expect_rc "metrics NAME over a 100 GB sparse event file finishes" 0
check "...with the points on both sides of the hole" test "$(tail -n +2 "$TMP/out" | tr '\n' ' ')" = \
    ".,loss,1,1700000000.25,0.5 .,loss,2,1700000000.5,0.25 "
expect_no_grep "...and the hole is not reported as a damaged record" "$TMP/err" "damaged"
# Eight followers of it: each gets both points, and trainjobd's work stays bounded
# (its CPU time, not a timing: it was a whole core, scanning the hole page by page).
for i in 1 2 3 4 5 6 7 8; do
    curl -sN --unix-socket "$SOCK" "http://x$V1/sparse/scalars?follow=true" >"$TMP/sparse.$i" 2>/dev/null &
    SPARSE_PIDS="$SPARSE_PIDS $!"
done
# cpu PID: the process's user + system time so far, in clock ticks
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
c0=$(cpu "$ENGINE_PID")
n=0
while [ "$(cat "$TMP"/sparse.? | grep -c '"step":2')" -lt 8 ] && [ $n -lt 100 ]; do
    sleep 0.05
    n=$((n + 1))
done
check "8 followers of the sparse file each get the point after the hole" \
    test "$(cat "$TMP"/sparse.? | grep -c '"step":2')" = 8
sleep 1
c1=$(cpu "$ENGINE_PID")
hz=$(getconf CLK_TCK)
check "...and trainjobd spends little on them ($((c1 - c0)) ticks of CPU, $hz a second)" \
    test $((c1 - c0)) -lt $((hz / 2))
for p in $SPARSE_PIDS; do kill "$p" 2>/dev/null; done
SPARSE_PIDS=""

# ---- clear messages ----------------------------------------------------------------

run "$TRAINJOB_BIN" $E metrics nosuch
expect_rc "metrics of an unknown job exits 1" 1
expect_grep "...saying it is not found" "$TMP/err" "training job 'nosuch' not found"

submit plain 'true'
wait_for plain .state SUCCEEDED
run "$TRAINJOB_BIN" $E metrics plain
expect_rc "metrics of a job without tensorboard exits 1" 1
expect_grep "...saying it has no log path" "$TMP/err" "has no TensorBoard log path"

submit quiet 'true' "$(tb quiet)"
wait_for quiet .state SUCCEEDED
run "$TRAINJOB_BIN" $E metrics quiet
expect_rc "metrics of a job that wrote nothing exits 0" 0
expect_grep "...saying there is nothing yet" "$TMP/err" "no scalars in /mnt/afs/tb yet"

run "$TRAINJOB_BIN" $E metrics
expect_rc "metrics with no job exits 2" 2
run "$TRAINJOB_BIN" $E metrics train -o yaml
expect_rc "metrics -o yaml exits 2" 2
expect_grep "...naming the formats" "$TMP/err" "table, csv or json"
