# The Metrics pane's cursor read the way a person uses it (issue 22): a job
# with two runs of 30 steps, `trainjob top --job` in tmux at 80x24, M, then
# Left. Before, the legend read "step 7.933 ─ rank0 - ─ rank1 -" (a fraction
# of a step, no values) and no cursor line showed. Now:
#  - the cursor snaps to a step the job wrote: "step 30", then whole steps;
#  - each run's value at that step is the one written (rank0 wrote
#    1000/(s+1), rank1 1000/(s+3), as integers), the smoothed one after "~";
#  - a run that stopped writing earlier (rank2: steps 1..10) reads "-" past
#    its last step;
#  - the cursor is a line down the plot, in the same column on every row.
# The engine and tmux are started here on temp dirs and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-mcursor-$$"
. tests/tui.sh

WRITER="$(dirname "$TRAINJOBD_BIN")/tests/tools/scalarwrite"
engine_config volume </dev/null
mkdir -p "$TMP/vol/curve/bin"
cp "$WRITER" "$TMP/vol/curve/bin/scalarwrite"
chmod -R a+rwX "$TMP/vol"
start_engine

VOLDIR='A=/mnt/afs; [ -d "$A/bin" ] || [ -z "${TRAINJOB_MOUNT_0:-}" ] || A="${TRAINJOB_MOUNT_0#*=}"'
submit curve "$VOLDIR"'
W="$A/bin/scalarwrite"
mkdir -p "$A/tb/rank0" "$A/tb/rank1" "$A/tb/rank2"
pts() { s=$1; while [ $s -le $2 ]; do printf "loss=%d:%s " $s "$(( 1000 / (s + $3) ))"; s=$((s + 1)); done; }
"$W" "$A/tb/rank0/events.out.tfevents.1.host" $(pts 1 30 1)
"$W" "$A/tb/rank1/events.out.tfevents.1.host" $(pts 1 30 3)
"$W" "$A/tb/rank2/events.out.tfevents.1.host" $(pts 1 10 5)' \
    '.mount = [{id: "scratch", subdir: "/curve", mount_path: "/mnt/afs"}] | .tensorboard = {log_path: "/mnt/afs/tb"}'
check "a job writing 30 steps in two runs (10 in a third) is accepted" test "$code" = 200
check "...and succeeds" wait_for curve .state SUCCEEDED 30

# legend: the chart's legend line (the one with "step ")
legend() { screen; grep -m1 'step ' "$TMP/screen"; }

start_tui 80 24 "--endpoint '$EP' top --job curve"
see "top opens the job's screen" "Workers"
keys M
see "M shows the Metrics pane with the runs" "rank1" 10
keys Left
see "Left shows the cursor: at the last step, a whole step" "step 30 "
l=$(legend)
case $l in *"rank0 32 "*) pass "...rank0's value written at step 30 (32)" ;; *) fail "...rank0's value written at step 30 (32)" "$l" ;; esac
case $l in *"rank1 30 "*) pass "...rank1's (30)" ;; *) fail "...rank1's (30)" "$l" ;; esac
case $l in *"rank2 - "* | *"rank2 -") pass "...rank2, which stopped at step 10, reads -" ;; *) fail "...rank2, which stopped at step 10, reads -" "$l" ;; esac
case $l in *"~"*) pass "...the smoothed value after ~ (smoothing 0.6)" ;; *) fail "...the smoothed value after ~ (smoothing 0.6)" "$l" ;; esac

# the cursor line: the column of the plot's last "│" on the legend's next row is
# the same "│" on each plot row down to the x axis
cursor_line() {
    screen
    LC_ALL=C.UTF-8 awk '
        /step / && !top { top = NR; next }
        top && !col { n = split($0, ch, ""); for (i = n; i > 20; i--) if (ch[i] == "│") { col = i; break }
            if (!col) { print "none"; exit } rows = 1; next }
        col && /[└+]/ { print rows; exit }
        col { if (substr($0, col, 1) != "│" && substr($0, col, 1) !~ /[⠀-⣿]/) { print "broken at row " NR; exit } rows++ }
    ' "$TMP/screen"
}
r=$(cursor_line)
if [ "$r" -ge 5 ] 2>/dev/null; then pass "...and a cursor line down the plot ($r rows)"; else
    fail "...and a cursor line down the plot" "$r: $(cat "$TMP/screen")"
fi

keys Left Left Left Left Left Left Left Left Left Left Left Left
l=$(legend)
s=$(echo "$l" | sed -n 's/.*step \([0-9][0-9]*\)  .*/\1/p')
if [ -n "$s" ] && [ "$s" -lt 30 ] && [ "$s" -gt 10 ]; then pass "twelve Lefts later: a whole step again (step $s)"; else
    fail "twelve Lefts later: a whole step again" "$l"
fi
case $l in *"rank0 $((1000 / (s + 1))) "*) pass "...rank0's value written there ($((1000 / (s + 1))))" ;; *) fail "...rank0's value written there" "$l" ;; esac
case $l in *"rank1 $((1000 / (s + 3))) "*) pass "...rank1's ($((1000 / (s + 3))))" ;; *) fail "...rank1's" "$l" ;; esac
keys End
keys Home
l=$(legend)
case $l in *"step 1 "*"rank2 166 "*) pass "Home: step 1, rank2 reads its value there (166)" ;; *) fail "Home: step 1, rank2 reads its value there (166)" "$l" ;; esac

tui_cleanup
engine_cleanup
