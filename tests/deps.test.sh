# scripts/deps.sh asks pkg-config and installs exactly what is missing.
# A fake pkg-config on PATH makes one library look absent; DEPS_DRY_RUN keeps
# the script from installing anything.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

run env DEPS_DRY_RUN=1 scripts/deps.sh
expect_rc "deps on this machine: nothing to do" 0
if [ -s "$TMP/out" ]; then fail "nothing missing, nothing printed" "$(cat "$TMP/out")"; else
    pass "nothing missing, nothing printed"; fi

mkdir -p "$TMP/bin"
real=$(command -v pkg-config)
cat >"$TMP/bin/pkg-config" <<EOS
#!/bin/sh
# Pretends jansson and sqlite3 are not installed.
for a in "\$@"; do case "\$a" in jansson|sqlite3) exit 1 ;; esac; done
exec "$real" "\$@"
EOS
chmod +x "$TMP/bin/pkg-config"
run env PATH="$TMP/bin:$PATH" DEPS_DRY_RUN=1 scripts/deps.sh
expect_rc "deps dry run" 0
expect_grep "a missing library names its Debian package" "$TMP/out" "libjansson-dev"
expect_grep "every missing library is named" "$TMP/out" "libsqlite3-dev"
expect_no_grep "present libraries are not reinstalled" "$TMP/out" "libyaml-dev"

# Building needs only what building needs (issue 23): plain `make` runs
# scripts/deps.sh without --test, which leaves the tests' tools and cmocka
# to `make test` (--test).
cat >"$TMP/bin/pkg-config" <<EOS
#!/bin/sh
# Pretends jansson and cmocka are not installed.
for a in "\$@"; do case "\$a" in jansson|cmocka) exit 1 ;; esac; done
exec "$real" "\$@"
EOS
run env PATH="$TMP/bin:$PATH" DEPS_DRY_RUN=1 scripts/deps.sh
expect_grep "building: a missing build library is named" "$TMP/out" "libjansson-dev"
expect_no_grep "...cmocka, for the unit tests only, is not" "$TMP/out" "libcmocka-dev"
run env PATH="$TMP/bin:$PATH" DEPS_DRY_RUN=1 scripts/deps.sh --test
expect_grep "testing (--test): cmocka is named too" "$TMP/out" "libcmocka-dev"
expect_grep "...with the build's" "$TMP/out" "libjansson-dev"

# Under fakeroot (uid 0 that is no root) and in a package build, never apt-get:
# the exact command is printed and the script fails. apt-get here is a
# stand-in that leaves a mark.
printf '#!/bin/sh\ntouch "%s"\nexit 0\n' "$TMP/apt-ran" >"$TMP/bin/apt-get"
chmod +x "$TMP/bin/apt-get"
for how in FAKEROOTKEY=1 DEB_RULES_REQUIRES_ROOT=no; do
    rm -f "$TMP/apt-ran"
    run env PATH="$TMP/bin:$PATH" "$how" scripts/deps.sh
    if [ "$(id -u)" -eq 0 ]; then
        expect_rc "as uid 0 with $how: refuses" 1
        if [ -e "$TMP/apt-ran" ]; then fail "...and runs no apt-get" "it ran"; else pass "...and runs no apt-get"; fi
        expect_grep "...printing what to install" "$TMP/err" "apt-get install libjansson-dev"
    else
        echo "SKIP $how: not root"
    fi
done
