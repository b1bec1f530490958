#!/bin/sh
# tests/slurm/cluster.sh start|stop|status DIR
#
# The project's own throw-away Slurm 22.05 cluster for the Slurm tests (the
# Slurm suite, tests/slurm*.test.sh, starts one per run in a temp directory
# and stops it by pid). Derived from a proven recipe for a local multi-node
# Slurm 22.05 cluster; the pitfalls it documents are kept and named where
# they matter.
#
#   start DIR  installs the Debian packages when missing (apt, as scripts/deps.sh
#              does), then starts munged, slurmctld, N slurmd (n1..nN, fake GPUs:
#              symlinks to /dev/null) and slurmrestd (JWT) on 127.0.0.1 and on
#              DIR/rest/slurmrestd.sock, and writes DIR/env (source it):
#                SLURM_CONF SLURMRESTD_URL SLURMRESTD_SOCKET SLURMRESTD_USER
#                SLURMRESTD_TOKEN TJ_SLURM_JOBS_DIR TJ_SLURM_DIR
#              A cluster already healthy in DIR with the same knobs is reused.
#              On failure it stops what it started and exits 1, saying why.
#   stop DIR   cancels the cluster's jobs, then stops only the processes named
#              in DIR's pid files (after checking /proc/PID/comm), plus the
#              slurmstepds whose environment names DIR's slurm.conf. Safe to repeat.
#   status DIR exits 0 when every daemon of DIR is up and REST answers a ping.
#
# Every file lives under DIR; nothing binds but 127.0.0.1 and Unix sockets.
# DIR and each of its parents must be searchable by others (o+x): slurmrestd
# and the jobs run as unprivileged users.
#
# Knobs (environment):
#   TJ_SLURM_PORT_BASE=16800   ctld +17, slurmd port +18, dbd +19, rest +20,
#                              mariadb +30, slurmd n_i +100+i. Tests derive it from $$.
#   TJ_SLURM_NODES=3  TJ_SLURM_GPUS_PER_NODE=8  TJ_SLURM_CPUS_PER_NODE=8
#   TJ_SLURM_MEM_PER_NODE=8000 (MB)  TJ_SLURM_CRED_EXPIRE=10 (a requeued job may
#                              start again after cred_expire+1 s; Slurm's default is 120)
#   TJ_SLURM_ACCOUNTING=0      1: also mariadbd + slurmdbd, QOS normal/high/highest and
#                              idle_normal/idle_high/idle_highest, preempt/qos
#   TJ_SLURM_REST_USER=slurmrestd  TJ_SLURM_JOB_USER=trainjob (never root: 22.05's
#                              slurmrestd rejects root/SlurmUser tokens)
#   TJ_SLURM_TOKEN_LIFESPAN=86400  TJ_SLURM_NO_APT=1 (fail instead of installing)
#
# Needs root (slurmd launches jobs as their users). The script runs under bash
# (Essential on Debian); `sh cluster.sh` re-executes itself with it.
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -uo pipefail

