# "new workspace…" in the wizard's workspace list (issue 11): a name asked
# for, the workspace created by the backend with the caller as its owner,
# the form then in it with what was typed kept; a refusal (here a bad name)
# shows under the field and creates nothing. Driven in tmux at 80×24 against
# a real trainjobd, stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

SESSION="tj-wizard-ws-$$"
. tests/tui.sh
start_engine

rm -rf "$HOME/.local/state/trainjob/drafts"
start_tui 80 24 "--endpoint '$EP' new"
see "the wizard opens" "Display name" 10
keys Tab "kept-typing" BTab # typed before, kept after
keys Enter
see "the workspace list offers a new one" "new workspace…"
keys "new work" Enter
see "choosing it asks for a name" "you become its owner"

# A refusal: the server's own message, under the field; nothing is created.
keys "Bad_Name" Enter
see "a bad name is refused under the field" "workspace name:"
see "...and said on the status line" "workspace Bad_Name not created"
grep -q "Bad_Name" "$CONF" && fail "...nor written to engine.yaml" "$(cat "$CONF")" || pass "...nor written to engine.yaml"

# A good name: created, chosen, the caller its owner.
keys Enter "new work" Enter
see "the prompt again" "you become its owner"
keys "team-x" Enter
see "the workspace is created" "workspace team-x created; you are its owner"
see_row "...and chosen in the form (the test's user is an admin: its role there)" "team-x" "admin"
see "...with what was typed kept" "kept-typing"
gone "...and the refusal gone" "workspace name:"
me=$(id -un)
if awk -v me="$me" '/team-x/ { f = 1 } f && /owners/ { o = 1 } f && o && index($0, me) { ok = 1 } END { exit !ok }' "$CONF"; then
    pass "trainjobd keeps it in engine.yaml, the caller its owner"
else fail "trainjobd keeps it in engine.yaml, the caller its owner" "$(cat "$CONF")"; fi

# Review and submit go to it.
keys PgDn PgDn PgDn PgDn PgDn PgDn PgDn
see "Review shows the new workspace" "workspace_name: team-x"

tmux kill-session -t "$SESSION" 2>/dev/null
stop_engine
