# trainjob against a real Slurm cluster: tests/slurm/cluster.sh starts a
# throw-away Slurm 22.05 (munge, slurmctld, 3 slurmd with fake GPUs,
# slurmrestd with JWT) in this test's temp dir, on ports derived from $$, and
# stops it by pid at the end. A context with `driver: slurm` then drives it
# through the CLI and `trainjob top` exactly as a person would: a 2-replica
# job runs on 2 nodes and succeeds, its workers' logs and events show, stop
# gives SUSPENDED and start runs it again, a wrong token is "authentication
# failed", and top lists the Slurm job and says which backend it is on. A
# job mounting one of the context's volumes reads its file, where the nodes
# see it and, through a container launcher (bubblewrap here), bound at /mnt.
# If the cluster cannot start, the suite fails and says why.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

. tests/slurm/suite.sh
slurm_tui_start "tj-slurm-$$"

echo "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.wrong" >"$TMP/badtoken"
export TRAINJOB_CONFIG="$TMP/config.yaml"
{
    printf 'current_context: lab\ncontexts:\n'
    slurm_context lab
    cat <<EOF
    token_file: $TMP/token
    workspace: default
    volumes: {datasets: $TMP/vol/ds, gone: $TMP/vol/gone}
EOF
    slurm_context lab-box
    cat <<EOF
    token_file: $TMP/token
    volumes: {datasets: $TMP/vol/ds}
    launcher: "$TMP/box --bind {mounts} {image}"
EOF
    slurm_context lab-tcp "$SLURMRESTD_URL"
    echo "    token_file: $TMP/badtoken"
} >"$TRAINJOB_CONFIG"
cat >"$TMP/ddp.yaml" <<'EOF'
workspace_name: default
name: ddp
display_name: ddp
framework: PYTORCH_DDP
resource_pool:
  name: standard
roles:
  - total_replicas: 2
    resource_spec:
      - name: gpu-2
    image_path: local/host
    startup_script: |
      echo "rank $RANK of $WORLD_SIZE master $MASTER_ADDR gpus $CUDA_VISIBLE_DEVICES"
      sleep 4
      echo "rank $RANK done"
EOF

run tj get catalog
expect_rc "the catalog comes from the cluster" 0
expect_grep "...its partitions are the pools" "$TMP/out" "standard"
expect_grep "...an idle partition is idle" "$TMP/out" "idle"
expect_grep "...specs come from the nodes' GPUs" "$TMP/out" "gpu-8"

run tj render --target slurm "$TMP/ddp.yaml"
expect_rc "render --target slurm works" 0
expect_grep "...printing the REST request" "$TMP/out" "POST /slurm/v0.0.38/job/submit"
expect_grep "...with the spec's CPUs from the cluster" "$TMP/out" "\"cpus_per_task\": 2"
expect_grep "...and the batch script" "$TMP/out" "# the batch script"

run tj submit -f "$TMP/ddp.yaml"
expect_rc "a 2-replica job is submitted" 0
expect_grep "...as QUEUEING" "$TMP/out" "QUEUEING"
expect_state "get jobs shows it RUNNING" ddp RUNNING 30
run tj get jobs --state RUNNING --mine
expect_grep "get jobs --state RUNNING --mine lists it" "$TMP/out" "ddp"
run tj get workers ddp
expect_grep "...on two nodes" "$TMP/out" "n2"
expect_state "...then SUCCEEDED" ddp SUCCEEDED 60
run tj logs ddp -w master-0
expect_grep "logs show the first worker's lines" "$TMP/out" "rank 0 of 2"
run tj logs ddp -w worker-0
expect_grep "...and the second's" "$TMP/out" "rank 1 of 2"
run tj describe job ddp
expect_rc "describe works on a Slurm job" 0
expect_grep "...and shows its events" "$TMP/out" "submitted as Slurm job"

# Volumes are the context's: a worker in the node's own environment reads one
# where the nodes see it; through a container launcher it is bound at its
# mount path. The test's "container" is bubblewrap binding each SRC:DST of
# {mounts} over the node's own root (the image is not used).
mkdir -p "$TMP/vol/ds/imagenet"
echo "from-the-volume-$$" >"$TMP/vol/ds/imagenet/hello.txt"
chmod -R a+rX "$TMP/vol"
cat >"$TMP/box" <<'EOF2'
#!/bin/sh
# box --bind SRC:DST[,SRC:DST...] IMAGE CMD...: CMD with each SRC bound at DST
[ "$1" = --bind ] || { echo "box: --bind expected" >&2; exit 2; }
binds=$2
shift 3
set -- -- "$@"
IFS=,
for b in $binds; do set -- --bind "${b%%:*}" "${b#*:}" "$@"; done
exec bwrap --dev-bind / / "$@"
EOF2
chmod 755 "$TMP/box"
cat >"$TMP/vol.yaml" <<EOF2
workspace_name: default
name: vol
display_name: vol
framework: PYTORCH
resource_pool:
  name: standard
