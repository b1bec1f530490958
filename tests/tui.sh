# Helpers for the tests that drive the full-screen program the way a person
# does (tests/wizard.test.sh, tests/monitor.test.sh): a tmux server of the
# test's own, keys typed with send-keys, the screen read back with
# capture-pane, and a real trainjobd on a private socket, started here and
# stopped by pid (tests/engine.sh). Sourced after lib.sh; the test sets SESSION.

# A person's terminal speaks UTF-8; tmux and trainjob take it from the locale.
export LANG=C.UTF-8 LC_ALL=C.UTF-8
. tests/engine.sh
EP="http+unix://$SOCK"

# A tmux server of our own: nothing a user (or another test) does to theirs
# can end ours, and the test never touches theirs.
tmux() { command tmux -S "$TMP/tmux.sock" "$@"; }
# A session; once more after a moment if the server did not come up (tmux
# can lose the race with a server of ours still exiting).
new_session() { tmux new-session "$@" || { sleep 0.5; tmux new-session "$@"; }; }

cleanup() {
    tmux kill-server 2>/dev/null
    engine_cleanup
    rm -rf "$TMP"
}

screen() { tmux capture-pane -t "$SESSION" -p >"$TMP/screen"; }
# wait_screen TEXT [SECONDS]: up to SECONDS (5) for TEXT to show
wait_screen() {
    n=0
    limit=$((${2:-5} * 10))
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
see_row() { # NAME A B: up to 5 s for a line with A and, after it on the line, B
    n=0
    while [ $n -lt 50 ]; do
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
