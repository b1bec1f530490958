# The client's configuration from the command line (issue 12): `trainjob
# config get-contexts | current-context | use-context NAME`, $TRAINJOB_CONFIG,
# $TRAINJOB_SECRET_KEY instead of a secret_key_file (checked by a trainjobd
# that verifies every signature on loopback TCP), and the warning for a key
# file others can read. use-context must keep the user's file as written and
# never write one it cannot read back. The engine is started here and
# stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/hmac.sh
. tests/engine.sh
unset TRAINJOB_ENDPOINT TRAINJOB_CONFIG TRAINJOB_SECRET_KEY XDG_CONFIG_HOME XDG_STATE_HOME
export XDG_RUNTIME_DIR="$TMP/run"
tj=$TRAINJOB_BIN
CFG="$HOME/.config/trainjob/config.yaml"
PORT=$(free_port) || { echo "FAIL no free TCP port below the ephemeral range"; exit 1; }
ENGINE_ARGS="--listen 127.0.0.1:$PORT"

# --- no file: the built-in context ---
run "$tj" config get-contexts
expect_rc "get-contexts without a config file" 0
expect_grep "...shows the built-in local context as current" "$TMP/out" "*         local"
run "$tj" config current-context
check "current-context without a file is local" test "$(cat "$TMP/out")" = local
run "$tj" config use-context local
expect_rc "use-context on a file with no contexts is refused" 1
check "...and writes no file" test ! -e "$CFG"

# --- a file with comments, a flow item, and an odd layout ---
mkdir -p "$HOME/.config/trainjob"
cat >"$CFG" <<CONFIG
# my contexts -- keep this comment
contexts:
  - name: tcp            # the engine over loopback TCP
    endpoint: http://127.0.0.1:$PORT
    access_key: AKA
  - {name: "sock", endpoint: "http+unix://$SOCK"}   # flow style
  - name: filed
    endpoint: http://127.0.0.1:$PORT
    access_key: AKA
    secret_key_file: alice.sk
CONFIG
cp "$CFG" "$TMP/orig.yaml"
run "$tj" config get-contexts
expect_rc "get-contexts" 0
check "...lists every context, the first current" sh -c \
    'test "$(grep -c . "$1")" = 4 && grep -q "^\*  *tcp " "$1" && grep -q "^  *sock " "$1"' sh "$TMP/out"
run "$tj" config get-contexts -o name
check "get-contexts -o name prints the names" test "$(tr '\n' ' ' <"$TMP/out")" = "tcp sock filed "
run "$tj" config use-context sock
expect_rc "use-context sock" 0
expect_grep "...says so" "$TMP/out" 'Switched to context "sock"'
run "$tj" config current-context
check "...and it is current" test "$(cat "$TMP/out")" = sock
check "...the file gained exactly one line" test "$(diff "$TMP/orig.yaml" "$CFG" | grep -c '^[<>]')" = 1
expect_grep "...comments kept" "$CFG" "# my contexts -- keep this comment"
expect_grep "...and trailing ones" "$CFG" "# flow style"
run "$tj" config use-context filed
check "use-context again replaces the value in place" sh -c \
    'test "$(grep -c current_context "$1")" = 1 && grep -qx "current_context: filed" "$1"' sh "$CFG"
run "$tj" config use-context nope
expect_rc "use-context of an unknown name exits 1" 1
expect_grep "...naming it" "$TMP/err" "no context named 'nope'"
check "...and leaves the file alone" grep -qx "current_context: filed" "$CFG"
run "$tj" --context tcp config current-context
check "--context is the one in effect" test "$(cat "$TMP/out")" = tcp

# A config that is a symlink (dotfiles): the target is edited, the link stays.
mkdir -p "$TMP/dotfiles"
mv "$CFG" "$TMP/dotfiles/config.yaml"
chmod 640 "$TMP/dotfiles/config.yaml"
ln -s "$TMP/dotfiles/config.yaml" "$CFG"
run "$tj" config use-context sock
expect_rc "use-context through a symlink" 0
check "...the link is still a link" test -L "$CFG"
check "...its target was edited" grep -qx "current_context: sock" "$TMP/dotfiles/config.yaml"
check "...keeping the target's mode" test "$(stat -c %a "$TMP/dotfiles/config.yaml")" = 640