roles:
  - total_replicas: 1
    resource_spec:
      - name: gpu-1
    image_path: local/host
    startup_script: cat $TMP/vol/ds/imagenet/hello.txt
mount:
  - type: PV_AFS
    id: datasets
    subdir: /imagenet
    mount_path: $TMP/vol/ds/imagenet
EOF2
run tj get catalog
if grep -q "^datasets .* $TMP/vol/ds\$" "$TMP/out"; then pass "get catalog lists the context's volumes, with their paths"; else
    fail "get catalog lists the context's volumes, with their paths" "$(cat "$TMP/out")"
fi
run tj submit -f "$TMP/vol.yaml"
expect_rc "a job mounting a volume where the nodes see it is submitted" 0
expect_state "...and succeeds" vol SUCCEEDED 60
run tj logs vol -w master-0
expect_grep "...having read the volume's file" "$TMP/out" "from-the-volume-$$"
# a volume whose directory is not on the node: the worker never starts, and says why
sed -e 's/^name: vol/name: novol/' -e 's/^display_name: vol/display_name: novol/' -e 's/id: datasets/id: gone/' \
    -e '/subdir:/d' -e "s|mount_path: .*|mount_path: $TMP/vol/gone|" "$TMP/vol.yaml" >"$TMP/novol.yaml"
run tj submit -f "$TMP/novol.yaml"
expect_rc "a job mounting a volume missing on the nodes is submitted" 0
expect_state "...and FAILED" novol FAILED 60
run tj get events novol -o json
expect_grep "...saying the worker could not start, naming the directory" "$TMP/out" \
    "could not start master-0: $TMP/vol/gone: not a directory (a volume of the job) on n"
sed -e 's/^name: vol/name: vol2/' -e 's/^display_name: vol/display_name: vol2/' -e "s|mount_path: .*|mount_path: /mnt|" "$TMP/vol.yaml" >"$TMP/vol2.yaml"
run tj submit -f "$TMP/vol2.yaml"
expect_rc "a job mounting it elsewhere, with no container, is refused" 1
if grep -q "mount\[0\]\.mount_path: .* is at $TMP/vol/ds/imagenet" "$TMP/err"; then pass "...naming the field and where the volume is"; else
    fail "...naming the field and where the volume is" "$(cat "$TMP/err")"
fi
if [ -e "$TJ_SLURM_JOBS_DIR/default/vol2" ]; then fail "...leaving no job directory"; else pass "...leaving no job directory"; fi
sed -e 's|image_path: local/host|image_path: example/box:1|' -e 's|startup_script: .*|startup_script: cat /mnt/hello.txt|' \
    "$TMP/vol2.yaml" >"$TMP/box.yaml"
if setpriv --reuid="$SLURMRESTD_USER" --regid="$SLURMRESTD_USER" --clear-groups \
    bwrap --dev-bind / / --bind "$TMP/vol/ds" /mnt -- true 2>"$TMP/bwrap.err"; then
    pass "bubblewrap runs as the job's user (the test's container launcher)"
else
    fail "bubblewrap runs as the job's user (the test's container launcher)" "$(cat "$TMP/bwrap.err")"
fi
run tj --context lab-box submit -f "$TMP/box.yaml"
expect_rc "through a container launcher, a job mounting it at /mnt is submitted" 0
# the same cluster, jobs directory and workspace: the lab context lists it too
expect_state "...and succeeds" vol2 SUCCEEDED 60
run tj --context lab-box logs vol2 -w master-0
expect_grep "...having read the file bound at /mnt" "$TMP/out" "from-the-volume-$$"

# The wizard offers the context's volumes and holds a node's-own-environment
# job to the volume's path as it is typed.
TUI_ENV="TRAINJOB_CONFIG='$TRAINJOB_CONFIG' LANG=C.UTF-8"
HOME="$TMP/home" # no draft of the user's offered first, none left behind
mkdir -p "$HOME"
start_tui 150 30 "new"
if wait_screen "Basics" 10; then
    for _p in 1 2 3 4; do keys NPage; done
    keys IC
    see_row "the wizard offers the context's volume with its path" "datasets" "$TMP/vol/ds"
    keys Down Down
    keys /mnt
    see "...and says where a host job must mount it" "where volume 'datasets' is at"
    keys BSpace BSpace BSpace BSpace "$TMP/vol/ds"
    gone "...until the mount path is that directory" "where volume 'datasets' is at"
