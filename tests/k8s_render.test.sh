# Kubernetes manifests (issue 21): `trainjob render --target volcano` and
# `--target pytorchjob` for every example job and for unusual files (MPI, many
# fault rules with ranges, no rules, several volumes, env values a YAML 1.1
# reader misreads, names that need fixing). Each manifest is validated against
# its CRD's openAPIV3Schema (tests/fixtures/k8s, read with PyYAML and checked
# with python3-jsonschema, strict as kubectl apply is), then specific fields
# and the "what TARGET cannot express" lines are checked. The validator is
# first shown to refuse broken manifests. Offline: no backend answers on the
# endpoint, and render never starts one.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

FIX=tests/fixtures/k8s
VOLCANO_CRD=$FIX/batch.volcano.sh_jobs.yaml
PYTORCH_CRD=$FIX/kubeflow.org_pytorchjobs.yaml
export HOME="$TMP/home"
mkdir -p "$HOME"
tj() { "$TRAINJOB_BIN" --endpoint "http+unix://$TMP/none.sock" "$@"; }
validate() { /usr/bin/python3 "$FIX/validate.py" "$@"; }
# q FILE JQ-FILTER: the manifest read by a YAML 1.1 reader, queried with jq
q() { validate --json "$1" | jq -r "$2"; }

# ---- the validator refuses what it should --------------------------------
tj render examples/pytorch-ddp.yaml --target volcano >"$TMP/good.yaml" 2>/dev/null
if validate "$VOLCANO_CRD" "$TMP/good.yaml" >"$TMP/v.out"; then pass "validator takes a good manifest"; else
    fail "validator takes a good manifest" "$(head -c 600 "$TMP/v.out")"
fi
broken() { # NAME SED-EXPR WANT: the edited manifest is refused, naming WANT
    sed -e "$2" "$TMP/good.yaml" >"$TMP/broken.yaml"
    if validate "$VOLCANO_CRD" "$TMP/broken.yaml" >"$TMP/v.out"; then
        fail "validator refuses $1" "taken: $(head -c 300 "$TMP/v.out")"
    else
        expect_grep "validator refuses $1" "$TMP/v.out" "$3"
    fi
}
broken "a string where an integer goes" 's/replicas: 1/replicas: two/' "'two' is not of type 'integer'"
broken "an unknown field" 's/schedulerName:/schedulerNam:/' "'schedulerNam' was unexpected"
broken "an unquoted yes (a YAML 1.1 boolean)" 's/value: INFO/value: yes/' "True is not of type 'string'"
broken "a repeated exit code" 's/exitCode: 255/exitCode: 254/' "exitCode 254 twice"
broken "exit code 0" 's/exitCode: 255/exitCode: 0/' "exitCode 0 is not an error code"
broken "an unknown action" 's/action: RestartPod/action: Reboot/' "'Reboot' is not one Volcano takes"
broken "a name that is no DNS label" 's/^  name: resnet50-ddp/  name: Resnet_50/' "is not a DNS-1035 label"
sed -e 's/^apiVersion: .*/apiVersion: kubeflow.org\/v1/' "$TMP/good.yaml" >"$TMP/broken.yaml"
if validate "$PYTORCH_CRD" "$TMP/broken.yaml" >"$TMP/v.out"; then
    fail "validator refuses a Volcano Job as a PyTorchJob" "taken"
else pass "validator refuses a Volcano Job as a PyTorchJob"; fi

# ---- unusual files --------------------------------------------------------
mkdir -p "$TMP/jobs"
cat >"$TMP/jobs/mpi.yaml" <<'EOF'
workspace_name: default
display_name: mpi-many
name: mpi-many
framework: MPI
resource_pool:
  name: local
roles:
  - total_replicas: 3
    resource_spec:
      - name: gpu-4
    image_path: registry.example.com/mpi/openmpi:4.1
    startup_script: mpirun --hostfile /etc/volcano/worker.host -np 3 ./bench
fault_tolerance:
  backoff_limit: -1
EOF
cat >"$TMP/jobs/rules.yaml" <<'EOF'
workspace_name: default
display_name: many-rules
name: many-rules
framework: PYTORCH_DDP
resource_pool:
  name: local
roles:
  - total_replicas: 4
    resource_spec:
      - name: gpu-8
    image_path: registry.example.com/pt:25.06
    startup_script: torchrun train.py
