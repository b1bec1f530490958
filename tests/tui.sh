# Helpers for the tests that drive the full-screen program the way a person
# does (tests/wizard*.test.sh, monitor, live, columns, logs_pane, …): a tmux
# server of the test's own, the program started in it (start_tui), keys
# typed with send-keys, the screen read back with capture-pane. Sourced after
# lib.sh; the test sets SESSION.
#
# By default it also brings a real trainjobd on a private socket, started
# by the test and stopped by pid (tests/engine.sh), with EP, tj and cleanup
# for it. A test with a backend of its own (logs' fake ACP, the Slurm
# cluster) sets TUI_ENGINE=none before sourcing: it gets the tmux helpers
# only, keeps its own locale, and ends the tmux server with tui_cleanup.

# A tmux server of our own: nothing a user (or another test) does to theirs
# can end ours, and the test never touches theirs.
tmux() { command tmux -S "$TMP/tmux.sock" "$@"; }
# A session; once more after a moment if the server did not come up (tmux
# can lose the race with a server of ours still exiting).
new_session() { tmux new-session "$@" || { sleep 0.5; tmux new-session "$@"; }; }
tui_cleanup() { tmux kill-server 2>/dev/null; }

if [ "${TUI_ENGINE:-trainjobd}" != none ]; then
    # A person's terminal speaks UTF-8; tmux and trainjob take it from the locale.
    export LANG=C.UTF-8 LC_ALL=C.UTF-8
    . tests/engine.sh
    EP="http+unix://$SOCK"
    tj() { "$TRAINJOB_BIN" --endpoint "$EP" "$@"; }
    # wait_state JOB STATES [SECONDS]: up to SECONDS (20) for `tj get job JOB` to
    # show one of STATES ("RUNNING", "SUCCEEDED|FAILED"); its JSON is left in $TMP/out.
    wait_state() {
        _n=$((${3:-20} * 5))
        while [ $_n -gt 0 ]; do
            tj get job "$1" -o json >"$TMP/out" 2>&1
            grep -qE "\"state\": \"($2)\"" "$TMP/out" && return 0
            sleep 0.2
            _n=$((_n - 1))
        done
        return 1
    }
    cleanup() {
        tui_cleanup
        engine_cleanup
        rm -rf "$TMP"
    }
fi

# start_tui [-C DIR] WIDTH HEIGHT ARGS: a fresh session SESSION, WIDTH×HEIGHT,
# running `trainjob ARGS` (ARGS is shell text: quote inside it what needs
# quoting) with the test's HOME, TERM=tmux-256color and TUI_ENV (more
# VAR=value words), in DIR when given; EXIT=<status> shows when it ends.
TUI_ENV=""
start_tui() {
    _dir=""
    if [ "$1" = -C ]; then
        _dir=$2
        shift 2
    fi
    _w=$1 _h=$2
    shift 2
    tmux kill-session -t "$SESSION" 2>/dev/null
    new_session -d -s "$SESSION" -x "$_w" -y "$_h" \
        "${_dir:+cd '$_dir' && }env HOME='$HOME' TERM=tmux-256color $TUI_ENV '$TRAINJOB_BIN' $*; echo EXIT=\$?; sleep 60"
}
# start_wizard FILE ("" for none) [WIDTH HEIGHT]: `trainjob new` (-f FILE) at
# 80×24 unless told, with no draft offered first (the wizard killed before
# saves its draft on the way out: waited for, then removed); waits for Basics.
start_wizard() {
    tmux kill-session -t "$SESSION" 2>/dev/null
    sleep 0.5
    rm -rf "$HOME/.local/state/trainjob/drafts"
    start_tui "${2:-80}" "${3:-24}" "--endpoint '$EP' new ${1:+-f '$1'}"
    wait_screen "Basics" 10
}

screen() { tmux capture-pane -t "$SESSION" -p >"$TMP/screen"; }
# wait_screen TEXT [SECONDS]: up to SECONDS (5) for TEXT to show
wait_screen() { screen_has "$1" $((${2:-5} * 10)); }
# screen_has TEXT TENTHS: up to TENTHS tenths of a second for TEXT to show (a
# bound below a second: "acted on within 0.5 s" is screen_has TEXT 5)
screen_has() {
    n=0
    limit=$2
    while [ $n -lt $limit ]; do
        screen
        grep -qF -- "$1" "$TMP/screen" && return 0
        sleep 0.1
        n=$((n + 1))
    done
    return 1
}
see() { # NAME TEXT [SECONDS]
    if wait_screen "$2" "$3"; then pass "$1"; else fail "$1" "not on screen: $2 — $(cat "$TMP/screen")"; fi
}
gone() { # NAME TEXT: up to 5 s for TEXT to leave the screen
    n=0
    while [ $n -lt 50 ]; do
        screen
        grep -qF -- "$2" "$TMP/screen" || { pass "$1"; return; }
        sleep 0.1
        n=$((n + 1))
    done
    fail "$1" "still on screen: $2 — $(cat "$TMP/screen")"
}
see_row() { # NAME A B [SECONDS]: up to SECONDS (5) for a line with A and, after it on the line, B
    n=0
    while [ $n -lt $((${4:-5} * 10)) ]; do
        screen
        if awk -v a="$2" -v b="$3" '{ i = index($0, a); if (i && index(substr($0, i + length(a)), b)) f = 1 }
            END { exit !f }' "$TMP/screen"; then
            pass "$1"
            return
        fi
        sleep 0.1
        n=$((n + 1))
    done
    fail "$1" "no line with '$2' then '$3' — $(cat "$TMP/screen")"
}
keys() { tmux send-keys -t "$SESSION" "$@"; sleep 0.2; }
