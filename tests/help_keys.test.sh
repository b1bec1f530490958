# The help lists every key the key bar shows (issue 22): `?` on the jobs view
# left out Space, < >, F6, g/G that its key bar advertised, and under
# --readonly it still listed stop/start/delete/new. Now the key bar, the
# dispatch and the help read one keymap (tui/default.keys) and one list of
# the actions --readonly refuses. In tmux at 80x24 against a real trainjobd,
# for each view — jobs, the job screen (its Workers pane), its Logs pane and
# its Metrics pane — with and without --readonly:
#  - every key the key bar shows is a key the help lists;
#  - the jobs view's help lists Space (mark), < > (sort), F6, g and G;
#  - under --readonly the help lists no stop-job, start-job, delete-job,
#    new-job, priority or clone, and those keys do nothing but say so;
#    without it, it lists them.
# The engine and tmux are started here on temp dirs and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-helpkeys-$$"
. tests/tui.sh

engine_config </dev/null
start_engine
submit sleeper "sleep 600"
check "a job that runs is accepted" test "$code" = 200
check "...runs" wait_for sleeper .state RUNNING 30

# bar_keys: the keys of the key bar (the screen's last line): items are two
# spaces apart, each KEY then its label
bar_keys() {
    screen
    tail -n 1 "$TMP/screen" | LC_ALL=C.UTF-8 awk '{
        n = split($0, item, /  +/)
        for (i = 1; i <= n; i++) { sub(/^ +/, "", item[i]); split(item[i], w, " "); if (w[1] != "") print w[1] }
    }'
}

# help_text FILE: opens the help, pages through it to its end, closes it
help_text() {
    : >"$1"
    keys '?'
    wait_screen "Keys ·" 5
    n=0
    while [ $n -lt 20 ]; do
        screen
        sed '1d;$d' "$TMP/screen" >>"$1"
        foot=$(tail -n 1 "$TMP/screen")
        case $foot in
        *"lines "*" of "*)
            last=$(echo "$foot" | sed -n 's/.*lines [0-9]*-\([0-9]*\) of \([0-9]*\).*/\1 \2/p')
            [ "${last% *}" = "${last#* }" ] && break
            keys NPage
            ;;
        *) break ;;
        esac
        n=$((n + 1))
    done
    keys Escape
}

# help_keys FILE: the keys the help lists, one a line (a binding line: three
# spaces, the keys, two spaces or more, the action)
help_keys() {
    LC_ALL=C.UTF-8 awk '/^   [^ ]/ {
        s = substr($0, 4); i = index(s, "  "); if (i) s = substr(s, 1, i - 1)
        n = split(s, k, ", "); for (j = 1; j <= n; j++) print k[j]
    }' "$1" | sort -u
}

# compare VIEW : every key of the bar is in the help
compare() {
    bar_keys >"$TMP/bar"
    help_text "$TMP/help"
    help_keys "$TMP/help" >"$TMP/hkeys"
    missing=""
    while IFS= read -r key; do
        grep -qxF -- "$key" "$TMP/hkeys" || missing="$missing $key"
    done <"$TMP/bar"
    if [ -s "$TMP/bar" ] && [ -z "$missing" ]; then
        pass "$1: the help lists every key of the bar ($(tr '\n' ' ' <"$TMP/bar"))"
    else
        fail "$1: the help lists every key of the bar" "missing:$missing; bar: $(tr '\n' ' ' <"$TMP/bar"); help keys: $(tr '\n' ' ' <"$TMP/hkeys")"
    fi
}

# lists VIEW ACTION... : the help has a binding of each action
lists() {
    _v=$1
    shift
    for _a in "$@"; do
        if grep -qE "  $_a +[a-z]" "$TMP/help"; then pass "$_v: the help lists $_a"; else
            fail "$_v: the help lists $_a" "$(grep -E "^   [^ ]" "$TMP/help" | head -c 400)"
        fi
    done
}
# lists_not VIEW ACTION... : the help has no binding of any
lists_not() {
    _v=$1
    shift
    for _a in "$@"; do
        if grep -qE "  $_a +[a-z]" "$TMP/help"; then fail "$_v: the help leaves out $_a" "$(grep -E "  $_a " "$TMP/help")"; else
            pass "$_v: the help leaves out $_a"
        fi
    done
}

for mode in rw ro; do
    ro=""
    [ $mode = ro ] && ro="--readonly"
    start_tui 80 24 "--endpoint '$EP' top $ro"
    see "top $ro: the jobs view" "sleeper" 10
    compare "jobs view ($mode)"
    grep -q "^   Space " "$TMP/help" && pass "jobs view ($mode): Space is listed (mark)" ||
        fail "jobs view ($mode): Space is listed (mark)" "$(cat "$TMP/help")"
    lists "jobs view ($mode)" mark sort-prev sort-next sort-reverse top bottom
    for k in '<' '>' F6 g G; do
        if grep -qxF -- "$k" "$TMP/hkeys"; then pass "jobs view ($mode): $k is listed"; else
            fail "jobs view ($mode): $k is listed" "$(tr '\n' ' ' <"$TMP/hkeys")"
        fi
    done
    if [ $mode = ro ]; then
        lists_not "jobs view (ro)" stop-job start-job delete-job new-job priority clone
        keys s
        see "jobs view (ro): s says there are no actions" "read-only: no actions here"
    else
        lists "jobs view (rw)" stop-job start-job delete-job new-job priority clone
    fi
    # the keys the help names do what it says: > sorts by the next column (the header's mark moves)
    screen
    head0=$(grep -m1 "NAME" "$TMP/screen")
    keys '>'
    screen
    head1=$(grep -m1 "NAME" "$TMP/screen")
    check "jobs view ($mode): > sorts by the next column" test "$head0" != "$head1"
    keys '>'
    keys '<'
    screen
    check "jobs view ($mode): > again, then < sorts by that column again" \
        test "$(grep -m1 "NAME" "$TMP/screen")" = "$head1"
    keys Enter
    see "Enter opens the job screen ($mode)" "Workers" 10
    compare "job screen, Workers pane ($mode)"
    if [ $mode = ro ]; then
        lists_not "job screen (ro)" stop-job start-job delete-job new-job priority clone mark-node
    else
        lists "job screen (rw)" stop-job start-job delete-job mark-node
    fi
    keys l
    see "l shows the Logs pane ($mode)" "Logs" 10
    compare "job screen, Logs pane ($mode)"
    lists "Logs pane ($mode)" save-log
    keys M
    see "M shows the Metrics pane ($mode)" "Metrics" 10
    compare "job screen, Metrics pane ($mode)"
    lists "Metrics pane ($mode)" chart cursor-left cursor-right
    tmux kill-session -t "$SESSION" 2>/dev/null
done

tui_cleanup
engine_cleanup
