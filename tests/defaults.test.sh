# One derivation of defaults (api/jobspec_defaults, issue 11 defect 4):
# `trainjob render`, with the catalog of the backend that answers, prints the
# quota type and preemptible trainjobd stores for the same file — for every
# file in examples/ and for an idle-pool file without quota_type (render used
# to print RESERVED there while the engine stored SPOT + preemptible). The
# wizard's side is tests/test_wizard.c (same function, same catalog).
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh
trap engine_cleanup EXIT
start_engine
tj() { "$TRAINJOB_BIN" --endpoint "http+unix://$SOCK" "$@"; }

sed -e '/quota_type:/d' -e 's/^display_name: .*/display_name: no-quota-type/' \
    examples/idle-preemptible.yaml >"$TMP/idle-no-quota.yaml"

# field FILE.json KEY: the value of "KEY": in a JSON document (first one)
field() { sed -n "s/.*\"$2\": *\"\{0,1\}\([-A-Za-z0-9_]*\)\"\{0,1\}.*/\1/p" "$1" | head -1; }

i=0
for f in examples/*.yaml "$TMP/idle-no-quota.yaml"; do
    i=$((i + 1))
    name="defaults-$i"
    # the file's own name (if any) replaced, so every job is new; one worker fits any machine
    sed -e '/^name:/d' -e 's/total_replicas: [0-9]*/total_replicas: 1/' "$f" >"$TMP/f$i.yaml"
    printf 'name: %s\n' "$name" >>"$TMP/f$i.yaml"
    tj render -o json "$TMP/f$i.yaml" >"$TMP/render$i.json" 2>"$TMP/render$i.err"
    if grep -q "no backend answered" "$TMP/render$i.err"; then
        fail "render $(basename "$f") with the engine's catalog" "$(cat "$TMP/render$i.err")"
        continue
    fi
    if ! tj submit "$TMP/f$i.yaml" >"$TMP/submit$i.out" 2>&1; then
        fail "submit $(basename "$f")" "$(cat "$TMP/submit$i.out")"
        continue
    fi
    tj get job "$name" -o json >"$TMP/get$i.json" 2>&1
    for k in quota_type preemptible priority backoff_limit; do
        r=$(field "$TMP/render$i.json" $k)
        e=$(field "$TMP/get$i.json" $k)
        if [ "$r" = "$e" ]; then
            pass "$(basename "$f"): render and trainjobd agree on $k ($r)"
        else
            fail "$(basename "$f"): render and trainjobd agree on $k" "render '$r', engine '$e'"
        fi
    done
    expect_no_grep "$(basename "$f"): submit has no 'ignored' warning" "$TMP/submit$i.out" "ignored"
done
expect_grep "an idle pool without quota_type renders as SPOT" "$TMP/render$i.json" '"quota_type": "SPOT"'
expect_grep "...and preemptible" "$TMP/render$i.json" '"preemptible": true'
stop_engine
