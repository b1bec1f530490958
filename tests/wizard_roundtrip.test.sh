# Nothing a file says is lost in the wizard (issue 25): every example and a
# set of unusual job files (a zoned pool the catalog does not list, a
# misspelled field, unknown fields, max restarts out of range, MPI with SSH,
# fields of another backend) opened with -f and saved with F2 render as the
# same job as before (a generated name aside). Loading a file shows the
# findings `trainjob validate` gives, in the same words. Driven in tmux
# against a real trainjobd, stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

SESSION="tj-wizard-roundtrip-$$"
. tests/tui.sh
start_engine

# render FILE OUT: the job FILE says, as this backend would take it, its
# generated name left out; then what `render` finds in it, without the file
# positions (saving moves lines), in order.
render() {
    tj render "$1" -o yaml 2>"$2.err" | sed -e '/^name: [a-z]*-[a-z0-9]\{8\}$/d' >"$2"
    sed -e 's/^[^ ]*:[0-9]*:[0-9]*: //' "$2.err" | sort >>"$2"
}

# on_review B FILE: every finding `trainjob validate --catalog` gives FILE
# (against the catalog the wizard has) is on the wizard's Review (open on
# it, 220 columns: no finding wraps), in its words.
on_review() {
    tj validate --catalog "$2" >"$TMP/$1.findings" 2>&1
    missing=""
    while IFS= read -r line; do
        words=$(printf '%s\n' "$line" | sed -n 's/^[^ ]*:[0-9]*:[0-9]*: [a-z]*: [^ ]*: //p')
        [ -n "$words" ] && ! grep -qF -- "$words" "$TMP/screen" && missing="$missing [$words]"
    done <"$TMP/$1.findings"
    if [ -z "$missing" ]; then
        pass "$1: Review shows every finding validate gives ($(grep -cE ': (error|warning): ' "$TMP/$1.findings"))"
    else
        fail "$1: Review shows every finding validate gives" "missing:$missing — $(cat "$TMP/screen")"
    fi
}

for f in examples/*.yaml tests/fixtures/roundtrip/*.yaml; do
    b=$(basename "$f" .yaml)
    start_wizard "$f" 220 60
    keys PgDn PgDn PgDn PgDn PgDn PgDn PgDn
    wait_screen "The job as it will be sent"
    on_review "$b" "$f"
    keys F2
    wait_screen "as a YAML job file"
    keys C-u "$TMP/$b.yaml" Enter
    if ! wait_screen "saved to $TMP/$b.yaml"; then
        fail "$b: F2 saves the form" "$(cat "$TMP/screen")"
        continue
    fi
    render "$f" "$TMP/$b.before"
    render "$TMP/$b.yaml" "$TMP/$b.after"
    if diff -u "$TMP/$b.before" "$TMP/$b.after" >"$TMP/$b.diff"; then
        pass "$b: -f then F2 gives the same job back"
    else
        fail "$b: -f then F2 gives the same job back" "$(cat "$TMP/$b.diff")"
    fi
done

# A misspelt field is an error under the field it meant, in validate's words.
start_wizard tests/fixtures/roundtrip/backoff-typo.yaml 160 40
see "a misspelt field counts as an error in its section" "Fault tolerance 1"
keys PgDn PgDn PgDn PgDn PgDn PgDn PgDn
see "...an error, as validate says, not a warning" "1 error, 0 warnings"
keys PgUp PgUp PgUp PgUp
see "...shown under the field it meant" "line 14: unknown field; did you mean backoff_limit? (the file says backof_limit)"
keys C-u 3
gone "typing in the field takes the message away" "did you mean backoff_limit"
keys F2 C-u "$TMP/typo-fixed.yaml" Enter
see "the corrected form saves" "saved to $TMP/typo-fixed.yaml"
run "$TRAINJOB_BIN" validate "$TMP/typo-fixed.yaml"
expect_rc "...a job validate accepts" 0
expect_no_grep "...without the misspelt field" "$TMP/typo-fixed.yaml" "backof_limit"
expect_grep "...with the value typed" "$TMP/typo-fixed.yaml" "backoff_limit: 3"

# What no shown field edits is listed on Review as kept from the file.
start_wizard tests/fixtures/roundtrip/zoned-unlisted.yaml 160 40
see "a zoned pool the catalog does not list shows its zone" "cn-sh-01e"
see "...and its VPC" "vpc-7f3a2c"
start_wizard tests/fixtures/roundtrip/acp-fields.yaml 220 60
keys PgDn PgDn PgDn PgDn PgDn PgDn PgDn
see_row "Review lists what no field edits as kept from the file" "Kept from the file" \
    "scheduling.scoring_strategy.type, barrier.enable_ethernet_ping, async_checkpoint.max_ckpt_rounds, lme.enable_warmingup, lme.max_retries"
start_wizard tests/fixtures/roundtrip/unknown-fields.yaml 220 60
keys PgDn PgDn PgDn PgDn PgDn PgDn PgDn
see_row "...and a file's unknown fields, each by its path" "Kept from the file" \
    "resource_pool.placement_hint, roles[0].sidecar_mode, labels_from_elsewhere.team"
start_wizard examples/pytorch-ddp.yaml 220 60
keys PgDn PgDn PgDn PgDn PgDn PgDn PgDn
see "a job whose every field the form shows opens on Review" "The job as it will be sent"
gone "...with nothing listed as kept from the file" "Kept from the file"
