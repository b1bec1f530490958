# The client's bounded input (issue 20, items 3, 5, 11 and 15), as two real
# Unix users (tj-alice, tj-bob) meet it on a shared login node:
#  - a token_command that prints a token and lingers (or whose child keeps
#    its stdout) is killed after 10 s, the error naming token_command, where
#    the CLI used to wait as long as it lived;
#  - token_file is resolved like secret_key_file: "~/" under the user's
#    home, a relative path beside config.yaml whatever the current
#    directory (so a directory another user controls cannot hand alice a
#    token), and a missing one is a config error naming the context, the
#    field and the path (exit 2), not slurmrestd refusing the token;
#  - a job file of nested YAML aliases (a "billion laughs", 10^9 nodes once
#    expanded) is refused at once, under a memory limit the old code blew
#    through, by validate and render, naming the alias's node and the limit;
#  - mount_path, subdir and tensorboard.log_path holding a bidi control or a
#    zero-width character are refused naming the field and the code point;
#  - `metrics -o table` prints every series of a log directory with more
#    than 4,096 (run, tag) pairs, and past its own bound says how many
#    points it left out and exits 1;
#  - `logs` to a terminal: an unterminated OSC hides nothing after its line.
# No server is needed for most: a slurm context whose endpoint is a closed
# port shows whether the token was read (the request then fails to connect).
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

tj_users || { echo "FAIL tj_users: cannot make the test users"; exit 1; }
chmod 0755 "$TMP"
TJ="$TRAINJOB_BIN"
PORT=$(free_port 1) || { echo "FAIL no free TCP port"; exit 1; }
# Homes of their own under $TMP (HOME set over as_user's), not the users' real
# ones, which other suites running at the same time may use.
ALICE_HOME=$TMP/home-alice
BOB_HOME=$TMP/home-bob
mkdir -p "$ALICE_HOME" "$BOB_HOME"
chown "$TJ_ALICE:$TJ_ALICE" "$ALICE_HOME"
chown "$TJ_BOB:$TJ_BOB" "$BOB_HOME"
chmod 0700 "$ALICE_HOME"
alice() { as_user "$TJ_ALICE" env HOME="$ALICE_HOME" "$@"; }

# slurm_config FILE TOKEN_LINE : a slurm context "lab" on a closed port
slurm_config() {
    mkdir -p "$(dirname "$1")"
    printf 'current_context: lab\ncontexts:\n  - name: lab\n    driver: slurm\n    endpoint: http://127.0.0.1:%s\n    user: alice\n    jobs_dir: /tmp\n    %s\n' \
        "$PORT" "$2" >"$1"
}

# ---- 3. token_command is bounded in the CLI too ----------------------------------
# It prints a valid token at once and then sleeps: the old CLI read its stdout
# until end of file, so it waited the whole minute (here: killed by timeout 30).
shared_tmp "$TMP/t3"
printf 'echo SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.e30.sig\nexec sleep 60\n' >"$TMP/t3/linger.sh"
printf 'echo SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.e30.sig\nsleep 60 &\n' >"$TMP/t3/child.sh"
chmod 0644 "$TMP/t3/linger.sh" "$TMP/t3/child.sh"
slurm_config "$TMP/t3/linger.yaml" "token_command: sh $TMP/t3/linger.sh"
slurm_config "$TMP/t3/child.yaml" "token_command: sh $TMP/t3/child.sh"
chmod 0644 "$TMP/t3/linger.yaml" "$TMP/t3/child.yaml"
for what in linger child; do
    run alice env TRAINJOB_CONFIG="$TMP/t3/$what.yaml" timeout 30 "$TJ" get jobs
    if [ "$rc" -eq 124 ]; then
        fail "token_command ($what): the CLI gives up within 30 s" "still waiting after 30 s"
    else
        pass "token_command ($what): the CLI gives up within 30 s"
    fi
    expect_grep "...with an error naming token_command ($what)" "$TMP/err" \
        "context 'lab': token_command 'sh $TMP/t3/$what.sh' timed out after 10 s"
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then pass "...and a failing status ($what: $rc)"; else
        fail "...and a failing status ($what)" "exit $rc"
    fi
done

# ---- 5. token_file: ~/ and relative paths, a missing one named ----------------------
# alice's config in her home names ~/tok; she runs trainjob from bob's directory.
mkdir -p "$ALICE_HOME/.config/trainjob" "$BOB_HOME/share"
slurm_config "$ALICE_HOME/.config/trainjob/tilde.yaml" "token_file: ~/tok"
slurm_config "$ALICE_HOME/.config/trainjob/relative.yaml" "token_file: tok.jwt"
printf 'SLURM_JWT=alice.token.sig\n' >"$ALICE_HOME/tok"
printf 'SLURM_JWT=alice.token.sig\n' >"$ALICE_HOME/.config/trainjob/tok.jwt"
chmod 0600 "$ALICE_HOME/tok" "$ALICE_HOME/.config/trainjob/tok.jwt"
chown -R "$TJ_ALICE:$TJ_ALICE" "$ALICE_HOME/.config" "$ALICE_HOME/tok"
# bob plants his own tok.jwt where alice runs trainjob
printf 'SLURM_JWT=bob.token.sig\n' >"$BOB_HOME/share/tok.jwt"
chmod 0755 "$BOB_HOME" "$BOB_HOME/share"
chmod 0644 "$BOB_HOME/share/tok.jwt"
chown -R "$TJ_BOB:$TJ_BOB" "$BOB_HOME/share"

