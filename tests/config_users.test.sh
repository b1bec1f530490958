# A config file another user may write is not used (issue 20): tj-bob
# cannot make tj-alice's trainjob run his command as her or send her token
# to his server by editing a config.yaml she reads.
#
# The team keeps its Slurm context in a shared directory (group tj-team,
# set-gid), config.yaml left group-writable the way a team editing it
# together would. Bob adds a token_command of his own: on the old code
# alice's next `trainjob get jobs` ran it as her (his script left a file
# owned by alice). Now the file is refused before anything in it is used,
# naming it and the chmod that fixes it; so is a config.yaml bob owns. Her
# own config, mode 0600, still runs her own token_command. Likewise a
# token_file or ACP secret_key_file bob owns or may write (his token or
# key would make alice's requests his) is refused.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

tj_users || { echo "FAIL the two users can be made"; exit 1; }
# bob's listener (below) is stopped by its pid, whatever ends the suite
trap '[ -s "$TMP/drop/caught.pid" ] && kill "$(cat "$TMP/drop/caught.pid")" 2>/dev/null; rm -rf "$TMP"' EXIT
shared_tmp "$TMP/team"
chgrp "$TJ_TEAM" "$TMP/team"
chmod 2775 "$TMP/team"
shared_tmp "$TMP/drop"
chmod 1777 "$TMP/drop" # where a token_command leaves its trace

# config FILE COMMAND: a Slurm context whose token comes from COMMAND; the
# endpoint is a socket nobody listens on (the command runs before it is tried).
config() {
    {
        printf 'current_context: lab\ncontexts:\n'
        printf '  - name: lab\n    driver: slurm\n    endpoint: http+unix://%s\n' "$TMP/none.sock"
        printf '    user: %s\n    jobs_dir: %s\n    token_command: %s\n    workspace: team\n' \
            "$TJ_ALICE" "$TMP/jobs" "$2"
    } >"$1"
}
# trace WHO: a token_command that records which user ran it, then prints a token
trace() {
    f=$TMP/drop/$1.sh
    printf '#!/bin/sh\nid -un > %s/ran-%s\necho tok\n' "$TMP/drop" "$1" >"$f"
    chmod 755 "$f"
    echo "$f"
}
alice() { as_user "$TJ_ALICE" env TRAINJOB_CONFIG="$1" "$TRAINJOB_BIN" get jobs; }

# ---- alice's own config runs her own token_command --------------------------------
shared_tmp "$TMP/alice"
chown "$TJ_ALICE" "$TMP/alice"
config "$TMP/alice/config.yaml" "$(trace alice)"
chown "$TJ_ALICE" "$TMP/alice/config.yaml"
chmod 600 "$TMP/alice/config.yaml"
run alice "$TMP/alice/config.yaml"
if [ "$(cat "$TMP/drop/ran-alice" 2>/dev/null)" = "$TJ_ALICE" ]; then
    pass "alice's own config (0600) runs her token_command"
else
    fail "alice's own config (0600) runs her token_command" "rc $rc; $(head -c 400 "$TMP/err")"
fi

# umask 002's systems: group-writable, but the group is alice's own private group
chgrp "$TJ_ALICE" "$TMP/alice/config.yaml"
chmod 664 "$TMP/alice/config.yaml"
rm -f "$TMP/drop/ran-alice"
run alice "$TMP/alice/config.yaml"
if [ "$(cat "$TMP/drop/ran-alice" 2>/dev/null)" = "$TJ_ALICE" ]; then
    pass "...and so does one group-writable by her private group"
else
    fail "...and so does one group-writable by her private group" "rc $rc; $(head -c 400 "$TMP/err")"
fi

