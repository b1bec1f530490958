# The jobs view's columns at 80×24, driven in tmux against a real trainjobd
# (stopped by pid): DISPLAY NAME only while a job's differs from its NAME;
# DURATION beside AGE; `C` lists the columns — Space hides one, J/K move one,
# Enter keeps the choice and saves it to ~/.config/trainjob/columns, which
# the next start reads; a bad columns file is an error naming file:line and
# the defaults are shown, never a crash.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-columns-$$"
. tests/tui.sh
engine_config nodes="sim 2 16" specs=gpu-1:1:1:512 </dev/null
start_engine
COLS_FILE="$HOME/.config/trainjob/columns"

TUI_ENV="XDG_CONFIG_HOME='$HOME/.config'"
start_top() { start_tui 80 24 "--endpoint '$EP' top"; }
header() { screen; grep -m1 -F "NAME" "$TMP/screen" >"$TMP/header"; }

job() { # NAME DISPLAY
    cat >"$TMP/$1.yaml" <<EOF2
workspace_name: default
name: $1
display_name: $2
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: gpu-1}]
    image_path: local/host
    startup_script: sleep 600
EOF2
    run tj submit -f "$TMP/$1.yaml"
}
job steady steady

start_top
see "top opens at 80×24" "steady" 10
see "the job runs" "RUNNING" 20
header
if grep -q "DISPLAY" "$TMP/header"; then
    fail "DISPLAY NAME is dropped when it equals NAME on every row" "$(cat "$TMP/screen")"
else
    pass "DISPLAY NAME is dropped when it equals NAME on every row"
fi
see_row "...TIME (the duration) sits next to AGE" "AGE" "TIME"
see_row "...the running job's duration counts up" "steady" "s "

job other other-run
see "a job whose display name differs shows" "other-run" 10
see "...under DISPLAY NAME (cut at 80 columns, it gives way first)" "DISPLAY NA"

# C: the list, every column, shown ones checked.
keys C
see "C lists the columns" "Columns of the jobs view"
see "...shown ones checked" "[x] NAME"
see "...with the keys to use" "Space: show/hide"
# Hide DISPLAY NAME (second), move STATE (third) to the top.
keys Down Space
see "Space hides DISPLAY NAME" "[ ] DISPLAY NAME"
keys Down K K
see_row "K K moves STATE to the top" "[x] STATE" ""
screen
first=$(grep -m1 -F "[" "$TMP/screen")
case "$first" in *STATE*) pass "...STATE is first" ;; *) fail "...STATE is first" "$(cat "$TMP/screen")" ;; esac
keys Enter
see "Enter says where it saved" "columns saved to ~/.config/trainjob/columns" 5
header
if grep -q "DISPLAY" "$TMP/header"; then fail "...DISPLAY NAME is hidden" "$(cat "$TMP/header")"; else pass "...DISPLAY NAME is hidden"; fi
see_row "...STATE comes before NAME" "STATE" "NAME"
first=$(grep -v "^#" "$COLS_FILE" | head -1)
if [ "$first" = STATE ]; then pass "the columns file lists the choice, STATE first"; else fail "the columns file lists the choice, STATE first" "$(cat "$COLS_FILE")"; fi
if grep -q "DISPLAY NAME" "$COLS_FILE"; then fail "...without DISPLAY NAME" "$(cat "$COLS_FILE")"; else pass "...without DISPLAY NAME"; fi
# Esc leaves the list as it was.
keys C
see "C again" "Columns of the jobs view"
keys Space Escape
gone "Esc closes the list" "Columns of the jobs view"
see_row "...changing nothing" "STATE" "NAME"
keys q
see "q leaves top" "EXIT=0"

# The next start reads the file.
start_top
see "top opens again" "steady" 10
see_row "...with the saved order" "STATE" "NAME"
header
if grep -q "DISPLAY" "$TMP/header"; then fail "...DISPLAY NAME still hidden" "$(cat "$TMP/header")"; else pass "...DISPLAY NAME still hidden"; fi
keys q
see "q leaves top" "EXIT=0"

# A bad file: file:line in an error, the defaults shown, top keeps working.
printf 'NAME\nSTATE\nGPUS\n' >"$COLS_FILE"
start_top
see "a bad columns file is an error naming file:line" "columns:3: unknown column 'GPUS'" 10
see_row "...the default columns are shown" "NAME" "STATE"
see "...PRIORITY too" "PRIORITY"
keys q
see "q leaves top after a bad file" "EXIT=0"
head -c 100000 /dev/zero >"$COLS_FILE"
start_top
see "an oversized columns file is an error" "columns" 10
see "...and top still runs" "steady"
keys q
see "q leaves top after an oversized file" "EXIT=0"

tj delete steady >/dev/null 2>&1
tj delete other >/dev/null 2>&1
