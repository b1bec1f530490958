# Keys after a resize (issue 22): a resize (SIGWINCH) used to take curses
# out and back in (endwin, refresh), which turned the keypad's application
# mode off until the next read, so the first arrow after it came as Esc [ B.
# Driven in tmux against a real trainjobd: the window resized, then Down
# moves the jobs view's cursor and the wizard's focus.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-resize-$$"
. tests/tui.sh
engine_config </dev/null
start_engine

for n in aaa-first bbb-second ccc-third; do
    sleeper_job default "$n" >"$TMP/$n.yaml"
    run tj submit -f "$TMP/$n.yaml"
    [ "$rc" -eq 0 ] || fail "submit $n" "$(cat "$TMP/err")"
done

# The jobs view: after a resize, Down then Enter opens the second job.
start_tui 100 30 "--endpoint '$EP' top"
see "top lists the three jobs" "ccc-third" 10
tmux resize-window -t "$SESSION" -x 80 -y 24
sleep 1
keys Down
keys Enter
see "after a resize Down moves the jobs view's cursor: Enter opens the second job" "Workers" 5
if grep -q "aaa-first" "$TMP/screen"; then
    fail "...not the first" "$(cat "$TMP/screen")"
else pass "...not the first"; fi
# Once more, back on the jobs view.
keys Escape
see "Esc goes back to the jobs view" "aaa-first" 5
tmux resize-window -t "$SESSION" -x 100 -y 30
sleep 1
keys Down
keys Enter
see "after a second resize Down moves on again: Enter opens the third job" "Workers" 5
if grep -q "ccc-third" "$TMP/screen" && ! grep -q "aaa-first\|bbb-second" "$TMP/screen"; then
    pass "...the third, ccc-third"
else fail "...the third, ccc-third" "$(cat "$TMP/screen")"; fi

# The wizard: after a resize, Down moves the focus to the next field.
start_wizard "" 100 30
keys Tab
keys "one"
see_row "the wizard's Display name takes text" "Display name" "one"
tmux resize-window -t "$SESSION" -x 80 -y 24
sleep 1
keys Down
keys "two"
see_row "after a resize Down moves the wizard's focus: the text goes to Name" "Name" "two"
screen
if grep -q "onetwo\|\[B" "$TMP/screen"; then
    fail "...not into Display name" "$(cat "$TMP/screen")"
else pass "...not into Display name"; fi
tmux resize-window -t "$SESSION" -x 100 -y 30
sleep 1
keys Up
keys "3"
see_row "after another resize Up moves it back" "Display name" "one3"