# ---- the team's group-writable config, edited by bob ---------------------------
TEAM=$TMP/team/config.yaml
config "$TEAM" /bin/true
chown "$TJ_ALICE:$TJ_TEAM" "$TEAM"
chmod 664 "$TEAM"
BOB_CMD=$(trace bob)
chown "$TJ_BOB" "$BOB_CMD"
# edited in place (the file stays alice's, as an editor saving over it leaves it)
as_user "$TJ_BOB" sh -c "sed 's|token_command: .*|token_command: $BOB_CMD|' '$TEAM' >'$TMP/drop/edit' &&
    cat '$TMP/drop/edit' >'$TEAM'"
if grep -qF "$BOB_CMD" "$TEAM" && [ "$(stat -c %U "$TEAM")" = "$TJ_ALICE" ]; then pass "bob can edit the team's config.yaml"; else
    fail "bob can edit the team's config.yaml" "$(cat "$TEAM")"
fi
run alice "$TEAM"
if [ -e "$TMP/drop/ran-bob" ]; then
    fail "bob's token_command never runs as alice" "it ran as $(cat "$TMP/drop/ran-bob")"
else
    pass "bob's token_command never runs as alice"
fi
expect_rc "...alice's get jobs is refused as a config error" 2
expect_grep "...naming the file" "$TMP/err" "$TEAM is writable by its group"
expect_grep "...and the fix" "$TMP/err" "chmod go-w $TEAM"

# every user may write it: said as such
chmod 666 "$TEAM"
run alice "$TEAM"
expect_grep "a config.yaml every user may write is refused" "$TMP/err" "$TEAM is writable by every user"
[ -e "$TMP/drop/ran-bob" ] && fail "...without running bob's command" || pass "...without running bob's command"

# ---- a config.yaml of bob's ------------------------------------------------------
chown "$TJ_BOB" "$TEAM"
chmod 644 "$TEAM"
run alice "$TEAM"
expect_rc "a config.yaml bob owns is refused to alice" 2
expect_grep "...naming its owner" "$TMP/err" "owned by user $TJ_BOB"
[ -e "$TMP/drop/ran-bob" ] && fail "...without running bob's command" || pass "...without running bob's command"

# ---- the fix the message gives works ----------------------------------------------
chown "$TJ_ALICE" "$TEAM"
chmod 664 "$TEAM"
as_user "$TJ_ALICE" chmod go-w "$TEAM"
config "$TEAM.new" "$(trace alice2)"
cat "$TEAM.new" >"$TEAM"
rm -f "$TEAM.new"
run alice "$TEAM"
if [ "$(cat "$TMP/drop/ran-alice2" 2>/dev/null)" = "$TJ_ALICE" ]; then
    pass "after chmod go-w the team config is used again"
else
    fail "after chmod go-w the team config is used again" "rc $rc; $(head -c 400 "$TMP/err")"
fi
# ---- a token_file bob owns or may write ------------------------------------------
# tokcfg TOKEN: alice's own config (0600) whose token is read from TOKEN
tokcfg() {
    config "$TMP/alice/tok.yaml" x
    sed -i "s|token_command: x|token_file: $1|" "$TMP/alice/tok.yaml"
    chown "$TJ_ALICE" "$TMP/alice/tok.yaml"
    chmod 600 "$TMP/alice/tok.yaml"
}
echo alice-jwt >"$TMP/alice/token"
chown "$TJ_ALICE" "$TMP/alice/token"
chmod 600 "$TMP/alice/token"
tokcfg "$TMP/alice/token"
run alice "$TMP/alice/tok.yaml"
expect_grep "alice's own token_file (0600) is used: the request is tried" "$TMP/err" "cannot reach slurmrestd"
echo bob-jwt >"$TMP/team/token"
chown "$TJ_BOB:$TJ_TEAM" "$TMP/team/token"
chmod 640 "$TMP/team/token"
tokcfg "$TMP/team/token"
run alice "$TMP/alice/tok.yaml"
expect_grep "a token_file bob owns is refused: alice never acts as bob" "$TMP/err" \
    "token_file $TMP/team/token is owned by user $TJ_BOB"
