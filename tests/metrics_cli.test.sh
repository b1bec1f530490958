# `trainjob metrics` as a user types it (issue 22), on a job of a real
# trainjobd and on a --logdir:
#  - --tag 'loss*' (the example of --help and the README) picks train/loss
#    among TensorBoard's path-like tags train/loss, train/lr, in every output;
#    a pattern with '/' ('train/*') is for the whole tag, its '*' crossing '/';
#  - a --tag that matches nothing says so on stderr with the tags there are,
#    and the status is 1 (not "no scalars yet" and 0, not a bare CSV header);
#  - -f keeps the table's columns where they were when steps and values grow
#    (step 9 then step 1009: the VALUE column does not move).
# The engine is started here on temp dirs and a Unix socket, stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh
. tests/locale.sh

WRITER="$(dirname "$TRAINJOBD_BIN")/tests/tools/scalarwrite"
TFWRITE="$(dirname "$TRAINJOBD_BIN")/tests/tools/tfwrite"
E="--endpoint http+unix://$SOCK"
FOLLOW_PID=""

cleanup() {
    [ -n "$FOLLOW_PID" ] && kill "$FOLLOW_PID" 2>/dev/null
    engine_cleanup
    rm -rf "$TMP"
}

engine_config volume </dev/null
mkdir -p "$TMP/vol/tags/bin"
cp "$WRITER" "$TMP/vol/tags/bin/scalarwrite"
chmod -R a+rwX "$TMP/vol"
start_engine

# ---- a job with TensorBoard's tags -------------------------------------------------

VOLDIR='A=/mnt/afs; [ -d "$A/bin" ] || [ -z "${TRAINJOB_MOUNT_0:-}" ] || A="${TRAINJOB_MOUNT_0#*=}"'
submit tags "$VOLDIR"'
W="$A/bin/scalarwrite"
mkdir -p "$A/tb/rank0" "$A/tb/rank1"
"$W" "$A/tb/rank0/events.out.tfevents.1.host" train/loss=1:0.5 train/lr=1:0.01 train/loss=2:0.25
"$W" "$A/tb/rank1/events.out.tfevents.1.host" train/loss=1:0.75 train/lr=1:0.01' \
    '.mount = [{id: "scratch", subdir: "/tags", mount_path: "/mnt/afs"}] | .tensorboard = {log_path: "/mnt/afs/tb"}'
check "a job writing train/loss and train/lr is accepted" test "$code" = 200
check "...and succeeds" wait_for tags .state SUCCEEDED 30

run "$TRAINJOB_BIN" $E metrics tags --tag 'loss*'
expect_rc "metrics --tag 'loss*' (the --help example) finds train/loss" 0
check "...a row for each run's train/loss, none for train/lr" \
    test "$(awk 'NR > 1 {print $1, $2, $3, $4}' "$TMP/out" | tr '\n' ';')" = \
    "rank0 train/loss 2 0.25;rank1 train/loss 1 0.75;"
run "$TRAINJOB_BIN" $E metrics tags --tag 'loss*' -o csv
expect_rc "...-o csv too" 0
check "...every train/loss point, after the header" \
    test "$(cut -d, -f1-3 "$TMP/out" | tr '\n' ';')" = \
    "run,tag,step;rank0,train/loss,1;rank0,train/loss,2;rank1,train/loss,1;"
run "$TRAINJOB_BIN" $E metrics tags --tag 'loss*' -o json
check "...-o json too" test "$(jq -r '[.[].tag] | unique | join(",")' "$TMP/out")" = train/loss

# a locale whose decimal point is a comma: numbers as JSON and CSV spell them
if comma_locale; then
    run "$TRAINJOB_BIN" $E metrics tags --tag 'loss*' -o csv
    cp "$TMP/out" "$TMP/csv.C"
    run env $COMMA_ENV "$TRAINJOB_BIN" $E metrics tags --tag 'loss*' -o csv
    check "under de_DE.UTF-8 (decimal comma) -o csv is the same: 0.25, not 0,25 or 0" \
        cmp -s "$TMP/out" "$TMP/csv.C"
    run env $COMMA_ENV "$TRAINJOB_BIN" $E metrics tags --tag 'loss*'
    check "...and so are the table's values" \
        test "$(awk 'NR > 1 {print $4}' "$TMP/out" | tr '\n' ';')" = "0.25;0.75;"
