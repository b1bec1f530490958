# libcrypto loaded on first use (issue 24): neither binary links it
# (readelf -d), a client that signs nothing runs without it, and signing
# still works end to end: tj-alice and tj-bob, each with their own key,
# submit and list over trainjobd's signed loopback TCP listener. With a
# libcrypto.so.3 that cannot be loaded, or that lacks OpenSSL's functions
# (stand-ins put first on LD_LIBRARY_PATH), a signed request fails before
# anything is sent, naming the library and its Debian package, and
# `trainjobd --listen` refuses to start saying the same; the Unix socket
# works on. The engine is started here and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh

T=$TRAINJOB_BIN
for t in readelf cc; do
    command -v "$t" >/dev/null 2>&1 || { fail "this suite needs $t" "scripts/deps.sh --test installs it"; exit 1; }
done
tj_users || { echo "FAIL tj_users: cannot make the test users"; exit 1; }
A=$TJ_ALICE B=$TJ_BOB

# ---- neither binary needs libcrypto at exec --------------------------------------------------

for b in "$T" "$TRAINJOBD_BIN"; do
    n=$(basename "$b")
    readelf -d "$b" >"$TMP/elf.$n" 2>&1
    expect_grep "$n's dynamic section is readable" "$TMP/elf.$n" NEEDED
    expect_no_grep "...and $n does not link libcrypto (no DT_NEEDED libcrypto)" "$TMP/elf.$n" libcrypto
done

# Two stand-ins for libcrypto.so.3, each alone in a directory put first on
# LD_LIBRARY_PATH: an empty file (dlopen fails: "file too short"), and a
# library of that soname without OpenSSL's functions.
shared_tmp "$TMP/lib"
mkdir -p "$TMP/lib/unloadable" "$TMP/lib/stub"
: >"$TMP/lib/unloadable/libcrypto.so.3"
printf 'int not_openssl(void);\nint not_openssl(void) { return 0; }\n' >"$TMP/stub.c"
cc -shared -fPIC -Wl,-soname,libcrypto.so.3 -o "$TMP/lib/stub/libcrypto.so.3" "$TMP/stub.c"
check "a stand-in libcrypto.so.3 without OpenSSL's functions is built" test -s "$TMP/lib/stub/libcrypto.so.3"
chmod -R a+rX "$TMP/lib"

# ---- the engine: a signed TCP listener, keys for tj-alice and tj-bob ----------------------------

PORT=$(free_port) || { echo "FAIL no free TCP port below the ephemeral range"; exit 1; }
team_with_keys "$A" "$B" | engine_config

# Without --listen trainjobd checks no signature: it starts without libcrypto.
# (Through a wrapper: start_engine's own curl must not see the stand-in.)
printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "$TMP/lib/unloadable" "$TRAINJOBD_BIN" \
    >"$TMP/trainjobd-unloadable"
chmod +x "$TMP/trainjobd-unloadable"
REAL_TRAINJOBD=$TRAINJOBD_BIN
TRAINJOBD_BIN="$TMP/trainjobd-unloadable"
start_engine
check "trainjobd without --listen starts with an unloadable libcrypto, and answers" test $? = 0
TRAINJOBD_BIN=$REAL_TRAINJOBD
stop_engine
check "...and stops cleanly" test "$ENGINE_RC" = 0

# With --listen every TCP request is checked: no libcrypto, no listener, said at once.
for lib in unloadable stub; do
    run env LD_LIBRARY_PATH="$TMP/lib/$lib" timeout 20 "$TRAINJOBD_BIN" --foreground --config "$CONF" \
        --state-dir "$TMP/state-$lib" --socket "$TMP/run/$lib.sock" --listen "127.0.0.1:$PORT"
    check "$lib libcrypto: trainjobd --listen refuses to start" test "$rc" != 0 -a "$rc" != 124
    expect_grep "...naming the flag" "$TMP/err" "--listen 127.0.0.1:$PORT"
    expect_grep "...the library and its Debian package" "$TMP/err" \
        "ACP signing needs libcrypto.so.3 (Debian: libssl3)"
done
expect_grep "...and, for the stub, the function it lacks" "$TMP/err" "has no EVP_sha256"

ENGINE_ARGS="--listen 127.0.0.1:$PORT"
start_engine || exit 1

# ---- two users sign with their own keys, over TCP -----------------------------------------------

shared_tmp "$TMP/users"
# A HOME for each with a context tcp (signed with its own key, workspace team).
signed_home "$A" SKA tcp="$PORT"
signed_home "$B" SKB tcp="$PORT"
# as USER [VAR=VALUE…] CMD… : CMD as USER with the HOME above (and VAR=VALUE…).
as() { _u=$1; shift; as_user "$_u" env HOME="$TMP/users/$_u" "$@"; }
for u in "$A" "$B"; do
    sleeper_job team "of-$u" >"$TMP/users/$u.yaml"
    chmod 0644 "$TMP/users/$u.yaml"
done

run as "$A" "$T" --context tcp submit -f "$TMP/users/$A.yaml"
expect_rc "$A submits over signed TCP" 0
expect_grep "...and the job is created" "$TMP/out" "job of-$A created"
run as "$B" "$T" --context tcp submit -f "$TMP/users/$B.yaml"
expect_rc "$B submits over signed TCP with his own key" 0
check "...each job is its signer's ($A's)" test "$(field "of-$A" .ownership.user_name team)" = "$A"
check "...($B's)" test "$(field "of-$B" .ownership.user_name team)" = "$B"
run as "$B" "$T" --context tcp get jobs
expect_rc "$B lists the team's jobs over signed TCP" 0
expect_grep "...seeing $A's" "$TMP/out" "of-$A"
run as "$B" "$T" --context tcp delete "of-$A"
expect_rc "...and the engine, by his signature, refuses him $A's job" 1

# ---- without libcrypto: nothing signed, nothing sent, the library named ----------------------

for lib in unloadable stub; do
    run as "$A" LD_LIBRARY_PATH="$TMP/lib/$lib" "$T" --context tcp get jobs
    expect_rc "$lib libcrypto: a signed get jobs exits 3 (the request cannot be made)" 3
    expect_grep "...naming the library and its Debian package" "$TMP/err" \
        "ACP signing needs libcrypto.so.3 (Debian: libssl3)"
    run as "$A" LD_LIBRARY_PATH="$TMP/lib/$lib" "$T" --context tcp delete "of-$A"
    expect_rc "...a signed delete exits 3" 3
    check "...and sends nothing: $A's job is still there" test "$(field "of-$A" .state team)" != null
done
expect_grep "...and, for the stub, the function it lacks" "$TMP/err" "has no EVP_sha256"

# The engine's own user over its socket signs nothing: libcrypto is never loaded.
cat >"$HOME/config.yaml" <<EOF
contexts:
- name: local
  driver: trainjobd
  endpoint: http+unix://$SOCK
  workspace: team
EOF
run env LD_LIBRARY_PATH="$TMP/lib/unloadable" TRAINJOB_CONFIG="$HOME/config.yaml" "$T" --context local get jobs
expect_rc "an unsigned get jobs on the socket runs with an unloadable libcrypto" 0
expect_grep "...listing the jobs" "$TMP/out" "of-$B"
run env LD_LIBRARY_PATH="$TMP/lib/unloadable" "$T" --version
expect_rc "...and so does trainjob --version" 0