expect_no_grep "...and no request is made with it" "$TMP/err" "cannot reach slurmrestd"
chown "$TJ_ALICE:$TJ_TEAM" "$TMP/team/token"
chmod 660 "$TMP/team/token"
run alice "$TMP/alice/tok.yaml"
expect_grep "a token_file her team may write is refused" "$TMP/err" \
    "token_file $TMP/team/token is writable by its group"
expect_no_grep "...and no request is made with it" "$TMP/err" "cannot reach slurmrestd"
# ---- an ACP secret_key_file bob owns or may write ---------------------------------
# acpcfg KEY: alice's own config (0600), an ACP context signing with KEY
acpcfg() {
    {
        printf 'current_context: sh\ncontexts:\n  - name: sh\n    driver: acp\n'
        printf '    endpoint: http://127.0.0.1:9\n    access_key: AK\n    secret_key_file: %s\n' "$1"
    } >"$TMP/alice/acp.yaml"
    chown "$TJ_ALICE" "$TMP/alice/acp.yaml"
    chmod 600 "$TMP/alice/acp.yaml"
}
echo alice-secret >"$TMP/alice/sk"
chown "$TJ_ALICE" "$TMP/alice/sk"
chmod 600 "$TMP/alice/sk"
acpcfg "$TMP/alice/sk"
run alice "$TMP/alice/acp.yaml"
expect_grep "alice's own secret_key_file (0600) is used: the request is tried" "$TMP/err" "cannot reach"
echo bob-secret >"$TMP/team/sk"
chown "$TJ_BOB:$TJ_TEAM" "$TMP/team/sk"
chmod 644 "$TMP/team/sk" # bob wants alice to read it
acpcfg "$TMP/team/sk"
run alice "$TMP/alice/acp.yaml"
expect_grep "a secret_key_file bob owns is refused: alice never signs as bob" "$TMP/err" \
    "secret_key_file $TMP/team/sk is owned by user $TJ_BOB"
expect_no_grep "...and no request is signed with it" "$TMP/err" "cannot reach"
# ---- slurmrestd's socket in a directory every user may write -----------------------
# Bob listens where alice's config says slurmrestd's socket is (/tmp-like:
# 1777), and keeps what her client sends him.
cat >"$TMP/drop/listen.py" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(4)
with open(sys.argv[2] + ".pid", "w") as f:
    f.write(str(os.getpid()))
while True:
    c, _ = s.accept()
    c.settimeout(5)
    try:
        data = c.recv(65536)
    except OSError:
        data = b""
    with open(sys.argv[2], "ab") as f:
        f.write(data)
    c.sendall(b"HTTP/1.1 500 x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
    c.close()
PY
as_user "$TJ_BOB" python3 "$TMP/drop/listen.py" "$TMP/drop/slurmrestd.sock" "$TMP/drop/caught" \
    </dev/null >/dev/null 2>&1 &
n=0
while [ ! -s "$TMP/drop/caught.pid" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
tokcfg "$TMP/alice/token"
sed -i "s|endpoint: .*|endpoint: http+unix://$TMP/drop/slurmrestd.sock|" "$TMP/alice/tok.yaml"
run as_user "$TJ_ALICE" env TRAINJOB_CONFIG="$TMP/alice/tok.yaml" timeout 30 "$TRAINJOB_BIN" get jobs
kill "$(cat "$TMP/drop/caught.pid")" 2>/dev/null
if grep -q alice-jwt "$TMP/drop/caught" 2>/dev/null; then
    fail "alice's token never reaches bob's socket in a directory every user may write" \
        "bob caught: $(head -c 300 "$TMP/drop/caught")"
else
    pass "alice's token never reaches bob's socket in a directory every user may write"
fi
expect_grep "...the endpoint is refused, naming the directory" "$TMP/err" \
    "socket directory $TMP/drop is writable by every user"
exit 0
