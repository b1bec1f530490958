# The create-task wizard driven the way a person uses it: in tmux, keys typed
# with send-keys, the screen read back with capture-pane, against a real
# trainjobd on a private socket (started here, stopped by pid).
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/run"
SOCK="$TMP/run/engine.sock"
SESSION="tj-wizard-$$"
ENGINE_PID=""
cleanup() {
    tmux kill-session -t "$SESSION" 2>/dev/null
    [ -n "$ENGINE_PID" ] && kill "$ENGINE_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

"$TRAINJOBD_BIN" --foreground --grace 1 --config "$TMP/engine.yaml" --state-dir "$TMP/state" \
    --socket "$SOCK" >"$TMP/engine.log" 2>&1 &
ENGINE_PID=$!
i=0
while [ $i -lt 100 ] && [ ! -S "$SOCK" ]; do sleep 0.1; i=$((i + 1)); done

screen() { tmux capture-pane -t "$SESSION" -p >"$TMP/screen"; }
# wait_screen TEXT: up to 5 s for TEXT to show
wait_screen() {
    n=0
    while [ $n -lt 50 ]; do
        screen
        grep -qF -- "$1" "$TMP/screen" && return 0
        sleep 0.1
        n=$((n + 1))
    done
    return 1
}
see() { # NAME TEXT
    if wait_screen "$2"; then pass "$1"; else fail "$1" "not on screen: $2 — $(cat "$TMP/screen")"; fi
}
keys() { tmux send-keys -t "$SESSION" "$@"; sleep 0.2; }

start_wizard() { # FILE ("" for none) [WIDTH HEIGHT]
    tmux kill-session -t "$SESSION" 2>/dev/null
    tmux new-session -d -s "$SESSION" -x "${2:-100}" -y "${3:-30}" \
        "env HOME='$HOME' TERM=tmux-256color '$TRAINJOB_BIN' --endpoint 'http+unix://$SOCK' new ${1:+-f '$1'}; echo EXIT=\$?; sleep 60"
}

start_wizard examples/pytorch-ddp.yaml
see "the wizard opens on Basics" "Basics"
see "the file prefills the display name" "ResNet50-DDP-基线"
see "the catalog fills the workspace" "default"
see "every section is listed" "TensorBoard"

# An invalid display name: the message appears under the field, the section is marked.
keys Tab End " x"
see "an invalid character shows its message" "character ' ' at position 16 is not allowed"
see "the section shows its error count" "Basics 1"
keys C-s
see "submit is blocked while there are errors" "1 error to fix before submitting"

# Resizing mid-form keeps what was typed.
tmux resize-window -t "$SESSION" -x 80 -y 24
see "after a resize to 80x24 the input is still there" "ResNet50-DDP-基线 x"

# Other sections, through PgDn.
keys PgDn
see "PgDn goes to Resources" "Resource spec"
see "the replica field says what it means" "1 master + 1"
keys PgDn PgDn PgDn PgDn PgDn
see "the review page shows the job as YAML" "display_name: ResNet50-DDP-"

# Fix it and submit.
keys PgUp PgUp PgUp PgUp PgUp PgUp
keys BSpace BSpace
see "fixing the name clears the error" "✓ Basics"
keys C-s
see "submit creates the job" "job resnet50-ddp created"
see "the wizard exits 0 after submitting" "EXIT=0"
run "$TRAINJOB_BIN" --endpoint "http+unix://$SOCK" get job resnet50-ddp -o json
expect_grep "the job exists on the engine with the typed fields" "$TMP/out" '"display_name": "ResNet50-DDP-基线"'

# Text from a file never reaches the terminal raw.
printf 'display_name: "evil\\e]0;pwned\\a\\e[2Jname"\nframework: MPI\n' >"$TMP/evil.yaml"
start_wizard "$TMP/evil.yaml"
see "a display name with escape sequences is shown harmlessly" "evil"
see "...its control characters drawn as replacement characters" "evil�"
title=$(tmux display-message -p -t "$SESSION" '#{pane_title}')
if [ "$title" = pwned ]; then fail "the file cannot retitle the terminal"; else pass "the file cannot retitle the terminal"; fi
see "...nor clear the screen (the form is still drawn)" "Display name"
keys Tab x
keys Escape
see "Esc with changes asks first" "Leave without submitting?"
keys Escape
see "a second Esc leaves without submitting" "left without submitting"
see "...with exit 1" "EXIT=1"

# A dropped session keeps what was typed: the next start offers the draft.
rm -rf "$HOME/.local/state/trainjob/drafts"
start_wizard ""
see "a new wizard opens empty" "Display name"
keys Tab "draft-行1"
sleep 0.6 # the draft is written once typing pauses
tmux kill-session -t "$SESSION"
sleep 0.3
start_wizard ""
see "the next start offers the draft" "Resume it?"
keys y
see "resuming restores the typed field" "draft-行1"
