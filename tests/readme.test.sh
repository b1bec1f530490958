# README.md, run: every command of its code blocks against a trainjobd
# started here (--demo: simulated GPU nodes; private socket, stopped by pid),
# each exit status and each output line it shows checked; its three screens
# captured again from the built program in tmux (tests/readme_screens.sh) and
# their key lines compared; and the extraction itself checked on a scratch
# README, so a command this test could not see is no silent pass.
# The conventions are doc/building.md's "The README, tested".
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

SESSION="tj-readme-$$"
. tests/tui.sh
README_SCREENS_SOURCED=1
. tests/readme_screens.sh
trap cleanup EXIT
ENGINE_ARGS=--demo
start_engine || { fail "the engine starts" "$(tail -c 800 "$TMP/engine.log")"; exit 1; }

# steps README: one step a line, TAB-separated — C<TAB>command (with the
# block's line number), O<TAB>output line of the command before, S<TAB>name
# (a screen begins), L<TAB>a line of it, E (it ends).
steps() {
    awk '
        function field(s) { gsub(/\t/, " ", s); return s }
        /^<!-- screen: [A-Za-z0-9_-]+ -->$/ { screen = $3; next }
        /^```/ {
            if (inblock) {
                if (kind == "screen") print "E"
                inblock = 0; kind = ""; next
            }
            inblock = 1; lang = substr($0, 4)
            if (screen != "" && lang == "text") { kind = "screen"; print "S\t" screen }
            else if (lang == "sh") kind = "sh"
            else if (lang == "console") kind = "console"
            else kind = ""
            screen = ""
            next
        }
        !inblock { next }
        kind == "screen" { print "L\t" field($0); next }
        kind == "sh" {
            if ($0 ~ /^[[:space:]]*(#|$)/) next
            print "C\t" NR "\t" field($0); next
        }
        kind == "console" {
            if (substr($0, 1, 2) == "$ ") print "C\t" NR "\t" field(substr($0, 3))
            else if ($0 != "") print "O\t" field($0)
            next
        }' "$1"
}

# norm: runs of digits and of blanks count as one; no blanks at either end.
norm() { sed -E 's/[0-9]+/0/g; s/[[:space:]]+/ /g; s/^ //; s/ $//'; }

# has_line FILE LINE: FILE has LINE, both normalized
has_line() {
    printf '%s\n' "$2" | norm >"$TMP/want"
    norm <"$1" | grep -qxFf "$TMP/want"
}

# The extraction, on a scratch README: each kind of line lands as it should.
cat >"$TMP/sample.md" <<'EOF'
Text with `make x` inline is prose.

```sh
make run   # not run: a reason
# a comment line
echo one
```

```console
$ echo two   # exits 0
two
$ false   # exits 1
```

```yaml
key: value
```

<!-- screen: demo -->
```text
 title
body
```
EOF
steps "$TMP/sample.md" >"$TMP/sample.steps"
printf 'C\t4\tmake run   # not run: a reason\nC\t6\techo one\nC\t10\techo two   # exits 0\nO\ttwo\nC\t12\tfalse   # exits 1\nS\tdemo\nL\t title\nL\tbody\nE\n' >"$TMP/sample.want"
if cmp -s "$TMP/sample.steps" "$TMP/sample.want"; then
    pass "the README's blocks are read as commands, output and screens (scratch README)"
else
    fail "the README's blocks are read as commands, output and screens (scratch README)" \
        "$(diff "$TMP/sample.want" "$TMP/sample.steps")"
fi

# ---- the commands ------------------------------------------------------------
WORK="$TMP/work"
mkdir -p "$WORK/bin"
ln -s "$TRAINJOB_TOP/examples" "$WORK/examples"
ln -s "$TRAINJOB_BIN" "$WORK/bin/trainjob"
steps README.md >"$TMP/steps"
ran=0 skipped=0
last="" # the command whose output lines follow
while IFS="$(printf '\t')" read -r kind a b; do
    case $kind in
    C)
        line=$a cmd=$b
        last="README:$line \`${cmd%%  *}\`"
        case $cmd in
        *"# not run:"*)
            skipped=$((skipped + 1))
            echo "note: README:$line not run:${cmd#*# not run:}"
            last=""
            continue
            ;;
        esac
        want=0
        case $cmd in *"# exits "[0-9]*) want=$(printf '%s\n' "$cmd" | sed 's/.*# exits \([0-9]*\).*/\1/') ;; esac
        (cd "$WORK" && PATH="$WORK/bin:$PATH" TRAINJOB_ENDPOINT="$EP" sh -c "$cmd") \
            >"$TMP/cmd.out" 2>&1 </dev/null
        got=$?
        ran=$((ran + 1))
        if [ "$got" = "$want" ]; then pass "$last exits $want"; else
            fail "$last exits $want" "exit $got: $(head -c 600 "$TMP/cmd.out")"
        fi
        # A reader waits for a submitted job to run before asking for its workers
        # and logs, for a stopped one to stop, for a deleted one to go.
        job=$(printf '%s\n' "$cmd" | sed -n 's/^trainjob [a-z]* \([a-z0-9-]*\).*/\1/p')
        case $got:$cmd in
        0:"trainjob submit -f "*)
            job=$(sed -n 's/^job \([^ ]*\) created.*/\1/p' "$TMP/cmd.out")
            [ -n "$job" ] && { wait_state "$job" RUNNING 20 || fail "$last: $job runs" "$(cat "$TMP/out")"; }
            sleep 2 # a log line or two
            ;;
        0:"trainjob stop "*)
            wait_state "$job" "SUSPENDED|SUCCEEDED|FAILED" 20 || fail "$last: $job stops" "$(cat "$TMP/out")"
            ;;
        0:"trainjob delete "*)
            n=0
            while tj get job "$job" >/dev/null 2>&1 && [ $n -lt 100 ]; do
                sleep 0.2
                n=$((n + 1))
            done
            ;;
        esac
        ;;
    O)
        if [ -z "$last" ]; then
            fail "README output line '$a' follows a command that was run"
        elif has_line "$TMP/cmd.out" "$a"; then
            pass "...$last prints '$a'"
        else
            fail "...$last prints '$a'" "$(head -c 800 "$TMP/cmd.out")"
        fi
        ;;
    esac
done <"$TMP/steps"
echo "note: $ran README commands run, $skipped not run"
if [ "$ran" -ge 10 ]; then pass "the README's commands were found and run ($ran)"; else
    fail "the README's commands were found and run" "only $ran"
fi

# ---- the screens -------------------------------------------------------------
# The README's screen blocks, one file each.
awk -F '\t' -v d="$TMP" '
    $1 == "S" { f = d "/readme-" $2 ".txt"; printf "" >f; next }
    $1 == "L" { print $2 >>f; next }
    $1 == "E" { close(f); f = "" }' "$TMP/steps"
SCREENS_DIR="$TMP/screens"
if readme_screens >"$TMP/screens.log" 2>&1; then
    pass "the screens are captured from the built program"
else
    fail "the screens are captured from the built program" "$(cat "$TMP/screens.log")"
fi
for s in wizard top job; do
    r="$TMP/readme-$s.txt"
    if [ ! -s "$r" ]; then
        fail "the README shows the $s screen"
        continue
    fi
    # key lines: the first two, column headings (a line with NAME) and the key bar (the last)
    { sed -n '1,2p' "$r"; grep -E '(^| )NAME ' "$r"; sed -n '$p' "$r"; } | awk '!seen[$0]++' >"$TMP/key-$s"
    while IFS= read -r k; do
        [ -n "$(printf '%s' "$k" | tr -d ' ')" ] || continue
        if has_line "$SCREENS_DIR/$s.txt" "$k"; then
            pass "the $s screen still shows '$(printf '%s' "$k" | norm | cut -c1-50)'"
        else
            fail "the $s screen still shows '$(printf '%s' "$k" | norm | cut -c1-50)'" \
                "$(cat "$SCREENS_DIR/$s.txt" 2>/dev/null)"
        fi
    done <"$TMP/key-$s"
    # the capture is 80×24, as the README says
    if [ "$(wc -l <"$r")" -le 24 ] && [ "$(awk '{ print length }' "$r" | sort -n | tail -1)" -le 80 ]; then
        pass "the README's $s screen fits 80×24"
    else
        fail "the README's $s screen fits 80×24" "$(wc -l <"$r") lines"
    fi
done

# ---- what moved out of the README --------------------------------------------
# Each document the README sends a reader to is in the tree.
for d in $(grep -oE 'doc/[a-z0-9_.-]+\.(md|scd)' README.md | sort -u); do
    if [ -f "$d" ]; then pass "README's $d exists"; else fail "README's $d exists"; fi
done

# ---- the parity table ----------------------------------------------------------
# tests/conformance.test.sh compares the README's table with the one its run
# produced (scripts/readme-parity.sh --check); here, that the comparison sees
# a changed cell, and that writing a table replaces exactly the old one.
scripts/readme-parity.sh >"$TMP/parity.md"
if [ "$(wc -l <"$TMP/parity.md")" -ge 10 ] && head -1 "$TMP/parity.md" | grep -q '^| scenario | trainjobd | slurm | acp |$'; then
    pass "the README has the parity table, a column per backend"
else
    fail "the README has the parity table, a column per backend" "$(cat "$TMP/parity.md")"
fi
run scripts/readme-parity.sh --check "$TMP/parity.md"
expect_rc "...which equals itself" 0
sed '3s/| pass |/| unsupported |/' "$TMP/parity.md" >"$TMP/parity2.md"
run scripts/readme-parity.sh --check "$TMP/parity2.md"
expect_rc "...and not a table with one cell changed" 1
expect_grep "...whose diff shows the cell" "$TMP/out" "unsupported |"
cp README.md "$TMP/README.copy"
run scripts/readme-parity.sh "$TMP/parity2.md" "$TMP/README.copy"
if [ "$(diff README.md "$TMP/README.copy" | grep -c '^[<>]')" = 2 ]; then
    pass "writing a new table into a README changes that row only"
else
    fail "writing a new table into a README changes that row only" "$(diff README.md "$TMP/README.copy")"
fi
