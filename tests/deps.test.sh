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
