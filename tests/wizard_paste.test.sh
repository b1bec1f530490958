# Pasting into the wizard (issue 22), at 80×24 in tmux as the person did:
# a tab-indented startup script (a <<-EOF heredoc) keeps its tabs, shown up
# to the next tab stop and saved by F2 as tabs; a multi-line paste into a
# select field takes its first line as the filter and never opens or picks
# from the list on the pasted line break. Against a real trainjobd.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-wizard-paste-$$"
. tests/tui.sh
start_engine

start_wizard ""
keys Tab "paste-demo" Tab "paste-demo"
keys PgDn PgDn Tab Tab
see "the startup script has the focus" "Startup script"
tmux set-buffer -b tjpaste "$(printf 'cat <<-EOF >/tmp/x\n\tindented-by-tab\n\tEOF')"
tmux paste-buffer -p -b tjpaste -t "$SESSION"
see "a pasted tab-indented line shows" "indented-by-tab"
screen
line=$(grep -m1 "indented-by-tab" "$TMP/screen")
case $line in
*"        indented-by-tab"*) pass "...indented to the next tab stop, not one space" ;;
*) fail "...indented to the next tab stop, not one space" "$line" ;;
esac
keys F2
see "F2 asks where to save" "ave"
keys C-u "$TMP/pasted.yaml" Enter
see "the form is saved" "saved to $TMP/pasted.yaml"
tab=$(printf '\t')
if grep -qF '\tindented-by-tab\n\tEOF' "$TMP/pasted.yaml" ||
    { grep -q "^ *${tab}indented-by-tab\$" "$TMP/pasted.yaml" && grep -q "^ *${tab}EOF\$" "$TMP/pasted.yaml"; }; then
    pass "...with the tabs kept in the file"
else
    fail "...with the tabs kept in the file" "$(grep -A3 startup "$TMP/pasted.yaml" | od -c | head -8)"
fi
run "$TRAINJOB_BIN" validate "$TMP/pasted.yaml"
expect_rc "...and the file validates" 0

# A paste of three lines into the resource pool (a select): the first line filters, nothing opens.
start_wizard ""
keys PgDn
see "Resources: the priority (a select) has the focus" "Priority"
screen
cp "$TMP/screen" "$TMP/before"
tmux set-buffer -b tjpaste "$(printf 'HIGH\nsecond-line\nthird')"
tmux paste-buffer -p -b tjpaste -t "$SESSION"
sleep 0.5
see "a multi-line paste into a select says it took the first line" "pasted the first line only"
screen
if grep -q "second-line\|third" "$TMP/screen"; then fail "...the other lines go nowhere" "$(cat "$TMP/screen")"; else
    pass "...the other lines go nowhere"; fi
if grep -q "Priority *NORMAL" "$TMP/screen"; then pass "...and the field keeps its value (no pick on the line break)"; else
    fail "...and the field keeps its value (no pick on the line break)" "$(cat "$TMP/screen")"; fi