for how in tilde relative; do
    run alice sh -c "cd '$BOB_HOME/share' && TRAINJOB_CONFIG='$ALICE_HOME/.config/trainjob/$how.yaml' timeout 30 '$TJ' get jobs"
    # The token was read: the request went on to the closed port (3: unreachable).
    if [ "$rc" -eq 3 ] && ! grep -q "token_file\|authentication" "$TMP/err"; then
        pass "token_file ($how) is read wherever alice runs trainjob"
    else
        fail "token_file ($how) is read wherever alice runs trainjob" "exit $rc: $(head -c 400 "$TMP/err")"
    fi
done
# Without hers, bob's file in the current directory is not taken: the error names hers.
mv "$ALICE_HOME/.config/trainjob/tok.jwt" "$ALICE_HOME/.config/trainjob/tok.gone"
run alice sh -c "cd '$BOB_HOME/share' && TRAINJOB_CONFIG='$ALICE_HOME/.config/trainjob/relative.yaml' timeout 30 '$TJ' get jobs"
expect_rc "a missing token_file is a config error (exit 2)" 2
expect_grep "...naming the context, the field and the path beside config.yaml" "$TMP/err" \
    "context 'lab': token_file $ALICE_HOME/.config/trainjob/tok.jwt: No such file or directory"
expect_no_grep "...not bob's file in the current directory" "$TMP/err" "$BOB_HOME/share"
expect_no_grep "...nor an authentication failure" "$TMP/err" "authentication failed"
rm -f "$ALICE_HOME/tok"
run alice env TRAINJOB_CONFIG="$ALICE_HOME/.config/trainjob/tilde.yaml" "$TJ" get jobs
expect_rc "a missing ~/token_file is a config error (exit 2)" 2
expect_grep "...naming it under alice's home" "$TMP/err" "context 'lab': token_file $ALICE_HOME/tok: No such file or directory"
# bob's token file, unreadable to alice, is named as such.
printf 'SLURM_JWT=bob.token.sig\n' >"$BOB_HOME/bob.jwt"
chown "$TJ_BOB:$TJ_BOB" "$BOB_HOME/bob.jwt"
chmod 0600 "$BOB_HOME/bob.jwt"
slurm_config "$ALICE_HOME/.config/trainjob/bobs.yaml" "token_file: $BOB_HOME/bob.jwt"
chown "$TJ_ALICE:$TJ_ALICE" "$ALICE_HOME/.config/trainjob/bobs.yaml"
run alice env TRAINJOB_CONFIG="$ALICE_HOME/.config/trainjob/bobs.yaml" "$TJ" get jobs
expect_rc "an unreadable token_file is a config error (exit 2)" 2
expect_grep "...naming it" "$TMP/err" "context 'lab': token_file $BOB_HOME/bob.jwt: Permission denied"
rm -rf "$ALICE_HOME/.config" "$BOB_HOME/share" "$BOB_HOME/bob.jwt"

# ---- 11. a billion laughs in metadata: refused at once, in bounded memory ----------
# Nine levels of ten aliases: 10^9 nodes once expanded (the old decoder's deep
# copy took 16.7 GB). The file is bob's, shared for alice to try.
shared_tmp "$TMP/t11"
{
    sed -n '/^workspace_name:/,$p' examples/pytorch-ddp.yaml
    printf 'metadata:\n  x0: &a0 "lol"\n'
    i=1
    while [ $i -le 9 ]; do
        printf '  x%d: &a%d [' $i $i
        k=0
        while [ $k -lt 10 ]; do
            [ $k -gt 0 ] && printf ', '
            printf '*a%d' $((i - 1))
            k=$((k + 1))
        done
        printf ']\n'
        i=$((i + 1))
    done
} >"$TMP/t11/bomb.yaml"
chmod 0644 "$TMP/t11/bomb.yaml"
bomb_line=$(grep -n '^  x5:' "$TMP/t11/bomb.yaml" | cut -d: -f1)
# Memory: an address-space limit, except under ASan (whose shadow needs terabytes of
# it), where the peak resident size says the same.
if grep -q __asan_init "$TJ" 2>/dev/null; then LIMIT_KB=unlimited; else LIMIT_KB=400000; fi
for verb in validate render; do
    run alice sh -c "ulimit -v $LIMIT_KB; exec /usr/bin/time -f 'maxrss %M' timeout 20 '$TJ' $verb '$TMP/t11/bomb.yaml'"
    expect_rc "$verb: the alias bomb is refused (exit 1)" 1
    expect_grep "...at the alias that goes over, naming the node and the limit ($verb)" "$TMP/err" \
        "$TMP/t11/bomb.yaml:$bomb_line:47: error: metadata.x5[7]: aliases expand to more than 100000 nodes"
    kb=$(sed -n 's/^maxrss \([0-9]*\)$/\1/p' "$TMP/err")
    if [ -n "$kb" ] && [ "$kb" -lt 200000 ]; then pass "...in bounded memory ($verb: $kb KB)"; else
        fail "...in bounded memory ($verb)" "maxrss ${kb:-?} KB: $(tail -c 300 "$TMP/err")"
    fi