fault_tolerance:
  backoff_limit: 7
  rules:
    - exit_codes: "1-100"
      action: FAIL_JOB
    - exit_codes: "137, 143"
      action: RESTART_POD
      mark_node_unschedulable: true
    - exit_codes: "200-205,137"
      action: RESTART_JOB
EOF
cat >"$TMP/jobs/norules.yaml" <<'EOF'
workspace_name: default
display_name: no-rules
name: no-rules
framework: PYTORCH
resource_pool:
  name: local
roles:
  - total_replicas: 1
    resource_spec:
      - name: cpu-2
    image_path: registry.example.com/pt:25.06
    startup_script: python train.py
EOF
# Values a YAML 1.1 reader takes for booleans, numbers, dates, null or syntax.
cat >"$TMP/jobs/volumes.yaml" <<'EOF'
workspace_name: default
display_name: volumes-and-env
name: volumes-and-env
framework: PYTORCH_DDP
resource_pool:
  name: GPU_Pool.A
roles:
  - total_replicas: 2
    resource_spec:
      - name: gpu-1
    image_path: registry.example.com/pt:25.06
    startup_script: |
      echo "a: b # not a comment"
      exit 0
mount:
  - type: PV_AFS
    id: Team_Data.v2
    subdir: /datasets/imagenet
    mount_path: /data
  - type: PV_AFS_MODEL
    id: models
    mount_path: /models
  - type: PV_ACS
    id: ckpt
    subdir: /
    mount_path: /ckpt
env:
  - {key: E_YES, value: "yes"}
  - {key: E_NO, value: "No"}
  - {key: E_ON, value: "ON"}
  - {key: E_OFF, value: "off"}
  - {key: E_Y, value: "y"}
  - {key: E_N, value: "n"}
  - {key: E_EQ, value: "="}
  - {key: E_MERGE, value: "<<"}
  - {key: E_OCT, value: "0777"}
  - {key: E_UNDER, value: "1_000"}
  - {key: E_SEXA, value: "1:30"}
  - {key: E_DATE, value: "2024-01-02"}
  - {key: E_NULL, value: "~"}
  - {key: E_EMPTY, value: ""}
  - {key: E_HEX, value: "0x1F"}
  - {key: E_HASH, value: "# not a comment"}
  - {key: E_DASH, value: "- item"}
  - {key: E_COLON, value: "a: b"}
  - {key: E_LINES, value: "two\nlines"}
  - {key: E_CN, value: "测试 'q' \"dq\""}
EOF
# The longest name trainjob takes (63): too long for its pods' host names.
long=pt-$(printf '%060d' 0 | tr 0 x)
cat >"$TMP/jobs/longname.yaml" <<EOF
workspace_name: default
display_name: long-name
name: $long
framework: PYTORCH_DDP
resource_pool:
  name: local
roles:
  - total_replicas: 12
    resource_spec:
      - name: N2lS.Ie.I60.2
    image_path: registry.example.com/pt:25.06
    startup_script: torchrun train.py
EOF