else
    fail "the wizard starts on Slurm" "$(cat "$TMP/screen")"
fi
tui_cleanup

# logs -f follows a running worker until its job ends
sed -e 's/^name: ddp/name: fl/' -e 's/^display_name: ddp/display_name: fl/' -e 's/total_replicas: 2/total_replicas: 1/' \
    "$TMP/ddp.yaml" >"$TMP/fl.yaml"
run tj submit -f "$TMP/fl.yaml"
expect_rc "a 1-replica job is submitted" 0
start=$(date +%s)
run timeout 90 "$TRAINJOB_BIN" logs fl -w master-0 -f
expect_rc "logs -f follows the worker and returns when the job ends" 0
expect_grep "...with the lines written while it ran" "$TMP/out" "rank 0 done"
if [ $(($(date +%s) - start)) -ge 3 ]; then pass "...having waited for them"; else fail "...having waited for them" "returned after $(($(date +%s) - start)) s"; fi

# stop → SUSPENDED, start → running again
sed -e 's/^name: ddp/name: long/' -e 's/^display_name: ddp/display_name: long/' \
    -e 's/sleep 4/sleep 300/' "$TMP/ddp.yaml" >"$TMP/long.yaml"
run tj submit -f "$TMP/long.yaml"
expect_rc "a long job is submitted" 0
expect_state "...and runs" long RUNNING 30

# top lists the Slurm job and says which backend it is on
TUI_ENV="TRAINJOB_CONFIG='$TRAINJOB_CONFIG' LANG=C.UTF-8"
start_tui 140 30 "top"
see_row "top lists the running Slurm job" "long" "RUNNING" 10
expect_grep "...and says it is on slurm" "$TMP/screen" "· slurm"
keys Enter
if wait_screen "master-0" 10 && wait_screen "worker-0" 10 && wait_screen "submitted as Slurm job" 10; then
    pass "...its job screen shows the workers and events"
else
    fail "...its job screen shows the workers and events" "$(cat "$TMP/screen")"
fi
keys p
see "...p asks the priority, saying why HIGH is not offered here" "maps no QOS for HIGH and HIGHEST"
gone "...and offering NORMAL only" "  HIGH"
keys Escape
tui_cleanup

run tj stop long
expect_rc "stop works" 0
expect_state "...and the job is SUSPENDED" long SUSPENDED 30
run tj start long
expect_rc "start works" 0
expect_state "...and it runs again" long RUNNING 30
run tj describe job long
expect_grep "...its events say it was stopped" "$TMP/out" "cancelled"
run tj delete long
expect_rc "delete works" 0
if [ -e "$TJ_SLURM_JOBS_DIR/default/long" ]; then fail "...and removes the job directory"; else pass "...and removes the job directory"; fi
run tj get jobs
expect_no_grep "...and get jobs no longer lists it" "$TMP/out" "long"

run tj --context lab-tcp get jobs
expect_rc "a wrong token fails" 1
expect_grep "...as authentication failed, naming the context" "$TMP/err" "context 'lab-tcp': authentication failed"

# A standard job preempts an idle one: the idle job goes back to QUEUEING,
# "preempted", and runs again once the standard job is done.
cat >"$TMP/sweep.yaml" <<'EOF2'
workspace_name: default
name: sweep
display_name: sweep
framework: PYTORCH
resource_pool:
  name: idle
  zone: z
  vpc_id: v
scheduling:
  quota_type: SPOT
  preemptible: true
roles:
  - total_replicas: 3
    resource_spec:
      - name: gpu-8
    image_path: local/host
    startup_script: sleep 300
EOF2
sed -e 's/^name: ddp/name: urgent/' -e 's/^display_name: ddp/display_name: urgent/' \
    -e 's/total_replicas: 2/total_replicas: 1/' -e 's/gpu-2/gpu-8/' "$TMP/ddp.yaml" >"$TMP/urgent.yaml"
run tj submit -f "$TMP/sweep.yaml"
expect_rc "an idle job is submitted" 0
expect_state "...and runs on every GPU" sweep RUNNING 30
run tj submit -f "$TMP/urgent.yaml"
expect_rc "a standard job is submitted" 0
expect_state "...the idle job is preempted back to QUEUEING" sweep QUEUEING 30
run tj get job sweep -o json
expect_grep "...saying it was preempted" "$TMP/out" "preempted"
expect_state "...the standard job runs and succeeds" urgent SUCCEEDED 60
expect_state "...and the idle job runs again" sweep RUNNING 60