done
# Ordinary anchors and aliases still work.
{
    sed -n '/^workspace_name:/,/^roles:/p' examples/pytorch-ddp.yaml | sed '$d'
    printf 'roles:\n  - &worker\n    name: Worker\n    total_replicas: 2\n    resource_spec:\n      - name: cpu-1\n    image_path: local/host\n    startup_script: echo hi\nmetadata:\n  labels: &l {team: vision}\n  copy: *l\n'
} >"$TMP/t11/anchors.yaml"
run "$TJ" validate "$TMP/t11/anchors.yaml"
expect_rc "a job file with ordinary anchors and aliases is valid" 0

# ---- 15. paths with bidi controls and zero-width characters -------------------------
# mount_path "/mnt/afs<U+202E>" reads as another path than the worker gets.
RLO=$(printf '\342\200\256')
ZWSP=$(printf '\342\200\213')
sed -e "s|mount_path: /mnt/afs|mount_path: /mnt/afs$RLO|" -e "s|subdir: /resnet|subdir: /res${ZWSP}net|" \
    -e "s|log_path: /mnt/afs/tb|log_path: /mnt/afs/t${ZWSP}b|" examples/pytorch-ddp.yaml >"$TMP/bidi.yaml"
run "$TJ" validate "$TMP/bidi.yaml"
expect_rc "validate refuses invisible format characters in paths (exit 1)" 1
expect_grep "...in mount_path, naming the field and the code point" "$TMP/err" "mount[0].mount_path: must not contain U+202E"
expect_grep "...in subdir" "$TMP/err" "mount[0].subdir: must not contain U+200B"
expect_grep "...in tensorboard.log_path" "$TMP/err" "tensorboard.log_path: must not contain U+200B"

# ---- 15. metrics -o table past 4,096 series ------------------------------------------
# A log directory (a job's, shared for the team to read) with 4,100 tags: the old
# table stopped at 4,096 rows and said nothing.
WRITER="$(dirname "$TRAINJOB_BIN")/tests/tools/scalarwrite"
[ -x "$WRITER" ] || WRITER="$TRAINJOB_TOP/build/tests/tools/scalarwrite"
# tags DIR FROM TO : one event file in DIR with tags tFROM..tTO at step 1
tags() {
    mkdir -p "$1"
    seq "$2" "$3" | sed 's/^\(.*\)$/t\1=1:0.5/' | xargs "$WRITER" "$1/events.out.tfevents.1.host"
}
tags "$TMP/tb4100" 1 4100
run "$TJ" metrics --logdir "$TMP/tb4100"
expect_rc "metrics -o table: 4,100 series print (exit 0)" 0
rows=$(($(wc -l <"$TMP/out") - 1))
if [ "$rows" -eq 4100 ]; then pass "...every one of them (4100 rows)"; else
    fail "...every one of them" "$rows rows; stderr: $(head -c 300 "$TMP/err")"
fi
expect_grep "...the last one too" "$TMP/out" "t4100"
# Past the table's own bound (65,536 series, its memory): said, and exit 1.
i=0
while [ $i -lt 17 ]; do
    tags "$TMP/tbmany/r$i" 1 3856 # 17 x 3,856 = 65,552 series
    i=$((i + 1))
done
run "$TJ" metrics --logdir "$TMP/tbmany"
expect_rc "metrics -o table past 65,536 series: exit 1" 1
expect_grep "...saying how many points were left out" "$TMP/err" \
    "a table shows at most 65536 series (run, tag); 16 points of further series were left out"
rows=$(($(wc -l <"$TMP/out") - 1))
if [ "$rows" -eq 65536 ]; then pass "...after the 65,536 rows it holds"; else fail "...after the 65,536 rows it holds" "$rows rows"; fi
run "$TJ" metrics --logdir "$TMP/tbmany" -o csv
if [ "$rc" -eq 0 ] && [ "$(($(wc -l <"$TMP/out") - 1))" -eq 65552 ]; then pass "...while -o csv gives every point"; else
    fail "...while -o csv gives every point" "exit $rc, $(wc -l <"$TMP/out") lines"
fi
