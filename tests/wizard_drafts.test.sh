# The wizard's drafts as issue 11 asks: one draft per job being edited (a new
# job, an edit of file F, a clone of X), listed at `trainjob new` start with
# their local times when there is more than one, to resume or discard; a file
# or a clone offers only its own draft; a resumed draft is the one written
# from then on and a submit removes it. A draft's label line is hostile: it
# never reaches the terminal raw. Driven in tmux at 80×24 against a real
# trainjobd, stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

SESSION="tj-wizard-drafts-$$"
. tests/tui.sh
start_engine
D="$HOME/.local/state/trainjob/drafts"
# A copy at a short path: the list row is 80 columns, and a checkout's own path could push
# the label past its edge (the test must not depend on where the tree is).
FILE="$TMP/ddp.yaml"
cp "$TRAINJOB_TOP/examples/pytorch-ddp.yaml" "$FILE"
export TZ=JST-9 # a zone of its own (no tzdata needed): the list must show local time
TUI_ENV="TZ='$TZ'"

wizard() { # ARGS for `trainjob new`
    tmux kill-session -t "$SESSION" 2>/dev/null
    sleep 0.5 # a killed wizard saves its draft on the way out
    start_tui 80 24 "--endpoint '$EP' new $*"
}
drafts() { find "$D" -maxdepth 1 -type f -name 'draft*' | wc -l; }
# draft_with TEXT: the draft file holding TEXT, waited for up to 5 s (drafts are written once typing pauses)
draft_with() {
    n=0
    while [ $n -lt 50 ]; do
        f=$(find "$D" -maxdepth 1 -type f -name 'draft*' -exec grep -lF -- "$1" {} + 2>/dev/null | head -1)
        [ -n "$f" ] && { echo "$f"; return 0; }
        sleep 0.1
        n=$((n + 1))
    done
    return 1
}

# A new job: its draft says what it is a draft of.
rm -rf "$D"
wizard ""
see "a new wizard opens empty" "Display name"
keys Tab "first-new"
NEWD=$(draft_with first-new)
if [ -n "$NEWD" ] && head -1 "$NEWD" | grep -qx '# trainjob draft: new job'; then
    pass "a new job's draft is labelled new job"
else fail "a new job's draft is labelled new job" "$(head -1 "$NEWD" 2>&1)"; fi

# An edit of a file: a draft of its own, and the new job's draft is not offered to it.
wizard "-f '$FILE'"
see "the file opens" "ResNet50-DDP"
gone "a file run does not offer another job's draft" "Resume it?"
keys Tab C-u "edited-file"
EDITD=$(draft_with edited-file)
if [ -n "$EDITD" ] && [ "$EDITD" != "$NEWD" ] && head -1 "$EDITD" | grep -qxF "# trainjob draft: edit of $FILE"; then
    pass "the file's draft is its own, labelled with the file"
else fail "the file's draft is its own, labelled with the file" "$EDITD: $(head -1 "$EDITD" 2>&1)"; fi
[ "$(drafts)" = 2 ] && pass "...beside the new job's (2 drafts)" || fail "...beside the new job's (2 drafts)" "$(ls "$D")"

# A clone: a draft of its own too.
wizard "-f '$FILE' --clone-of resnet50-ddp"
see "a clone opens from its file" "ResNet50-DDP"
gone "...without offering the file's draft" "Resume it?"
keys Tab C-u "cloned-one"
CLONED=$(draft_with cloned-one)
if [ -n "$CLONED" ] && head -1 "$CLONED" | grep -qx '# trainjob draft: clone of resnet50-ddp'; then
    pass "a clone's draft is labelled clone of X"
else fail "a clone's draft is labelled clone of X" "$(head -1 "$CLONED" 2>&1)"; fi

# A hostile draft: its label tries to retitle the terminal and clear the screen.
printf '# trainjob draft: \033]2;pwned\007evil\033[2J label\ndisplay_name: hostile\n' >"$D/draft-00000000000000ba.yaml"
touch -d '2026-01-02 03:04:00 UTC' "$D/draft-00000000000000ba.yaml"
mkfifo "$D/draft-fifo.yaml" # not a regular file: skipped, never opened for reading

# `new` alone: the list, newest first, in local time.
wizard ""
see "more than one draft opens the list" "Unfinished jobs (drafts)"
see "...with the new job" "new job"
see "...the edit of the file" "edit of $FILE"
see "...and the clone" "clone of resnet50-ddp"
see "...in local time" "2026-01-02 12:04 JST"
see "...the hostile label shown as text" "evil label"
title=$(tmux display -p -t "$SESSION" '#{pane_title}')
[ "$title" != pwned ] && pass "...whose escape never reached the terminal" || fail "...whose escape never reached the terminal" "pane title: $title"
see "the keys are on screen" "Enter resume   d discard"

# Discard: d, then d again.
keys End d
see "d asks once more" "d again discards the draft of evil label"
[ -f "$D/draft-00000000000000ba.yaml" ] && pass "...and discards nothing yet" || fail "...and discards nothing yet" "$(ls "$D")"
keys d
see "d again discards it" "discarded the draft of evil label"
[ ! -e "$D/draft-00000000000000ba.yaml" ] && pass "...its file is gone" || fail "...its file is gone" "$(ls "$D")"
gone "...and so is its row" "2026-01-02 12:04 JST"

# Pick the new job's draft (the oldest left: the last row).
keys End Enter
see "Enter resumes the chosen draft" "first-new"
keys Tab End "-more"
[ "$(draft_with first-new-more)" = "$NEWD" ] && pass "a resumed draft is the one written (no new file)" ||
    fail "a resumed draft is the one written (no new file)" "$(ls "$D")"
[ "$(drafts)" = 3 ] && pass "...still 3 drafts" || fail "...still 3 drafts" "$(ls "$D")"

# The file again: its own draft is offered, yes or no.
wizard "-f '$FILE'"
see "a file offers its own draft" "Resume it?"
see "...saying whose it is" "edit of"
keys y
see "...and resumes it" "edited-file"
keys Escape Escape
see "leaving keeps it" "offers the draft again"
[ -f "$EDITD" ] && pass "...the file's draft is there" || fail "...the file's draft is there" "$(ls "$D")"

# n on the list starts a new job, with a draft of its own; the others stay.
wizard ""
see "the list again" "Unfinished jobs (drafts)"
keys n
see "n starts an empty new job" "Display name"
gone "...not a resumed one" "first-new"
keys Tab "second-new"
SECOND=$(draft_with second-new)
[ -n "$SECOND" ] && [ "$SECOND" != "$NEWD" ] && pass "a second new job is a draft of its own" ||
    fail "a second new job is a draft of its own" "$(ls "$D")"
[ "$(drafts)" = 4 ] && pass "...4 drafts, none lost" || fail "...4 drafts, none lost" "$(ls "$D")"

# A submit removes the draft it came from, and only that one.
wizard "-f '$FILE' --created-to '$TMP/created'"
see "the file's draft is offered once more" "Resume it?"
keys y
see "...resumed" "edited-file"
keys C-s
see "the resumed job is submitted" "EXIT=0" 20
[ ! -e "$EDITD" ] && pass "submitting removes its draft" || fail "submitting removes its draft" "$(ls "$D")"
[ "$(drafts)" = 3 ] && pass "...and no other" || fail "...and no other" "$(ls "$D")"

tmux kill-session -t "$SESSION" 2>/dev/null
stop_engine
