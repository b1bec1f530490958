# The job screen's Metrics pane driven the way a person uses it (issue 13):
# `trainjob top --job train` in tmux at 80x24 against a real trainjobd on a
# private socket (tests/tui.sh), the job's startup script writing TensorBoard
# event files into its tensorboard.log_path while it runs (tests/tools/
# scalarwrite, copied into its volume: the worker has no python):
#  - M shows the pane: the tags, the runs rank0 and rank1, a chart;
#  - points written later reach the chart with no key pressed (captured
#    twice: the chart's rows change) — the pane follows while the job runs,
#    through the engine's push stream: a running job that writes nothing
#    wakes trainjob 0 times in 3 s (and an ended one neither); an engine
#    restart under the open pane is reconnected to, the curve going on;
#  - z makes the pane the whole screen and back; Esc leaves full screen;
#  - / filters the tags; a tag with escape sequences is drawn harmlessly;
#  - a job without a TensorBoard log path says where to set one.
# The engine and tmux are started here on temp dirs and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-metrics-$$"
. tests/tui.sh

WRITER="$(dirname "$TRAINJOBD_BIN")/tests/tools/scalarwrite"
engine_config volume </dev/null
mkdir -p "$TMP/vol/train/bin"
cp "$WRITER" "$TMP/vol/train/bin/scalarwrite"
# Jobs of a root-run trainjobd never run as root: the volume is writable to them.
chmod -R a+rwX "$TMP/vol"
start_engine

# The volume as the worker sees it: /mnt/afs in the sandbox, else named in the environment.
VOLDIR='A=/mnt/afs; [ -d "$A/bin" ] || [ -z "${TRAINJOB_MOUNT_0:-}" ] || A="${TRAINJOB_MOUNT_0#*=}"'
tb() { echo ".mount = [{id: \"scratch\", subdir: \"/$1\", mount_path: \"/mnt/afs\"}] | .tensorboard = {log_path: \"/mnt/afs/tb\"}"; }