fi
run "$TRAINJOB_BIN" $E metrics tags --tag 'train/*' -o csv
check "a pattern with '/' is for the whole tag: train/* picks both tags" \
    test "$(tail -n +2 "$TMP/out" | cut -d, -f2 | sort -u | tr '\n' ' ')" = "train/loss train/lr "
run "$TRAINJOB_BIN" $E metrics tags --tag 'rain*' -o csv
check "...and a pattern without '/' is not matched across it (rain* picks nothing)" test "$rc" = 1

run "$TRAINJOB_BIN" $E metrics tags --tag 'acc*'
expect_rc "a --tag that matches nothing exits 1" 1
expect_grep "...says so, naming the pattern" "$TMP/err" "no tag matches --tag 'acc*'"
expect_grep "...and lists the tags there are" "$TMP/err" "the tags are: train/loss, train/lr"
expect_no_grep "...not 'no scalars yet'" "$TMP/err" "no scalars"
run "$TRAINJOB_BIN" $E metrics tags --tag 'acc*' -o csv
expect_rc "...-o csv: exits 1 too" 1
expect_grep "...and says so" "$TMP/err" "the tags are: train/loss, train/lr"
run "$TRAINJOB_BIN" $E metrics tags --tag nosuch --tag 'acc*' -o json
expect_rc "...-o json with two patterns: exits 1" 1
expect_grep "...naming both" "$TMP/err" "no tag matches --tag 'nosuch', 'acc*'"

run "$TRAINJOB_BIN" metrics --help
expect_grep "--help shows the pattern rule" "$TMP/out" "('loss*' picks"
check "trainjob(1) documents the rule" grep -q "last part" doc/trainjob.1.scd
check "doc/commands.md (the README's pointer for commands) documents the rule" grep -q "last part" doc/commands.md

# ---- --logdir, no job ------------------------------------------------------------

mkdir -p "$TMP/ld/rank0"
"$TFWRITE" "$TMP/ld/rank0/events.out.tfevents.1.x" 1 3 train/loss train/lr
run "$TRAINJOB_BIN" metrics --logdir "$TMP/ld" --tag 'lr'
expect_rc "--logdir --tag lr picks train/lr" 0
check "...its one row" test "$(awk 'NR > 1 {print $2}' "$TMP/out" | tr '\n' ' ')" = "train/lr "
run "$TRAINJOB_BIN" metrics --logdir "$TMP/ld" --tag 'eval/*'
expect_rc "--logdir --tag matching nothing exits 1" 1
expect_grep "...listing the tags" "$TMP/err" "the tags are: train/loss, train/lr"

# -f: a pattern matching none of the tags so far is said (the tag may come later), and followed
timeout 3 "$TRAINJOB_BIN" metrics --logdir "$TMP/ld" --tag 'eval/*' -f >"$TMP/out" 2>"$TMP/err"
rc=$?
check "--logdir -f --tag matching nothing yet follows on (until interrupted: $rc)" test "$rc" = 124
expect_grep "...saying no tag matches yet, with the tags so far" "$TMP/err" \
    "no tag matches --tag 'eval/*' yet; the tags so far: train/loss, train/lr"

# ---- -f: the table's columns stay put ---------------------------------------------

mkdir -p "$TMP/fl/rank0"
"$TFWRITE" "$TMP/fl/rank0/events.out.tfevents.1.x" 1 9 loss
: >"$TMP/follow"
"$TRAINJOB_BIN" metrics --logdir "$TMP/fl" -f >"$TMP/follow" 2>"$TMP/follow.err" &
FOLLOW_PID=$!
n=0
while [ "$(wc -l <"$TMP/follow")" -lt 2 ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
"$TFWRITE" "$TMP/fl/rank0/events.out.tfevents.1.x" 10 1000 loss
n=0
while ! grep -q ' 1009 ' "$TMP/follow" && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
kill "$FOLLOW_PID" 2>/dev/null
wait "$FOLLOW_PID" 2>/dev/null
FOLLOW_PID=""
check "metrics -f printed the first rows and the rows after step 1009" \
    test "$(wc -l <"$TMP/follow")" -ge 3 -a -n "$(grep ' 1009 ' "$TMP/follow")"
cols=$(column_starts "$TMP/follow")
check "...in columns that stay where the header put them (starts: $cols)" \
    test "$(echo "$cols" | wc -w)" = 1

cleanup