usage() { echo "usage: cluster.sh start|stop|status DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
CMD=$1
D=$2
case "$D" in /*) ;; *) D="$(pwd)/$D" ;; esac
NODES=${TJ_SLURM_NODES:-3}
GPUS=${TJ_SLURM_GPUS_PER_NODE:-8}
CPUS=${TJ_SLURM_CPUS_PER_NODE:-8}
MEM=${TJ_SLURM_MEM_PER_NODE:-8000}
PB=${TJ_SLURM_PORT_BASE:-16800}
ACCT=${TJ_SLURM_ACCOUNTING:-0}
REST_USER=${TJ_SLURM_REST_USER:-slurmrestd}
JOB_USER=${TJ_SLURM_JOB_USER:-trainjob}
LIFESPAN=${TJ_SLURM_TOKEN_LIFESPAN:-86400}
CRED_EXPIRE=${TJ_SLURM_CRED_EXPIRE:-10}
CTLD_PORT=$((PB + 17))
DBD_PORT=$((PB + 19))
REST_PORT=$((PB + 20))
DB_PORT=$((PB + 30))
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"
ETC=$D/etc RUN=$D/run LOGD=$D/log
export SLURM_CONF=$ETC/slurm.conf
T0=$(date +%s%N)

log() { echo "[cluster.sh $(( ($(date +%s%N) - T0) / 1000000 ))ms] $*" >&2; }
die() { echo "cluster.sh: ERROR: $*" >&2; exit 1; }
alive() { [ -s "$1" ] && kill -0 "$(tr -dc 0-9 < "$1")" 2>/dev/null; }
# wait_for SECONDS DESCRIPTION CMD...   (polls every 0.2 s, bounded)
wait_for() {
	local secs=$1 what=$2 end
	shift 2
	end=$(($(date +%s) + secs))
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$end" ] || die "timed out after ${secs}s waiting for $what (logs: $LOGD)"
		sleep 0.2
	done
}

# ------------------------------------------------------------------ stop
# pid_of FILE EXPECTED_COMM: the pid in FILE when it runs EXPECTED_COMM
pid_of() {
	local f=$1 want=$2 pid comm
	[ -s "$f" ] || return 1
	pid=$(tr -dc '0-9' < "$f")
	[ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 1
	comm=$(cat "/proc/$pid/comm" 2>/dev/null)
	case "$comm" in "$want"*) echo "$pid" ;; *) return 1 ;; esac
}
# running PID: alive and not a zombie (kill -0 succeeds on zombies)
running() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
# stop_all TIMEOUT FILE:COMM...  SIGTERM all at once, wait, SIGKILL stragglers
stop_all() {
	local t=$1 spec f want pid i left
	shift
	local pids=() names=()
	for spec in "$@"; do
		f=${spec%%:*} want=${spec#*:}
		if pid=$(pid_of "$f" "$want"); then
			kill -TERM "$pid" 2>/dev/null && pids+=("$pid") names+=("$want")
		fi
		rm -f "$f"
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	for ((i = 0; i < t * 10; i++)); do
		left=0
		for pid in "${pids[@]}"; do running "$pid" && left=1; done
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	for i in "${!pids[@]}"; do
		if running "${pids[$i]}"; then
			log "${names[$i]} (${pids[$i]}) ignored SIGTERM, sending SIGKILL"
			kill -KILL "${pids[$i]}" 2>/dev/null
		fi
		log "stopped ${names[$i]} (pid ${pids[$i]})"
	done
	# a killed process stays in /proc until its parent (pid 1) reaps it: wait
	# for that (bounded) so that nothing of the cluster is left when stop returns
	for ((i = 0; i < 50; i++)); do
		left=0
		for pid in "${pids[@]}"; do [ -d "/proc/$pid" ] && left=1; done
		[ "$left" = 0 ] && break
		sleep 0.1
	done
}
# the slurmstepds of this cluster: forked by our slurmd, they inherit its SLURM_CONF
our_stepds() {
	local p c
	for p in /proc/[0-9]*; do
		c= # read, not cat: a fork per process takes seconds on a busy machine
		{ read -r c < "$p/comm"; } 2>/dev/null
		[ "$c" = slurmstepd ] || continue
		{ tr '\0' '\n' < "$p/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF" && echo "${p#/proc/}"
	done
}
do_stop() {
	local jobs i f p specs
	[ -d "$D" ] || { log "nothing at $D"; return 0; }
	# 1. cancel every job while slurmctld is up, so slurmstepd ends its tasks
	if pid_of "$RUN/slurmctld.pid" slurmctld >/dev/null && [ -f "$SLURM_CONF" ]; then
		jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | tr '\n' ' ')
		if [ -n "${jobs// /}" ]; then
			log "cancelling jobs: $jobs"
			# shellcheck disable=SC2086
			timeout 10 scancel $jobs 2>/dev/null
			for ((i = 0; i < 150; i++)); do
				[ -z "$(our_stepds)" ] && break
				sleep 0.1
			done
		fi
	fi
	# 2. the Slurm daemons at once, then the database
	specs=("$RUN/slurmrestd.pid:slurmrestd")
	for f in "$RUN"/slurmd.*.pid; do [ -e "$f" ] && specs+=("$f:slurmd"); done
	specs+=("$RUN/slurmctld.pid:slurmctld" "$RUN/slurmdbd.pid:slurmdbd")
	stop_all 15 "${specs[@]}"
	stop_all 30 "$RUN/mariadb.pid:mariadbd"
	# 3. job-step daemons left behind (a crash, a kill)
	for p in $(our_stepds); do
		log "killing leftover slurmstepd $p"
		kill -KILL "$p" 2>/dev/null
	done
	# 4. munged last: the Slurm daemons need it to shut down cleanly. Here (gVisor)
	# munged acts on SIGTERM only after ~10 s; it keeps nothing worth a clean exit
	stop_all 2 "$D/munge/munged.pid:munged"
	rm -f "$D/munge/munge.socket" "$D/munge/munge.socket.lock" "$D/rest/slurmrestd.sock" "$RUN/params"
	log "stopped ($D)"
	return 0
}

# ------------------------------------------------------------------ health
token() { scontrol token username="$JOB_USER" lifespan="$1" 2>/dev/null | sed -n 's/^SLURM_JWT=//p'; }
rest_ping() {
	local tok
	tok=$(token 60)
	[ -n "$tok" ] || return 1
	curl -sf -m 5 -H "X-SLURM-USER-NAME: $JOB_USER" -H "X-SLURM-USER-TOKEN: $tok" \
		"http://127.0.0.1:$REST_PORT/slurm/v0.0.38/ping" | grep -q '"UP"'
}
PARAMS="acct=$ACCT nodes=$NODES gpus=$GPUS cpus=$CPUS mem=$MEM ports=$PB cred_expire=$CRED_EXPIRE rest_user=$REST_USER job_user=$JOB_USER"
all_up() {
	local i
	[ -f "$SLURM_CONF" ] || return 1
	[ "$(cat "$RUN/params" 2>/dev/null)" = "$PARAMS" ] || return 1
	pid_of "$D/munge/munged.pid" munged >/dev/null || return 1
	if [ "$ACCT" = 1 ]; then
		pid_of "$RUN/mariadb.pid" mariadbd >/dev/null && pid_of "$RUN/slurmdbd.pid" slurmdbd >/dev/null || return 1
	fi
	pid_of "$RUN/slurmctld.pid" slurmctld >/dev/null || return 1
	for i in $(seq 1 "$NODES"); do pid_of "$RUN/slurmd.n$i.pid" slurmd >/dev/null || return 1; done
	pid_of "$RUN/slurmrestd.pid" slurmrestd >/dev/null || return 1
	scontrol ping 2>/dev/null | grep -q 'is UP' || return 1
	rest_ping
}
write_env() {
	local tok
	tok=$(token "$LIFESPAN")
	[ -n "$tok" ] || die "scontrol token username=$JOB_USER failed"
	cat > "$D/env.tmp" <<ENV
# written by tests/slurm/cluster.sh; source me
export TJ_SLURM_DIR='$D'
export SLURM_CONF='$SLURM_CONF'
export SLURMRESTD_URL='http://127.0.0.1:$REST_PORT'
export SLURMRESTD_SOCKET='$D/rest/slurmrestd.sock'
export SLURMRESTD_USER='$JOB_USER'
export SLURMRESTD_TOKEN='$tok'
export TJ_SLURM_JOBS_DIR='$D/jobs'
export TJ_SLURM_ACCOUNTING='$ACCT'
ENV
	chmod 644 "$D/env.tmp" && mv "$D/env.tmp" "$D/env"
}

# ------------------------------------------------------------------ start
install_pkgs() {
	local p need=() tmp_policy=0
	for p in slurmctld slurmd slurmrestd slurm-client munge slurm-wlm-jwt-plugin curl jq; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
	done
	if [ "$ACCT" = 1 ]; then
		for p in slurmdbd mariadb-server; do
			dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
		done
	fi
	[ ${#need[@]} -gt 0 ] || return 0
	[ "${TJ_SLURM_NO_APT:-0}" = 1 ] && die "missing packages: ${need[*]} (TJ_SLURM_NO_APT=1)"
	log "installing ${need[*]}"
	# A policy-rc.d that exits 101 keeps the postinst scripts from starting the
	# system's munged/slurmctld/slurmd; a temporary one is added when missing.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && tmp_policy=1
	fi
	# the lock timeout: another test (or helper) may be installing at the same time
	local apt=(apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends)
	DEBIAN_FRONTEND=noninteractive "${apt[@]}" "${need[@]}" >&2 ||
		{ apt-get -o DPkg::Lock::Timeout=300 update >&2 && DEBIAN_FRONTEND=noninteractive "${apt[@]}" "${need[@]}" >&2; }
	local rc=$?
	[ "$tmp_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
	[ "$rc" = 0 ] || die "apt-get install ${need[*]} failed"
}

# system_user NAME SHELL: NAME exists, added as a system user if missing (5 tries)
system_user() {
	local i
	for i in 1 2 3 4 5; do
		id "$1" >/dev/null 2>&1 && return 0
		useradd --system --no-create-home --home-dir /nonexistent --shell "$2" --user-group "$1" && return 0
		sleep 1
	done
	id "$1" >/dev/null 2>&1
}

# searchable DIR: slurmrestd (REST_USER) and the jobs (JOB_USER) must reach it
check_path() {
	local p=$D mode
	while [ -n "$p" ] && [ "$p" != / ]; do
		if [ -e "$p" ]; then
			mode=$(stat -c %A "$p")
			[ "${mode:9:1}" = x ] || [ "${mode:9:1}" = t ] ||
				die "$p is not searchable by others ($mode): slurmrestd and the jobs run as unprivileged users"
		fi
		p=${p%/*}
	done
}

do_start() {
	local i g HOST NODELIST ACCT_CONF STD_PART_EXTRA IDLE_PART_EXTRA
	[ "$(id -u)" = 0 ] || die "must run as root (slurmd launches jobs as their users)"
	[ "$NODES" -ge 1 ] || die "TJ_SLURM_NODES must be >= 1"
	case "$PB" in '' | *[!0-9]*) die "TJ_SLURM_PORT_BASE must be a number" ;; esac
	[ "$PB" -ge 1024 ] && [ $((PB + 100 + NODES)) -le 65535 ] || die "TJ_SLURM_PORT_BASE $PB out of range"
	install_pkgs
	# Under the lock the test suites take to add users (tests/lib.sh tj_users):
	# clusters start side by side, and useradd fails while another holds /etc/passwd.
	local locks=${TJ_TEST_SHARED:-${TMPDIR:-/tmp}/trainjob-tests-$(id -u)}
	mkdir -p "$locks" && chmod 700 "$locks" || die "cannot make $locks"
	# A trainjobd started as root meanwhile may be adding its own user
	# (trainjob, the default JOB_USER): a useradd that fails is tried again
	# while the user is still missing.
	(
		flock -w 120 9 || die "no lock on $locks/users.lock"
		system_user "$REST_USER" /usr/sbin/nologin || die "cannot create user $REST_USER"
		system_user "$JOB_USER" /bin/bash || die "cannot create user $JOB_USER"
	) 9>>"$locks/users.lock" || exit 1
	[ "$REST_USER" != root ] && [ "$JOB_USER" != root ] || die "REST/JOB user must not be root"

	if all_up; then
		write_env
		log "already running in $D (env refreshed)"
		return 0
	fi
	if compgen -G "$RUN/*.pid" >/dev/null || [ -e "$D/munge/munged.pid" ]; then
		log "stale or partial cluster in $D: stopping it first"
		do_stop
	fi

	mkdir -p "$D" || die "cannot create $D"
	chmod 755 "$D"
	check_path
	# fresh Slurm state every start: job ids restart at 1, so jobs/ is emptied
	# too; the keys are kept so old tokens stay valid
	rm -rf "${D:?}/state" "${D:?}/spool" "${RUN:?}" "${LOGD:?}" "${D:?}/rest" "${D:?}/dev" "${D:?}/jobs"
	mkdir -p "$ETC" "$D/state" "$D/spool" "$RUN" "$LOGD" "$D/dev" "$D/munge" "$D/rest" "$D/jobs"
	chmod 755 "$D/munge"                    # munged: the socket dir must be a+x
	chown "$REST_USER:$REST_USER" "$D/rest" # slurmrestd binds its socket after setuid
	chown "$JOB_USER:$JOB_USER" "$D/jobs"
	chmod 1777 "$D/jobs"
	for i in $(seq 1 "$NODES"); do mkdir -p "$D/spool/n$i"; done
	# fake GPUs: gres/gpu drops File-less GPUs and wants a char/block device;
	# symlinks to /dev/null pass and give the indexes 0..GPUS-1
	for g in $(seq 0 $((GPUS - 1))); do ln -sfn /dev/null "$D/dev/gpu$g"; done
	[ -s "$D/munge/munge.key" ] || dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
	chmod 400 "$D/munge/munge.key" # munged wants 0400, owned by its user (root)
	[ -s "$ETC/jwt_hs256.key" ] || dd if=/dev/urandom of="$ETC/jwt_hs256.key" bs=32 count=1 status=none
	chmod 600 "$ETC/jwt_hs256.key"

	HOST=$(hostname -s)
	if [ "$NODES" -gt 1 ]; then NODELIST="n[1-$NODES]"; else NODELIST="n1"; fi
	if [ "$ACCT" = 1 ]; then
		# AccountingStoragePass: with munge on a non-default socket, clients use
		# it (not AuthInfo) for slurmdbd; EnforcePartLimits=ALL rejects a QOS the
		# partition does not allow at submit instead of pending for ever
		ACCT_CONF="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$D/munge/munge.socket
AccountingStorageEnforce=associations,limits,qos
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
PriorityType=priority/multifactor
PriorityWeightQOS=100000
PriorityWeightAge=100
PriorityWeightPartition=1000
PreemptType=preempt/qos
PreemptMode=REQUEUE
EnforcePartLimits=ALL"
		STD_PART_EXTRA="AllowQos=normal,high,highest"
		IDLE_PART_EXTRA="AllowQos=idle_normal,idle_high,idle_highest"
	else
		# (AccountingStorageTRES=gres/gpu is fatal without slurmdbd)
		ACCT_CONF="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PriorityType=priority/basic
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE"
		STD_PART_EXTRA=""
		IDLE_PART_EXTRA=""
	fi
	cat > "$SLURM_CONF" <<CONF
# written by tests/slurm/cluster.sh
ClusterName=trainjob
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$((PB + 18))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# cred_expire also sets how long a requeued job waits: BeginTime = now + cred_expire + 1
AuthInfo=socket=$D/munge/munge.socket,cred_expire=$CRED_EXPIRE
CredType=cred/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$ETC/jwt_hs256.key
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.%n.pid
SlurmctldLogFile=$LOGD/slurmctld.log
SlurmdLogFile=$LOGD/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$ETC/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=5,batch_sched_delay=0,sched_min_interval=100000
JobRequeue=1
MinJobAge=600
KillWait=5
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
$ACCT_CONF
NodeName=DEFAULT CPUs=$CPUS RealMemory=$MEM Gres=gpu:$GPUS State=UNKNOWN
CONF
	# Debian's slurmd is built with MULTIPLE_SLURMD: one slurmd per node on its own port
	for i in $(seq 1 "$NODES"); do
		echo "NodeName=n$i NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((PB + 100 + i))" >> "$SLURM_CONF"
	done
	cat >> "$SLURM_CONF" <<CONF
PartitionName=standard Nodes=$NODELIST Default=YES MaxTime=INFINITE State=UP PriorityTier=100 PreemptMode=OFF $STD_PART_EXTRA
PartitionName=idle Nodes=$NODELIST Default=NO MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=REQUEUE $IDLE_PART_EXTRA
CONF
	cat > "$ETC/gres.conf" <<CONF
AutoDetect=off
NodeName=$NODELIST Name=gpu File=$D/dev/gpu[0-$((GPUS - 1))]
CONF
	: > "$ETC/plugstack.conf" # keeps Debian's /etc/slurm/plugstack.conf out

	# from here on a failure stops whatever was started (TJ_SLURM_KEEP_ON_FAIL=1 keeps it)
	trap 'rc=$?; if [ "$rc" != 0 ] && [ "${TJ_SLURM_KEEP_ON_FAIL:-0}" != 1 ]; then
		echo "cluster.sh: start failed (rc=$rc); last log lines:" >&2
		tail -n 5 "$LOGD"/*.log "$D/munge/munged.log" >&2 2>/dev/null
		do_stop; fi' EXIT

	log "starting munged"
	munged --socket="$D/munge/munge.socket" --key-file="$D/munge/munge.key" \
		--pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
		--seed-file="$D/munge/munged.seed" || die "munged did not start (see $D/munge/munged.log)"
	wait_for 10 munged bash -c "munge -S '$D/munge/munge.socket' -n | unmunge -S '$D/munge/munge.socket'"

	if [ "$ACCT" = 1 ]; then
		start_accounting
	fi

	log "starting slurmctld"
	slurmctld -i || die "slurmctld did not start (see $LOGD/slurmctld.log)"
	wait_for 30 slurmctld bash -c "scontrol ping | grep -q 'is UP'"
	log "starting $NODES slurmd"
	for i in $(seq 1 "$NODES"); do
		slurmd -N "n$i" || die "slurmd n$i did not start (see $LOGD/slurmd.n$i.log)"
	done
	wait_for 60 "all $NODES nodes idle" idle_nodes

	log "starting slurmrestd"
	rm -f "$D/rest/slurmrestd.sock"
	local plugins=()
	# pitfall: the dbv0.0.3x OpenAPI plugins are fatal without slurmdbd
	# shellcheck disable=SC2054
	[ "$ACCT" = 1 ] || plugins=(-s openapi/v0.0.38,openapi/v0.0.37,openapi/v0.0.36)
	# pitfall: SLURM_JWT=daemon makes slurmrestd forward the client's JWT
	# (without it every request is a 401 "Rejecting thread config token")
	SLURM_JWT=daemon setsid slurmrestd -a rest_auth/jwt "${plugins[@]}" \
		-u "$REST_USER" -g "$REST_USER" \
		"127.0.0.1:$REST_PORT" "unix:$D/rest/slurmrestd.sock" \
		< /dev/null > "$LOGD/slurmrestd.log" 2>&1 &
	echo $! > "$RUN/slurmrestd.pid"
	wait_for 20 slurmrestd rest_ping

	write_env
	echo "$PARAMS" > "$RUN/params"
	trap - EXIT
	log "cluster up in $D: nodes=$NODELIST gpus/node=$GPUS accounting=$ACCT rest=http://127.0.0.1:$REST_PORT"
}
idle_nodes() { [ "$(sinfo -h -N -p standard -t idle -o %N | sort -u | wc -l)" -ge "$NODES" ]; }

start_accounting() {
	# the accounting DB is dropped on every fresh start: job ids restart at 1
	log "starting mariadbd"
	if [ ! -d "$D/mysql/mysql" ]; then
		rm -rf "$D/mysql"
		mariadb-install-db --no-defaults --datadir="$D/mysql" --user=root \
			--auth-root-authentication-method=socket --skip-test-db > "$LOGD/mariadb-install.log" 2>&1 ||
			die "mariadb-install-db failed, see $LOGD/mariadb-install.log"
	fi
	setsid mariadbd --no-defaults --datadir="$D/mysql" --socket="$RUN/mariadb.sock" \
		--pid-file="$RUN/mariadb.pid" --bind-address=127.0.0.1 --port="$DB_PORT" --user=root \
		--skip-name-resolve --log-error="$LOGD/mariadb.log" --innodb-buffer-pool-size=64M \
		--innodb-lock-wait-timeout=900 --max-connections=50 \
		--innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --skip-log-bin \
		< /dev/null > /dev/null 2>&1 &
	wait_for 60 mariadbd mariadb-admin --no-defaults --socket="$RUN/mariadb.sock" ping
	mariadb --no-defaults --socket="$RUN/mariadb.sock" -e \
		"DROP DATABASE IF EXISTS slurm_acct_db;
		 CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm-local-test';
		 GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;" ||
		die "mariadb setup failed"
	cat > "$ETC/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$ETC/jwt_hs256.key
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$RUN/slurmdbd.pid
LogFile=$LOGD/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=slurm-local-test
StorageLoc=slurm_acct_db
CONF
	chmod 600 "$ETC/slurmdbd.conf"
	log "starting slurmdbd"
	slurmdbd || die "slurmdbd did not start"
	wait_for 60 slurmdbd sacctmgr -n list cluster
	# standard QOS never preempted; every standard QOS preempts every idle one;
	# idle_high > idle_normal, idle_highest > both. One sacctmgr session.
	local allq=normal,high,highest,idle_normal,idle_high,idle_highest
	{
		echo "add cluster trainjob"
		echo "add qos high,highest,idle_normal,idle_high,idle_highest"
		echo "modify qos normal set Priority=0 Preempt=idle_normal,idle_high,idle_highest"
		echo "modify qos high set Priority=100 Preempt=idle_normal,idle_high,idle_highest"
		echo "modify qos highest set Priority=1000 Preempt=idle_normal,idle_high,idle_highest"
		echo "modify qos idle_normal set Priority=0 PreemptMode=requeue"
		echo "modify qos idle_high set Priority=100 Preempt=idle_normal PreemptMode=requeue"
		echo "modify qos idle_highest set Priority=1000 Preempt=idle_normal,idle_high PreemptMode=requeue"
		echo "add account ml Cluster=trainjob Description=trainjob Organization=trainjob"
		echo "add user $JOB_USER,root Account=ml Cluster=trainjob"
		echo "modify user $JOB_USER,root set QOS=$allq DefaultQOS=normal"
	} | sacctmgr -i > "$LOGD/sacctmgr-setup.log" 2>&1
	sacctmgr -n -P show qos format=name,preempt | grep -q '^idle_highest|idle_high,idle_normal$' ||
		die "QOS setup failed, see $LOGD/sacctmgr-setup.log"
}

case "$CMD" in
start) do_start ;;
stop) do_stop ;;
status) all_up ;;
*) usage ;;
esac