# Two ranks write a decaying loss; a hostile tag on rank0; more steps after "go".
submit train "$VOLDIR"'
W="$A/bin/scalarwrite"
mkdir -p "$A/tb/rank0" "$A/tb/rank1"
pts() { s=$1; while [ $s -le $2 ]; do printf "loss=%d:%s " $s "$(( 1000 / (s + $3) ))"; s=$((s + 1)); done; }
"$W" "$A/tb/rank0/events.out.tfevents.1.host" $(pts 1 10 1) lr=1:0.001 "$(printf '"'"'evil\033[2J\033]0;pwned\007tag'"'"')=1:1"
"$W" "$A/tb/rank1/events.out.tfevents.1.host" $(pts 1 10 3)
touch "$A/written"
while [ ! -e "$A/go" ]; do sleep 0.05; done
"$W" "$A/tb/rank0/events.out.tfevents.1.host" $(pts 11 200 1)
"$W" "$A/tb/rank1/events.out.tfevents.1.host" $(pts 11 200 3)
touch "$A/more"
while [ ! -e "$A/go2" ]; do sleep 0.05; done
"$W" "$A/tb/rank0/events.out.tfevents.1.host" $(pts 201 300 1)
"$W" "$A/tb/rank1/events.out.tfevents.1.host" $(pts 201 300 3)
touch "$A/more2"
while [ ! -e "$A/end" ]; do sleep 0.05; done' "$(tb train)"
check "a job writing event files is accepted" test "$code" = 200
check "...runs" wait_for train .state RUNNING
n=0
while [ ! -e "$TMP/vol/train/written" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
check "...and writes its first points" test -e "$TMP/vol/train/written"

# switches PID: the times the process went to sleep and was woken (both kinds)
switches() { awk '/ctxt_switches/ { n += $2 } END { print n }' "/proc/$1/status"; }
# idle_check NAME: trainjob (under the tmux pane) is not woken once in 3 s
idle_check() {
    shell=$(tmux display-message -p -t "$SESSION" '#{pane_pid}')
    tj_pid=$(cat "/proc/$shell/task/$shell/children" 2>/dev/null | cut -d' ' -f1)
    if [ -n "$tj_pid" ] && [ -r "/proc/$tj_pid/status" ]; then
        # Points pushed just before (a late page on a loaded machine) are no
        # idle wake-ups: first a second with none (10 s at most), then 3 s
        # that must have none either, which a timer of any period under 3 s fails.
        w0=$(switches "$tj_pid")
        _n=0
        while [ $_n -lt 10 ]; do
            sleep 1
            w1=$(switches "$tj_pid")
            [ "$w1" -eq "$w0" ] && break
            w0=$w1
            _n=$((_n + 1))
        done
        sleep 3
        w1=$(switches "$tj_pid")
        if [ "$w1" -eq "$w0" ]; then pass "$1"; else fail "$1" "$((w1 - w0)) context switches"; fi
    else
        fail "$1" "no trainjob process under the tmux pane ($shell)"
    fi
}

start_tui 80 24 "--endpoint '$EP' top --job train"
see "top opens the job's screen" "Workers"
keys M
see "M shows the Metrics pane" "Metrics"
see "...with the job's tags" "loss" 10
see "...its first tag charted (the legend names the run)" "rank0"
see "a hostile tag shows without its escapes" "eviltag"
title=$(tmux display-message -p -t "$SESSION" '#{pane_title}')
if [ "$title" = pwned ]; then fail "...and cannot retitle the terminal"; else pass "...and cannot retitle the terminal"; fi

# Chart the loss (the filter leaves it alone under the cursor), then capture its rows.
keys / loss Enter
see "/ filters the tags" "/loss 1/3"
# chart_rows: the screen below the Metrics title, without the status line and key bar
chart_rows() { screen; sed -n '/Metrics/,$p' "$TMP/screen" | sed '$d' | sed '$d' | tail -n +2; }
see "the loss is charted, one series per run" "rank1"
chart_rows >"$TMP/chart1"
touch "$TMP/vol/train/go"
n=0
while [ ! -e "$TMP/vol/train/more" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
changed=0
n=0
while [ $n -lt 60 ]; do # the engine pushes the new points
    chart_rows >"$TMP/chart2"
    if ! cmp -s "$TMP/chart1" "$TMP/chart2" && grep -q "200" "$TMP/chart2"; then
        changed=1
        break
    fi
    sleep 0.25
    n=$((n + 1))
done
if [ $changed = 1 ]; then pass "the curve grows as the job writes, with no key pressed"; else
    fail "the curve grows as the job writes, with no key pressed" "$(cat "$TMP/chart1") ---- $(cat "$TMP/chart2")"
fi

# The job runs on, writing nothing: the pane holds the engine's push stream open and
# nothing wakes trainjob (no poll timer, no redraw) until a point is written.
idle_check "an open Metrics pane on a running job that writes nothing: 0 wake-ups in 3 s"

# The engine restarts under the open pane: the stream drops, is reopened from its cursor
# (after a backoff), and what the job wrote meanwhile reaches the chart with no key pressed.
stop_engine KILL
touch "$TMP/vol/train/go2"
n=0
while [ ! -e "$TMP/vol/train/more2" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
start_engine
changed=0
n=0
while [ $n -lt 160 ]; do
    chart_rows >"$TMP/chart3"
    if grep -q "300" "$TMP/chart3"; then
        changed=1
        break
    fi
    sleep 0.25
    n=$((n + 1))
done
if [ $changed = 1 ]; then pass "after an engine restart the pane reconnects and the curve goes on"; else
    fail "after an engine restart the pane reconnects and the curve goes on" "$(cat "$TMP/chart3")"
fi

keys z
see "z makes the pane full screen" "z: back"
gone "...the job's summary gives way" "Workers"
keys z
see "z again brings the job screen back" "Workers"
see "...its workers table repainted" "master-0"
keys z
see "full screen once more" "z: back"
keys Escape
see "Esc leaves full screen first" "Workers"
keys Escape
see "...then the pane" "Events"
keys M
see "M shows the pane again" "following"
keys "?"
keys End
see "the help lists the pane's keys" "zoom-out"
keys Escape
gone "...and closes" "zoom-out"

# The job ends: one last page, then the pane asks nothing (and nothing else wakes trainjob).
touch "$TMP/vol/train/end"
check "the job ends" wait_for train .state SUCCEEDED
see "...and the pane says it no longer follows" "job not running" 10
sleep 1 # the last page
idle_check "an open Metrics pane on an ended job: 0 wake-ups in 3 s"

# A job without a log path says where to set one.
submit plain 'sleep 600'
check "a job without TensorBoard runs" wait_for plain .state RUNNING
keys Escape
keys Escape
see "back to the jobs view" "PRIORITY"
keys "/" "plain" Enter
keys Enter
see "the plain job opens" "Workers"
keys M
see "its Metrics pane says it has no log path" "no TensorBoard log path" 10
see "...and where to set one" "TensorBoard section"
keys q
keys q
keys q
see "top quits cleanly" "EXIT=0"
