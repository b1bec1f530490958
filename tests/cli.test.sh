# trainjob's file verbs, run as a user runs them: validate and render on the
# examples and on broken files, checking exit status and each message's
# FILE:LINE:COL.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
tj=$TRAINJOB_BIN

run "$tj" --help
expect_rc "--help exits 0" 0
expect_grep "--help lists validate" "$TMP/out" "validate FILE..."

run "$tj" --version
expect_rc "--version exits 0" 0
expect_grep "--version names the program" "$TMP/out" "trainjob "

run "$tj" </dev/null
expect_rc "no command without a terminal prints help" 0
expect_grep "no command prints usage" "$TMP/out" "usage: trainjob"

run "$tj" frobnicate
expect_rc "unknown command is a usage error" 2
expect_grep "unknown command is named" "$TMP/err" "unknown command 'frobnicate'"

run "$tj" validate
expect_rc "validate without files is a usage error" 2

for f in examples/*.yaml; do
    run "$tj" validate "$f"
    expect_rc "example $f is valid" 0
done

run "$tj" validate examples/*.yaml
expect_rc "all examples at once" 0

run "$tj" validate "$TMP/missing.yaml"
expect_rc "a missing file is an I/O error" 2
expect_grep "the missing file is named" "$TMP/err" "missing.yaml: No such file or directory"

# A bad exit-code list: exit 1 and the column of the bad code inside the value.
cat >"$TMP/bad-codes.yaml" <<'YAML'
workspace_name: default
display_name: demo
framework: PYTORCH_DDP
resource_pool: {name: local}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: echo hi
fault_tolerance:
  backoff_limit: 2
  rules:
    - exit_codes: "1,256"
      action: RESTART_JOB
YAML
run "$tj" validate "$TMP/bad-codes.yaml"
expect_rc "bad exit codes: exit 1" 1
# line 13: '    - exit_codes: "1,256"' — the value's quote is column 19, '256' column 22
expect_grep "bad exit codes: FILE:LINE:COL of the bad code" "$TMP/err" \
    "bad-codes.yaml:13:22: error: fault_tolerance.rules[0].exit_codes: 256 is out of range 1-255"

# The same in JSON points into the JSON text.
cat >"$TMP/bad-codes.json" <<'JSON'
{
  "workspace_name": "default",
  "display_name": "demo",
  "framework": "PYTORCH_DDP",
  "resource_pool": {"name": "local"},
  "roles": [{"total_replicas": 1, "resource_spec": [{"name": "cpu-1"}],
             "image_path": "local/host", "startup_script": "echo hi"}],
  "fault_tolerance": {"backoff_limit": 1,
                      "rules": [{"exit_codes": "5-3", "action": "RESTART_POD"}]}
}
JSON
run "$tj" validate "$TMP/bad-codes.json"
expect_rc "bad exit codes in JSON: exit 1" 1
expect_grep "JSON findings carry line:col" "$TMP/err" \
    "bad-codes.json:9:49: error: fault_tolerance.rules[0].exit_codes:"

# Unknown field: named at its key, with the nearest known field.
sed 's/^  backoff_limit: 2/  backof_limit: 2/' "$TMP/bad-codes.yaml" | sed 's/1,256/1/' >"$TMP/typo.yaml"
run "$tj" validate "$TMP/typo.yaml"
expect_rc "unknown field: exit 1" 1
expect_grep "unknown field suggests the nearest" "$TMP/err" \
    "typo.yaml:11:3: error: fault_tolerance.backof_limit: unknown field; did you mean backoff_limit?"

# Wrong type says what was expected.
sed 's/total_replicas: 1/total_replicas: two/' "$TMP/typo.yaml" | sed 's/backof_limit/backoff_limit/' >"$TMP/type.yaml"
run "$tj" validate "$TMP/type.yaml"
expect_rc "wrong type: exit 1" 1
expect_grep "wrong type says what it expected" "$TMP/err" \
    "type.yaml:6:21: error: roles[0].total_replicas: expected an integer, got a string"
expect_no_grep "no second finding on a field with a wrong type" "$TMP/err" "total_replicas: required"

# Broken YAML: file:line:col from the parser.
printf 'display_name: demo\nroles:\n  - name: Worker\n   image_path: x\n' >"$TMP/broken.yaml"
run "$tj" validate "$TMP/broken.yaml"
expect_rc "broken YAML: exit 1" 1
if grep -qE '^.*broken\.yaml:[0-9]+:[0-9]+: error: ' "$TMP/err"; then
    pass "broken YAML has line:col"
else
    fail "broken YAML has line:col" "$(cat "$TMP/err")"
fi

# Warnings alone keep exit 0, printed on stderr.
sed 's/1,256/201/' "$TMP/bad-codes.yaml" >"$TMP/warn.yaml"
printf '    - exit_codes: "200-202"\n      action: FAIL_JOB\n' >>"$TMP/warn.yaml"
run "$tj" validate "$TMP/warn.yaml"
expect_rc "warnings only: exit 0" 0
expect_grep "shadowing warning" "$TMP/err" "warning: fault_tolerance.rules[1].exit_codes: 201 is shadowed by rules[0]"
expect_grep "valid with warnings on stdout" "$TMP/out" "valid, 1 warning"

# Text from the file never reaches the terminal raw.
printf 'display_name: "evil\\e]0;pwned\\a\\e[2Jname"\n' >"$TMP/esc.yaml"
run "$tj" validate "$TMP/esc.yaml"
expect_rc "escape in a value: invalid" 1
if grep -q "$(printf '\033')" "$TMP/err"; then fail "escape sequences are stripped" "ESC in output"; else pass "escape sequences are stripped"; fi

# render: defaults filled, both formats, Chinese preserved.
# (offline: no backend answers on this socket, and render never starts one)
run "$tj" --endpoint "http+unix://$TMP/none.sock" render examples/pytorch-ddp.yaml
expect_rc "render yaml" 0
expect_grep "render keeps the Chinese display name" "$TMP/out" "display_name: ResNet50-DDP-基线"
expect_grep "render fills priority" "$TMP/out" "priority: NORMAL"
# Which quota type a pool implies is the catalog's to say (tests/defaults.test.sh renders with one).
expect_no_grep "offline, render does not guess the quota type" "$TMP/out" "quota_type"
expect_grep "...and says so" "$TMP/err" "quota_type (and so preemptible) is left for the backend"
cp "$TMP/out" "$TMP/rendered.yaml"
run "$tj" validate "$TMP/rendered.yaml"
expect_rc "rendered YAML validates" 0

sed '/^name: /d' examples/tensorflow-ps.yaml >"$TMP/noname.yaml"
run "$tj" render -o json "$TMP/noname.yaml"
expect_rc "render json" 0
if grep -qE '"name": "tf-[a-z0-9]{8}"' "$TMP/out"; then pass "render generates a name"; else
    fail "render generates a name" "$(head -c 400 "$TMP/out")"; fi
expect_grep "render fills the default fault-tolerance policy" "$TMP/out" '"backoff_limit": 2'
cp "$TMP/out" "$TMP/rendered.json"
run "$tj" validate "$TMP/rendered.json"
expect_rc "rendered JSON validates" 0

run "$tj" render examples/mpi-ssh.yaml -o yaml
expect_rc "render mpi" 0
expect_grep "render sets the default ssh path" "$TMP/out" "config_mount_path: /sensecore/compute/acp/ssh/ssh_config"

sed '/^fault_tolerance:/,$d' examples/mpi-ssh.yaml >"$TMP/noft.yaml"
run "$tj" render "$TMP/noft.yaml"
expect_grep "render adds the platform's default rule" "$TMP/out" "exit_codes: 1-255"

run "$tj" render -o xml examples/mpi-ssh.yaml
expect_rc "render -o xml is a usage error" 2

run "$tj" render "$TMP/bad-codes.yaml"
expect_rc "render of an invalid file fails" 1
if [ -s "$TMP/out" ]; then fail "render of an invalid file prints no job"; else pass "render of an invalid file prints no job"; fi

# The full-screen commands refuse to start curses on a pipe, and say what to use.
run "$tj" top </dev/null
expect_rc "top without a terminal is a usage error" 2
expect_grep "...pointing at get jobs" "$TMP/err" "trainjob get jobs"
run "$tj" top --refresh 0
expect_rc "top --refresh 0 is refused" 2
expect_grep "...naming the option" "$TMP/err" "--refresh"
run "$tj" new </dev/null
expect_rc "new without a terminal is a usage error" 2