# ---- every file, both targets: rendered, valid --------------------------
for f in examples/*.yaml "$TMP"/jobs/*.yaml; do
    b=$(basename "$f" .yaml)
    for t in volcano pytorchjob; do
        crd=$VOLCANO_CRD
        [ $t = pytorchjob ] && crd=$PYTORCH_CRD
        out="$TMP/$b.$t.yaml"
        tj render "$f" --target $t >"$out" 2>"$TMP/$b.$t.err"
        rc=$?
        if [ $rc -ne 0 ]; then
            fail "render $b --target $t" "exit $rc: $(head -c 600 "$TMP/$b.$t.err")"
            continue
        fi
        if validate "$crd" "$out" >"$TMP/v.out"; then pass "$b as $t validates against the CRD"; else
            fail "$b as $t validates against the CRD" "$(head -c 800 "$TMP/v.out")"
        fi
        # The manifest ends with the comment lines, and nothing else follows them.
        if tail -n +2 "$out" | sed -n '/^# what .* cannot express:$/,$p' | grep -qv '^#'; then
            fail "$b as $t: the gaps are comments"
        else
            expect_grep "$b as $t ends with what the target cannot express" "$out" "cannot express:"
        fi
    done
done

# expect_q NAME FILE FILTER WANT: the field's value in the manifest
expect_q() {
    _got=$(q "$2" "$3")
    if [ "$_got" = "$4" ]; then pass "$1"; else fail "$1" "$3 is '$_got', want '$4'"; fi
}

# ---- examples: the fields ------------------------------------------------
V=$TMP/fault-tolerance.volcano.yaml
expect_q "fault rules: 254 restarts the pod" "$V" '.spec.policies[] | select(.exitCode==254) | .action' RestartPod
expect_q "fault rules: 1 ends the job" "$V" '.spec.policies[] | select(.exitCode==1) | .action' TerminateJob
expect_q "fault rules: 200-205 restart the job, as any other code" "$V" \
    '[.spec.policies[] | select(.exitCode==200)] | length' 0
expect_q "default policy last: any other failure restarts the job" "$V" \
    '.spec.policies[-1] | "\(.event) \(.action)"' "PodFailed RestartJob"
expect_q "maxRetry is backoff_limit" "$V" .spec.maxRetry 5
expect_q "queue is the pool" "$V" .spec.queue local
expect_q "schedulerName volcano" "$V" .spec.schedulerName volcano
expect_q "gang: minAvailable is every worker" "$V" .spec.minAvailable 2
expect_q "tasks master and worker" "$V" '[.spec.tasks[] | "\(.name)=\(.replicas)"] | join(",")' "master=1,worker=1"
expect_q "pods never restart in place (a failure must reach the policies)" "$V" \
    '[.spec.tasks[].template.spec.restartPolicy] | unique | join(",")' Never
expect_q "priority class from the priority" "$V" .spec.priorityClassName trainjob-normal
expect_q "pytorch plugin for a PyTorch DDP job" "$V" '.spec.plugins | keys | join(",")' "env,pytorch,svc"
expect_q "labels name trainjob" "$V" '.metadata.labels["app.kubernetes.io/managed-by"]' trainjob
expect_q "the display name is an annotation" "$V" '.metadata.annotations["trainjob/display-name"]' llama-sft.v3
expect_grep "volcano: marking a node is named" "$V" \
    "# fault_tolerance.rules[0].mark_node_unschedulable: Volcano cannot"
P=$TMP/fault-tolerance.pytorchjob.yaml
expect_q "pytorchjob: backoffLimit is backoff_limit" "$P" .spec.runPolicy.backoffLimit 5
expect_q "pytorchjob: queue is the pool" "$P" .spec.runPolicy.schedulingPolicy.queue local
expect_q "pytorchjob: container named pytorch" "$P" \
    '.spec.pytorchReplicaSpecs.Master.template.spec.containers[0].name' pytorch
expect_q "pytorchjob: Master 1, Worker the rest" "$P" \
    '"\(.spec.pytorchReplicaSpecs.Master.replicas) \(.spec.pytorchReplicaSpecs.Worker.replicas)"' "1 1"
expect_q "pytorchjob: restartPolicy the most codes want" "$P" \
    .spec.pytorchReplicaSpecs.Worker.restartPolicy OnFailure
expect_grep "pytorchjob: the per-exit-code FAIL_JOB rule is named" "$P" \
    "# fault_tolerance.rules[2]: exit code 1: FAIL_JOB, but under restartPolicy OnFailure"

V=$TMP/pytorch-ddp.volcano.yaml
expect_q "volume: claimName from the volume id" "$V" \
    '.spec.tasks[0].template.spec.volumes[0].persistentVolumeClaim.claimName' scratch
expect_q "volume: mounted at mount_path, subdir as subPath" "$V" \
    '.spec.tasks[0].template.spec.containers[0].volumeMounts[0] | "\(.mountPath) \(.subPath)"' "/mnt/afs resnet"
expect_q "command is the startup script" "$V" \
    '.spec.tasks[0].template.spec.containers[0].command[0:2] | join(" ")' "/bin/sh -c"
expect_q "env: an all-digit value stays a string" "$V" \
    '.spec.tasks[0].template.spec.containers[0].env[] | select(.name=="OMP_NUM_THREADS") | .value | type' string
for t in volcano pytorchjob; do
    expect_grep "$t: TensorBoard is named" "$TMP/pytorch-ddp.$t.yaml" "# tensorboard.log_path: no TensorBoard"
    expect_grep "$t: the AFS volume type is named" "$TMP/pytorch-ddp.$t.yaml" "# mount[0].type: PV_AFS is no Kubernetes volume type"
    expect_grep "$t: the host image is named" "$TMP/pytorch-ddp.$t.yaml" "# roles[0].image_path: 'local/host'"
    expect_grep "$t: zone named" "$TMP/idle-preemptible.$t.yaml" "# resource_pool.zone: ignored"
    expect_grep "$t: VPC named" "$TMP/idle-preemptible.$t.yaml" "# resource_pool.vpc_id: ignored"
    expect_grep "$t: scoring strategy named" "$TMP/idle-preemptible.$t.yaml" "# scheduling.scoring_strategy: LEAST_ALLOCATED"
done
expect_q "idle job: the pods are preemptable" "$TMP/idle-preemptible.volcano.yaml" \
    '.spec.tasks[0].template.metadata.annotations["volcano.sh/preemptable"]' true
expect_q "backoff_limit -1: maxRetry as large as Volcano takes" "$TMP/idle-preemptible.volcano.yaml" .spec.maxRetry 2147483647
expect_grep "backoff_limit -1 named" "$TMP/idle-preemptible.volcano.yaml" "# fault_tolerance.backoff_limit: -1 (forever)"
expect_q "pytorchjob: backoff_limit -1 leaves backoffLimit out (no limit)" "$TMP/idle-preemptible.pytorchjob.yaml" \
    '.spec.runPolicy | has("backoffLimit")' false
expect_grep "pytorchjob: preemptible named" "$TMP/idle-preemptible.pytorchjob.yaml" "# scheduling.preemptible:"
expect_q "tensorflow ps: tasks ps and worker" "$TMP/tensorflow-ps.volcano.yaml" \
    '[.spec.tasks[] | "\(.name)=\(.replicas)"] | join(",")' "ps=1,worker=2"
expect_q "tensorflow ps: the tensorflow plugin" "$TMP/tensorflow-ps.volcano.yaml" '.spec.plugins.tensorflow[0]' --ps=ps
expect_grep "pytorchjob: a TensorFlow job says the operator is PyTorch's" "$TMP/tensorflow-ps.pytorchjob.yaml" \
    "# framework: TENSORFLOW_PS is not PyTorch"

# ---- the unusual files ---------------------------------------------------
V=$TMP/mpi.volcano.yaml
expect_q "mpi: ssh and svc plugins" "$V" '.spec.plugins | keys | join(",")' "env,ssh,svc"
expect_q "mpi: one task of every worker" "$V" '[.spec.tasks[] | "\(.name)=\(.replicas)"] | join(",")' "worker=3"
expect_q "mpi: GPUs from the spec" "$V" \
    '.spec.tasks[0].template.spec.containers[0].resources.limits["nvidia.com/gpu"]' 4
expect_q "mpi: GPU request equals the limit" "$V" \
    '.spec.tasks[0].template.spec.containers[0].resources.requests["nvidia.com/gpu"]' 4
expect_grep "mpi: the hostfile named" "$V" "# framework: MPI: no TRAINJOB_HOSTFILE"
expect_grep "pytorchjob: ssh keys named" "$TMP/mpi.pytorchjob.yaml" "# ssh.auto_key_setup:"

V=$TMP/rules.volcano.yaml
# 1-100 FAIL_JOB, 137/143 RESTART_POD, 200-205 and every other code RESTART_JOB.
expect_q "rules: one exitCode policy per code that is not the common outcome" "$V" '.spec.policies | length' 103
expect_q "rules: a range's codes each" "$V" \
    '[.spec.policies[] | select(.action=="TerminateJob") | .exitCode] | "\(length) \(min) \(max)"' "100 1 100"
expect_q "rules: first match wins (137 is rule 2's, not rule 3's)" "$V" \
    '.spec.policies[] | select(.exitCode==137) | .action' RestartPod
expect_q "rules: maxRetry" "$V" .spec.maxRetry 7
expect_q "rules: gpu quantity" "$V" '.spec.tasks[1].template.spec.containers[0].resources.limits["nvidia.com/gpu"]' 8
expect_q "rules: 3 workers besides the master" "$V" '.spec.tasks[1].replicas' 3
P=$TMP/rules.pytorchjob.yaml
expect_q "rules: pytorchjob restartPolicy ExitCode (1-127 fail, 128-255 restart)" "$P" \
    .spec.pytorchReplicaSpecs.Master.restartPolicy ExitCode
expect_grep "rules: pytorchjob names the codes it fails that restart on trainjob" "$P" \
    "# fault_tolerance (no rule matches): exit codes 101-127: RESTART_JOB, but under restartPolicy ExitCode the pod is not restarted"
expect_grep "rules: pytorchjob names RESTART_JOB restarting one pod" "$P" \
    "# fault_tolerance.rules[2]: exit codes 200-205: RESTART_JOB restarts only the failed worker's pod"

V=$TMP/norules.volcano.yaml
expect_q "no rules: one policy, the job ends (backoff_limit 0)" "$V" \
    '[.spec.policies[] | "\(.event) \(.action)"] | join(",")' "PodFailed TerminateJob"
expect_q "no rules: no maxRetry (0 would read as 3)" "$V" '.spec | has("maxRetry")' false
expect_grep "no rules: backoff_limit 0 named" "$V" "# fault_tolerance.backoff_limit: 0 cannot be written"
expect_q "no rules: cpu from the spec name" "$V" '.spec.tasks[0].template.spec.containers[0].resources.limits.cpu' 2
expect_q "no rules: cpu quantity is a string" "$V" '.spec.tasks[0].template.spec.containers[0].resources.limits.cpu | type' string
expect_q "no rules: pytorchjob never restarts" "$TMP/norules.pytorchjob.yaml" \
    '"\(.spec.pytorchReplicaSpecs.Master.restartPolicy) \(.spec.runPolicy.backoffLimit)"' "Never 0"
expect_q "no rules: one worker is the master alone" "$TMP/norules.pytorchjob.yaml" \
    '.spec.pytorchReplicaSpecs | keys | join(",")' Master

for t in volcano pytorchjob; do
    M=$TMP/volumes.$t.yaml
    pod='.spec.tasks[0].template.spec'
    [ $t = pytorchjob ] && pod='.spec.pytorchReplicaSpecs.Master.template.spec'
    expect_q "$t: one claim per volume, named from its id" "$M" "[$pod.volumes[].persistentVolumeClaim.claimName] | join(\",\")" \
        "team-data.v2,models,ckpt"
    expect_q "$t: each mount at its path, subdir as subPath" "$M" \
        "[$pod.containers[0].volumeMounts[] | \"\(.name)=\(.mountPath):\(.subPath // \"\")\"] | join(\",\")" \
        "mount-0=/data:datasets/imagenet,mount-1=/models:,mount-2=/ckpt:"
    expect_grep "$t: the changed claim name is said" "$M" "# mount[0].id: 'Team_Data.v2' is the claim 'team-data.v2'"
    queue='.spec.queue'
    [ $t = pytorchjob ] && queue='.spec.runPolicy.schedulingPolicy.queue'
    expect_q "$t: the pool's name made a queue name" "$M" "$queue" gpu-pool-a
    expect_grep "$t: the changed queue name is said" "$M" "# resource_pool.name: the pool 'GPU_Pool.A' is the queue 'gpu-pool-a'"
    expect_grep "$t: the model volume type is named" "$M" "# mount[1].type: PV_AFS_MODEL"
    expect_grep "$t: the ACS volume type is named" "$M" "# mount[2].type: PV_ACS"
    # Every env value reads back, as a YAML 1.1 reader reads it, as the string the file gave.
    validate --json "$TMP/jobs/volumes.yaml" | jq -c '[.env[] | [.key, .value]]' >"$TMP/env.want"
    q "$M" "[$pod.containers[0].env[] | select(.name != \"ECP_JOB_NAME\") | [.name, .value]]" | jq -c . >"$TMP/env.got"
    if cmp -s "$TMP/env.want" "$TMP/env.got"; then pass "$t: every odd env value is the same string"; else
        fail "$t: every odd env value is the same string" "want $(cat "$TMP/env.want") got $(cat "$TMP/env.got")"
    fi
done

want=$(printf '%s' "$long" | cut -c1-53)
for t in volcano pytorchjob; do
    M=$TMP/longname.$t.yaml
    expect_q "$t: a 63-character name is cut for NAME-worker-10" "$M" .metadata.name "$want"
    expect_q "$t: the name as written is an annotation" "$M" '.metadata.annotations["trainjob/name"]' "$long"
    expect_grep "$t: the cut name is said" "$M" "# name: '$long' is written '$want'"
    expect_grep "$t: an unknown spec is said" "$M" "# roles[0].resource_spec[0].name: 'N2lS.Ie.I60.2' is not in the catalog"
    expect_q "$t: an unknown spec requests nothing" "$M" \
        '[.. | objects | select(has("resources"))] | length' 0
done

# ---- the command line ----------------------------------------------------
run tj render examples/pytorch-ddp.yaml --target kubernetes
expect_rc "an unknown target is a usage error" 2
expect_grep "the error lists the targets" "$TMP/err" "--target takes slurm, volcano or pytorchjob, not 'kubernetes'"
run tj render --help
expect_grep "render --help names volcano" "$TMP/out" "--target volcano"
expect_grep "render --help names pytorchjob" "$TMP/out" "pytorchjob"
run tj __complete render --target ""
expect_grep "completion offers volcano after --target" "$TMP/out" "volcano"
expect_grep "completion offers pytorchjob after --target" "$TMP/out" "pytorchjob"
expect_no_grep "completion offers no files after --target" "$TMP/out" ":files"

# Another user renders a file of theirs the same way (nothing of root's is needed).
if tj_users 2>/dev/null; then
    shared_tmp "$TMP/share"
    cp examples/fault-tolerance.yaml "$TMP/share/ft.yaml"
    chmod 0644 "$TMP/share/ft.yaml"
    as_user "$TJ_ALICE" "$TRAINJOB_BIN" --endpoint "http+unix://$TMP/share/none.sock" \
        render "$TMP/share/ft.yaml" --target volcano >"$TMP/alice.yaml" 2>"$TMP/alice.err"
    if validate "$VOLCANO_CRD" "$TMP/alice.yaml" >"$TMP/v.out"; then pass "tj-alice renders a valid manifest"; else
        fail "tj-alice renders a valid manifest" "$(head -c 300 "$TMP/v.out") $(head -c 300 "$TMP/alice.err")"
    fi
else
    fail "tj-alice renders a valid manifest" "tj_users could not make the users"
fi

# ---- with a backend's catalog: the spec's CPUs, memory and GPUs ------------
# A spec whose name says nothing ("big"): only the catalog knows what it holds.
: "${TRAINJOBD_BIN:=$TRAINJOB_TOP/build/trainjobd}"
. tests/engine.sh
engine_config nodes="sim 1 64" pools=std specs="big:8:48:98304 cpu-1:0:1:1536" </dev/null
if start_engine; then
    sed -e 's/name: local$/name: std/' -e 's/- name: gpu-8/- name: big/' \
        "$TMP/jobs/rules.yaml" >"$TMP/big.yaml"
    for t in volcano pytorchjob; do
        "$TRAINJOB_BIN" --endpoint "http+unix://$SOCK" render "$TMP/big.yaml" --target $t \
            >"$TMP/big.$t.yaml" 2>"$TMP/big.err"
        crd=$VOLCANO_CRD
        [ $t = pytorchjob ] && crd=$PYTORCH_CRD
        if validate "$crd" "$TMP/big.$t.yaml" >"$TMP/v.out"; then pass "catalog: $t validates"; else
            fail "catalog: $t validates" "$(head -c 600 "$TMP/v.out") $(head -c 300 "$TMP/big.err")"
        fi
        c='.spec.tasks[0].template.spec.containers[0].resources'
        [ $t = pytorchjob ] && c='.spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources'
        expect_q "catalog: $t limits from the spec" "$TMP/big.$t.yaml" \
            "$c.limits | \"\(.cpu) \(.memory) \(.[\"nvidia.com/gpu\"])\"" "48 96Gi 8"
        expect_q "catalog: $t requests equal the limits" "$TMP/big.$t.yaml" "$c.requests == $c.limits" true
        expect_no_grep "catalog: $t says nothing of an unknown spec" "$TMP/big.$t.yaml" "is not in the catalog"
    done
else
    fail "catalog: the engine answers" "$(tail -c 600 "$TMP/engine.log")"
fi