# A name YAML would read as something else is written quoted and reads back.
cat >"$TMP/odd.yaml" <<'CONFIG'
current_context:
contexts: [{name: "yes"}, {name: "a: b # c"}, {name: "x"}]
CONFIG
run env TRAINJOB_CONFIG="$TMP/odd.yaml" "$tj" config use-context yes
expect_rc "use-context 'yes' (a YAML 1.1 boolean) on an empty current_context" 0
run env TRAINJOB_CONFIG="$TMP/odd.yaml" "$tj" config current-context
check "...reads back as the string yes" test "$(cat "$TMP/out")" = yes
run env TRAINJOB_CONFIG="$TMP/odd.yaml" "$tj" config use-context "a: b # c"
run env TRAINJOB_CONFIG="$TMP/odd.yaml" "$tj" config current-context
check "a name with ': ' and ' #' reads back whole" test "$(cat "$TMP/out")" = "a: b # c"

# --- $TRAINJOB_CONFIG ---
cat >"$TMP/other.yaml" <<CONFIG
contexts:
- {name: elsewhere, endpoint: "http+unix://$SOCK"}
CONFIG
run env TRAINJOB_CONFIG="$TMP/other.yaml" "$tj" config get-contexts -o name
check "\$TRAINJOB_CONFIG names the file the config verbs read" test "$(cat "$TMP/out")" = elsewhere
run env TRAINJOB_CONFIG="$TMP/other.yaml" "$tj" --context tcp get jobs
expect_rc "...and the one every verb resolves contexts from" 2
expect_grep "...naming it" "$TMP/err" "$TMP/other.yaml"

# --- secrets: the engine checks every signature on TCP ---
engine_config <<KEYS
keys:
- {access_key: AKA, secret_key: SKA, user: $ME}
KEYS
start_engine
run "$tj" --context tcp get jobs
expect_rc "an access_key without secret_key_file or \$TRAINJOB_SECRET_KEY" 2
expect_grep "...says what is missing" "$TMP/err" "TRAINJOB_SECRET_KEY"
run env TRAINJOB_SECRET_KEY=SKA "$tj" --context tcp get jobs
expect_rc "\$TRAINJOB_SECRET_KEY signs the requests" 0
run env TRAINJOB_SECRET_KEY=wrong "$tj" --context tcp get jobs
expect_rc "...a wrong one is refused by the engine" 1

printf 'SKA\n' >"$TMP/dotfiles/alice.sk"
ln -s "$TMP/dotfiles/alice.sk" "$HOME/.config/trainjob/alice.sk"
chmod 600 "$TMP/dotfiles/alice.sk"
run "$tj" --context filed get jobs
expect_rc "a secret_key_file readable by its owner alone" 0
expect_no_grep "...gives no warning" "$TMP/err" "warning"
chmod 644 "$TMP/dotfiles/alice.sk"
run "$tj" --context filed get jobs
expect_rc "a key file others can read still works" 0
expect_grep "...with a warning naming the mode" "$TMP/err" "accessible by others (mode 0644)"
expect_grep "...and the fix" "$TMP/err" "chmod 600"
chmod 620 "$TMP/dotfiles/alice.sk"
run "$tj" --context filed get jobs
expect_grep "a key file the group may write is warned about too" "$TMP/err" "mode 0620"
stop_engine

# A submit reads the config file once: the file's check and the session it
# opens share one reading (and one look at the token), however far it gets.
if command -v strace >/dev/null 2>&1; then
    mkdir -p "$TMP/once/jobs"
    printf 'tok\n' >"$TMP/once/token"
    chmod 600 "$TMP/once/token"
    cat >"$TMP/once/config.yaml" <<EOC
current_context: lab
contexts:
  - name: lab
    driver: slurm
    endpoint: http://127.0.0.1:1
    user: root
    token_file: $TMP/once/token
    jobs_dir: $TMP/once/jobs
    workspace: default
EOC
    cat >"$TMP/once/job.yaml" <<'EOJ'
workspace_name: default
name: once
display_name: once
framework: PYTORCH_DDP
resource_pool:
  name: standard
roles:
  - total_replicas: 1
    image_path: registry.example.com/team/image:tag
    startup_script: "true"
    resource_spec:
      - name: gpu-2
EOJ
    run env TRAINJOB_CONFIG="$TMP/once/config.yaml" strace -f -qq -e trace=openat \
        -o "$TMP/once/trace" "$tj" submit -f "$TMP/once/job.yaml"
    expect_grep "a submit to an unreachable slurmrestd fails saying so" "$TMP/err" "cannot reach slurmrestd"
    n=$(grep -c "\"$TMP/once/config.yaml\"" "$TMP/once/trace")
    if [ "$n" -eq 1 ]; then pass "...having read the config file once"; else
        fail "...having read the config file once" "opened $n times"
    fi
else
    echo "SKIP a submit reads the config once: no strace"
fi
