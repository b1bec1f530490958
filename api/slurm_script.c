/*
 * slurm_script: renders the batch script (the job's supervisor) and names the
 * job directory; see slurm_script.h for the layout and the contract.
 *
 * The script is a job-specific header (every job value single-quoted, the
 * fault rules compiled into a `case`, the exit-code meanings of
 * api/exitcodes.c) followed by supervisor_body, the same for every job.
 * Called by the Slurm driver and by `trainjob render --target slurm`.
 */
#include "api/slurm_script.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/exitcodes.h"
#include "api/fault.h"
#include "api/validate.h"
#include "util/pathpart.h"
#include "util/xalloc.h"

/* Most workers one script supervises (each one is a srun step on its own node). */
#define SLURM_MAX_REPLICAS 4096
/* SIGTERM to SIGKILL when the supervisor ends a worker: trainjobd's default grace. */
#define SLURM_GRACE_S 10
/* The crash-loop back-off: trainjobd's default limits (trainjobd(8), limits), in seconds. */
#define SLURM_RESTART_DELAY_S 10
#define SLURM_RESTART_DELAY_MAX_S 300
#define SLURM_RESTART_RESET_S 600

static const char supervisor_body[] =
    "# ---- the supervisor: the same for every job (api/slurm_script.c) ----\n"
    "# Its state: TJ_RUN (a private temp dir: the fifo the worker steps report to;\n"
    "# with TJ_LOCAL, the job directory's launch/, for the checks' why), per worker\n"
    "# i: TJ_GEN_i (which start of it is current), TJ_PID_i (its step's watcher; with\n"
    "# TJ_LOCAL, the worker's own process group), TJ_LIVE_i; state.json in the job\n"
    "# directory (restarts, marked nodes).\n"
    "# It starts no helper program in the steady path: shell builtins only, but for\n"
    "# one date(1) for the clock's base (none when the node kept one), one scontrol(1)\n"
    "# for the nodes' addresses (none with TJ_LOCAL) and the worker's start (srun, or\n"
    "# setsid).\n"
    "\n"
    "TJ_NL='\n"
    "'\n"
    "TJ_TAB='\t'\n"
    "# tj_clock: TJ_T (the time events and records carry) and TJ_S (seconds since the\n"
    "# epoch) read once; taken again wherever time has passed (a worker ended, a wait).\n"
    "# No process per reading: one date(1) gives the epoch in hundredths (TJ_B0) at\n"
    "# an uptime (TJ_U0, hundredths of /proc/uptime), later readings add the uptime\n"
    "# gone since; a new base each hour follows a wall clock that was set. Without\n"
    "# /proc/uptime, a date(1) per reading. A base younger than the hour is kept for the\n"
    "# node's next jobs of the user (tj_clock_kept).\n"
    "TJ_B0= TJ_U0= TJ_BOOT= TJ_CLOCK=\n"
    "tj_clock() {\n"
    "\tif read _cq _cc 2>/dev/null </proc/uptime && case $_cq in *[!0-9.]* | .* | *.) false ;; "
    "*.*) ;; *) false ;; esac; then\n"
    "\t\t_cu=$((${_cq%.*} * 100 + 1${_cq#*.} - 100))\n"
    "\t\tif { [ -z \"$TJ_B0\" ] || [ $((_cu - TJ_U0)) -ge 360000 ]; } && ! tj_clock_kept \"$_cu\"; "
    "then\n"
    "\t\t\t_cc=$(date -u '+%s %N')\n"
    "\t\t\tcase ${_cc#* } in [0-9][0-9]*) _cn=${_cc#* } ;; *) _cn=00 ;; esac\n"
    "\t\t\tTJ_B0=$((${_cc% *} * 100 + 1${_cn%\"${_cn#??}\"} - 100))\n"
    "\t\t\t# the uptime after date(1): a reading is never ahead of the clock\n"
    "\t\t\tread _cq _cc </proc/uptime\n"
    "\t\t\t_cu=$((${_cq%.*} * 100 + 1${_cq#*.} - 100)) TJ_U0=$_cu\n"
    "\t\t\ttj_clock_keep\n"
    "\t\tfi\n"
    "\t\tTJ_S=$(((TJ_B0 + _cu - TJ_U0) / 100))\n"
    "\telse\n"
    "\t\tTJ_S=$(date -u +%s)\n"
    "\tfi\n"
    "\ttj_utc\n"
    "}\n"
    "# tj_clock_kept UPTIME: TJ_B0 and TJ_U0 from TJ_CLOCK/base, the base a job of the\n"
    "# user took on this node in this boot (its boot id) within the hour; else 1 (a\n"
    "# date(1) then). TJ_CLOCK is TMPDIR's trainjob-clock.UID, a directory the user's\n"
    "# own (mode 700, not a link), so no other user can put a file or a link in it.\n"
    "tj_clock_kept() {\n"
    "\tcase ${SLURM_JOB_UID:-} in '' | *[!0-9]*) return 1 ;; esac\n"
    "\tif [ -z \"$TJ_BOOT\" ]; then\n"
    "\t\t{ read -r TJ_BOOT </proc/sys/kernel/random/boot_id; } 2>/dev/null\n"
    "\t\tcase $TJ_BOOT in '' | *[!0-9a-f-]*) TJ_BOOT=- ;; esac\n"
    "\tfi\n"
    "\t[ \"$TJ_BOOT\" != - ] || return 1\n"
    "\tTJ_CLOCK=${TMPDIR:-/tmp}/trainjob-clock.$SLURM_JOB_UID\n"
    "\t[ -d \"$TJ_CLOCK\" ] && [ ! -h \"$TJ_CLOCK\" ] && [ -O \"$TJ_CLOCK\" ] || return 1\n"
    "\t[ -f \"$TJ_CLOCK/base\" ] && [ ! -h \"$TJ_CLOCK/base\" ] && [ -O \"$TJ_CLOCK/base\" ] || "
    "return 1\n"
    "\t{ read -r _kb _kB _kU _kx <\"$TJ_CLOCK/base\"; } 2>/dev/null || return 1\n"
    "\t[ \"$_kb\" = \"$TJ_BOOT\" ] && [ -z \"$_kx\" ] || return 1\n"
    "\tcase $_kB in '' | *[!0-9]* | ?????????????????*) return 1 ;; esac\n"
    "\tcase $_kU in '' | *[!0-9]* | ?????????????????*) return 1 ;; esac\n"
    "\t[ \"$_kU\" -le \"$1\" ] && [ $(($1 - _kU)) -lt 360000 ] || return 1\n"
    "\tTJ_B0=$_kB TJ_U0=$_kU\n"
    "}\n"
    "# tj_clock_keep: the base date(1) gave, in TJ_CLOCK/base for the node's next jobs\n"
    "# (one write: a reader sees it whole, or an empty file it does not use). The\n"
    "# directory is made once (mkdir -m 700, which neither follows a link nor takes\n"
    "# one that is there); one that is a link or another user's is left alone.\n"
    "tj_clock_keep() {\n"
    "\t[ -n \"$TJ_CLOCK\" ] || return 0\n"
    "\tif [ ! -e \"$TJ_CLOCK\" ] && [ ! -h \"$TJ_CLOCK\" ]; then\n"
    "\t\tmkdir -m 700 \"$TJ_CLOCK\" 2>/dev/null || return 0\n"
    "\tfi\n"
    "\t[ -d \"$TJ_CLOCK\" ] && [ ! -h \"$TJ_CLOCK\" ] && [ -O \"$TJ_CLOCK\" ] || return 0\n"
    "\t{ printf '%s %s %s\\n' \"$TJ_BOOT\" \"$TJ_B0\" \"$TJ_U0\" >\"$TJ_CLOCK/base\"; } "
    "2>/dev/null\n"
    "\treturn 0\n"
    "}\n"
    "# tj_utc: TJ_T, TJ_S as %Y-%m-%dT%H:%M:%SZ (UTC) by the proleptic Gregorian calendar\n"
    "tj_utc() {\n"
    "\t_cd=$((TJ_S / 86400 + 719468)) _cs=$((TJ_S % 86400))\n"
    "\t_ce=$((_cd / 146097)) _cd=$((_cd % 146097))\n"
    "\t_cy=$(((_cd - _cd / 1460 + _cd / 36524 - _cd / 146096) / 365))\n"
    "\t_cd=$((_cd - (365 * _cy + _cy / 4 - _cy / 100))) _cy=$((_cy + _ce * 400))\n"
    "\t_cm=$(((5 * _cd + 2) / 153))\n"
    "\t_cd=$((_cd - (153 * _cm + 2) / 5 + 1)) _cm=$((_cm < 10 ? _cm + 3 : _cm - 9))\n"
    "\t[ \"$_cm\" -le 2 ] && _cy=$((_cy + 1))\n"
    "\t_cH=$((_cs / 3600)) _cM=$((_cs / 60 % 60)) _cs=$((_cs % 60))\n"
    "\t[ \"$_cm\" -lt 10 ] && _cm=0$_cm\n"
    "\t[ \"$_cd\" -lt 10 ] && _cd=0$_cd\n"
    "\t[ \"$_cH\" -lt 10 ] && _cH=0$_cH\n"
    "\t[ \"$_cM\" -lt 10 ] && _cM=0$_cM\n"
    "\t[ \"$_cs\" -lt 10 ] && _cs=0$_cs\n"
    "\tTJ_T=$_cy-$_cm-${_cd}T$_cH:$_cM:${_cs}Z\n"
    "}\n"
    "tj_log() { printf '%s supervisor: %s\\n' \"$TJ_T\" \"$*\" >&2; }\n"
    "\n"
    "# tj_json_str TEXT: sets TJ_J to TEXT as a JSON string: quotes and backslashes\n"
    "# escaped, tabs and newlines as \\t and \\n but one final newline dropped, other\n"
    "# control characters dropped\n"
    "tj_json_str() {\n"
    "\t_s=$1 _o= _nl=0\n"
    "\twhile :; do\n"
    "\t\tcase $_s in *[\\\\\\\"[:cntrl:]]*) ;; *) break ;; esac\n"
    "\t\t_p=${_s%%[\\\\\\\"[:cntrl:]]*}\n"
    "\t\t_s=${_s#\"$_p\"}\n"
    "\t\t_ch=${_s%\"${_s#?}\"}\n"
    "\t\t_s=${_s#?}\n"
    "\t\t[ -n \"$_p\" ] && _nl=0\n"
    "\t\tcase $_ch in\n"
    "\t\t\\\\) _o=\"$_o$_p\\\\\\\\\" _nl=0 ;;\n"
    "\t\t\\\") _o=\"$_o$_p\\\\\\\"\" _nl=0 ;;\n"
    "\t\t\"$TJ_TAB\") _o=\"$_o$_p\\\\t\" _nl=0 ;;\n"
    "\t\t\"$TJ_NL\") _o=\"$_o$_p\\\\n\" _nl=1 ;;\n"
    "\t\t*) _o=\"$_o$_p\" ;;\n"
    "\t\tesac\n"
    "\tdone\n"
    "\t[ -z \"$_s\" ] && [ \"$_nl\" = 1 ] && _o=${_o%??}\n"
    "\tTJ_J=\"\\\"$_o$_s\\\"\"\n"
    "}\n"
    "\n"
    "# tj_event TYPE REASON KIND WORKER MESSAGE [EXTRA-JSON]: one line of events.jsonl\n"
    "tj_event() {\n"
    "\t[ -n \"${TJ_T:-}\" ] || tj_clock\n"
    "\ttj_json_str \"$5\"\n"
    "\t_e=\"{\\\"time\\\":\\\"$TJ_T\\\",\\\"type\\\":\\\"$1\\\",\\\"reason\\\":\\\"$2\\\","
    "\\\"kind\\\":\\\"$3\\\",\\\"message\\\":$TJ_J\"\n"
    "\t[ -n \"$4\" ] && tj_json_str \"$4\" && _e=\"$_e,\\\"worker\\\":$TJ_J\"\n"
    "\t[ -n \"${6:-}\" ] && _e=\"$_e,$6\"\n"
    "\tprintf '%s}\\n' \"$_e\" >> \"$TJ_JOBDIR/events.jsonl\"\n"
    "\ttj_log \"$2: $5\"\n"
    "}\n"
    "\n"
    "# tj_write FILE TEXT: FILE replaced atomically (a reader sees the old or the new text)\n"
    "tj_write() {\n"
    "\tprintf '%s\\n' \"$2\" > \"$1.tmp.$$\" && mv -f \"$1.tmp.$$\" \"$1\"\n"
    "}\n"
    "\n"
    "# tj_record I: rewrites workers/<name>.json from the worker's variables\n"
    "tj_record() {\n"
    "\teval \"_name=\\$TJ_NAME_$1 _node=\\$TJ_NODE_$1 _ph=\\$TJ_PHASE_$1 _rs=\\$TJ_RESTARTS_$1\"\n"
    "\teval \"_ec=\\$TJ_EXIT_$1 _sig=\\$TJ_SIG_$1 _rule=\\$TJ_RULE_$1 _st=\\$TJ_STARTED_$1 "
    "_en=\\$TJ_ENDED_$1 _at=\\$TJ_ATTEMPT_$1\"\n"
    "\t_j=\"{\\\"name\\\":\\\"$_name\\\",\\\"index\\\":$1,\\\"node\\\":\\\"$_node\\\","
    "\\\"phase\\\":\\\"$_ph\\\",\\\"restarts\\\":$_rs\"\n"
    "\t_j=\"$_j,\\\"exit_code\\\":${_ec:-null},\\\"signal\\\":${_sig:-null}\"\n"
    "\tif [ -n \"$_rule\" ]; then tj_json_str \"$_rule\" && _j=\"$_j,\\\"rule\\\":$TJ_J\"; else "
    "_j=\"$_j,\\\"rule\\\":null\"; fi\n"
    "\tif [ -n \"$_st\" ]; then _j=\"$_j,\\\"started\\\":\\\"$_st\\\"\"; else "
    "_j=\"$_j,\\\"started\\\":null\"; fi\n"
    "\tif [ -n \"$_en\" ]; then _j=\"$_j,\\\"ended\\\":\\\"$_en\\\"\"; else "
    "_j=\"$_j,\\\"ended\\\":null\"; fi\n"
    "\teval \"_ls=\\$TJ_LAST_$1\"\n"
    "\t[ -n \"$_ls\" ] && _j=\"$_j,\\\"last\\\":$_ls\"\n"
    "\t_j=\"$_j,\\\"attempt\\\":$_at}\"\n"
    "\t# one write, no rename: a reader may find it empty for a moment, never torn\n"
    "\tprintf '%s\\n' \"$_j\" > \"$TJ_JOBDIR/workers/$_name.json\"\n"
    "}\n"
    "\n"
    "# tj_last I CODE [DECIDED]: worker I's last end of its own (its \"last\" in the record,\n"
    "# kept across restarts and requeues): the exit, when, and with DECIDED the fault\n"
    "# decision (TJ_D_*); the ends the supervisor causes (tj_stop_all) leave it\n"
    "tj_last() {\n"
    "\teval \"_st=\\$TJ_STARTED_$1 _en=\\$TJ_ENDED_$1\"\n"
    "\t_l=\"{\\\"exit_code\\\":$2\"\n"
    "\t[ -n \"$_st\" ] && _l=\"$_l,\\\"start_time\\\":\\\"$_st\\\"\"\n"
    "\t[ -n \"$_en\" ] && _l=\"$_l,\\\"finish_time\\\":\\\"$_en\\\"\"\n"
    "\tif [ -n \"${3:-}\" ]; then\n"
    "\t\t_l=\"$_l,\\\"action\\\":\\\"$TJ_D_ACTION\\\"\"\n"
    "\t\t[ \"$TJ_D_RULE\" -gt 0 ] && _l=\"$_l,\\\"rule\\\":$TJ_D_RULE\"\n"
    "\t\ttj_json_str \"$TJ_D_TEXT\" && _l=\"$_l,\\\"message\\\":$TJ_J\"\n"
    "\tfi\n"
    "\teval \"TJ_LAST_$1=\\$_l}\"\n"
    "}\n"
    "\n"
    "# tj_read_last FILE: TJ_R, the last state a worker record FILE holds (its run before a\n"
    "# requeue wrote it: one object, no braces inside), else empty\n"
    "tj_read_last() {\n"
    "\tTJ_R=$(head -c 8192 \"$1\" 2>/dev/null | sed -n "
    "'s/.*\"last\":\\({\"exit_code\":[0-9]\\{1,3\\}[^{}]*}\\),\"attempt\".*/\\1/p')\n"
    "}\n"
    "\n"
    "# tj_save_state: state.json, kept across requeues (restarts used, nodes marked)\n"
    "tj_save_state() {\n"
    "\t_m=\n"
    "\tfor _x in $TJ_MARKED; do _m=\"$_m${_m:+,}\\\"$_x\\\"\"; done\n"
    "\t_sj=\"{\\\"restarts\\\":$TJ_RESTARTS,\\\"marked\\\":[$_m],\\\"runs\\\":$TJ_RUNS,\\\"slurm_"
    "job_id\\\":\\\"$SLURM_JOB_ID\\\"}\"\n"
    "\t# a first one is written once; a reader of an older one sees it whole or the new one\n"
    "\tif [ -f \"$TJ_JOBDIR/state.json\" ]; then\n"
    "\t\ttj_write \"$TJ_JOBDIR/state.json\" \"$_sj\"\n"
    "\telse\n"
    "\t\tprintf '%s\\n' \"$_sj\" > \"$TJ_JOBDIR/state.json\"\n"
    "\tfi\n"
    "}\n"
    "\n"
    "# tj_safe_word WORD: WORD is a node name or address Slurm gave (no shell or JSON specials)\n"
    "tj_safe_word() {\n"
    "\tcase \"$1\" in '' | *[!A-Za-z0-9._:-]*) return 1 ;; esac\n"
    "\treturn 0\n"
    "}\n"
    "\n"
    "tj_load_state() {\n"
    "\tTJ_RESTARTS=0 TJ_MARKED= TJ_RUNS=0\n"
    "\t[ -f \"$TJ_JOBDIR/state.json\" ] || return 0\n"
    "\t_s=$(head -c 65536 \"$TJ_JOBDIR/state.json\")\n"
    "\t_r=$(printf '%s' \"$_s\" | sed -n 's/.*\"restarts\":\\([0-9][0-9]*\\).*/\\1/p')\n"
    "\t_u=$(printf '%s' \"$_s\" | sed -n 's/.*\"runs\":\\([0-9][0-9]*\\).*/\\1/p')\n"
    "\tcase \"$_r\" in [0-9] | [0-9][0-9] | [0-9][0-9][0-9] | [0-9][0-9][0-9][0-9]) "
    "TJ_RESTARTS=$_r ;; esac\n"
    "\tcase \"$_u\" in [0-9] | [0-9][0-9] | [0-9][0-9][0-9] | [0-9][0-9][0-9][0-9]) TJ_RUNS=$_u ;; "
    "esac\n"
    "\t_list=$(printf '%s' \"$_s\" | sed -n 's/.*\"marked\":\\[\\([^]]*\\)\\].*/\\1/p' | head -n "
    "1)\n"
    "\t_ifs=$IFS\n"
    "\tIFS=,\n"
    "\tfor _x in $_list; do # each item whole: \"a b\" is no node, not two\n"
    "\t\t_x=${_x#\\\"}\n"
    "\t\t_x=${_x%\\\"}\n"
    "\t\ttj_safe_word \"$_x\" && TJ_MARKED=\"$TJ_MARKED${TJ_MARKED:+ }$_x\"\n"
    "\tdone\n"
    "\tIFS=$_ifs\n"
    "}\n"
    "\n"
    "# tj_tf_config I: sets TF_CONFIG to worker I's, as engine/worker_env.c writes it\n"
    "tj_tf_config() {\n"
    "\t_c= _first=0\n"
    "\t[ \"$TJ_STYLE\" = tf_ps ] && _first=1\n"
    "\t_k=$_first\n"
    "\t_w=\n"
    "\twhile [ \"$_k\" -lt \"$TJ_REPLICAS\" ]; do\n"
    "\t\teval \"_a=\\$TJ_ADDR_$_k\"\n"
    "\t\t_w=\"$_w${_w:+,}\\\"$_a:$((TJ_MASTER_PORT + _k))\\\"\"\n"
    "\t\t_k=$((_k + 1))\n"
    "\tdone\n"
    "\tif [ \"$TJ_STYLE\" = tf_ps ]; then\n"
    "\t\t_c=\"{\\\"cluster\\\":{\\\"ps\\\":[\\\"$TJ_ADDR_0:$TJ_MASTER_PORT\\\"]\"\n"
    "\t\t[ \"$TJ_REPLICAS\" -gt 1 ] && _c=\"$_c,\\\"worker\\\":[$_w]\"\n"
    "\t\tif [ \"$1\" = 0 ]; then "
    "_c=\"$_c},\\\"task\\\":{\\\"type\\\":\\\"ps\\\",\\\"index\\\":0}}\"; else\n"
    "\t\t\t_c=\"$_c},\\\"task\\\":{\\\"type\\\":\\\"worker\\\",\\\"index\\\":$(($1 - 1))}}\"\n"
    "\t\tfi\n"
    "\telse\n"
    "\t\t_c=\"{\\\"cluster\\\":{\\\"worker\\\":[$_w]},\\\"task\\\":{\\\"type\\\":\\\"worker\\\","
    "\\\"index\\\":$1}}\"\n"
    "\tfi\n"
    "\tTF_CONFIG=$_c\n"
    "}\n"
    "\n"
    "# tj_worker_env I: exports the variables worker I starts with (engine/worker_env.h's list)\n"
    "tj_worker_env() {\n"
    "\texport ECP_JOB_NAME=\"$TJ_JOB\"\n"
    "\tcase \"$TJ_STYLE\" in\n"
    "\tpytorch)\n"
    "\t\texport MASTER_ADDR=\"$TJ_ADDR_0\" MASTER_PORT=\"$TJ_MASTER_PORT\" "
    "WORLD_SIZE=\"$TJ_REPLICAS\"\n"
    "\t\texport RANK=\"$1\" NODE_RANK=\"$1\" LOCAL_RANK=0\n"
    "\t\t;;\n"
    "\ttf_ps | tf) tj_tf_config \"$1\" && export TF_CONFIG ;;\n"
    "\tmpi) export TRAINJOB_HOSTFILE=\"$TJ_JOBDIR/hostfile\" "
    "OMPI_MCA_orte_default_hostfile=\"$TJ_JOBDIR/hostfile\" ;;\n"
    "\tesac\n"
    "\teval \"TRAINJOB_WORKER_NAME=\\$TJ_NAME_$1\"\n"
    "\texport TRAINJOB_WORKER_NAME\n"
    "\ttj_user_env\n"
    "}\n"
    "\n"
    "# tj_outcome I GEN MARK RC: what ended worker I's step, from srun's exit RC, srun's own\n"
    "# errors and the step wrapper's records (TJ_LAUNCH: MARK.start once the worker is\n"
    "# started, MARK.exit its exit code, MARK.fail why it could not start; with TJ_LOCAL\n"
    "# only MARK.fail: RC is the subshell's that became the worker). Sets\n"
    "# TJ_O_KIND: exit (the worker exited TJ_O_RC), killed (the step was cancelled or\n"
    "# killed outside the supervisor: srun may then say 0; it counts as 137, as a\n"
    "# worker killed outside trainjobd does) or nostart (it never ran:\n"
    "# $TJ_RUN/why.I.GEN says why, in srun's or the wrapper's words)\n"
    "tj_outcome() {\n"
    "\tTJ_O_RC=$4 TJ_O_KIND=exit\n"
    "\t_why=\"$TJ_RUN/why.$1.$2\"\n"
    "\tif [ -f \"$3.fail\" ]; then\n"
    "\t\tTJ_O_KIND=nostart\n"
    "\t\thead -c 300 \"$3.fail\" | LC_ALL=C tr -cd '[:print:]' > \"$_why\"\n"
    "\telif [ \"$TJ_LOCAL\" = 1 ]; then\n"
    "\t\t# past its checks the subshell execs the worker: RC is the worker's\n"
    "\t\t:\n"
    "\telif [ ! -f \"$3.start\" ]; then\n"
    "\t\tif [ \"$4\" = 0 ]; then # cancelled before the worker started\n"
    "\t\t\tTJ_O_KIND=killed TJ_O_RC=137\n"
    "\t\telse\n"
    "\t\t\tTJ_O_KIND=nostart\n"
    "\t\t\tgrep '^srun: error: ' \"$TJ_RUN/srun.$1.$2\" 2>/dev/null | grep -v ': task [0-9]*: ' | "
    "tail -n 1 |\n"
    "\t\t\t\tsed 's/^srun: error: //' | LC_ALL=C tr -cd '[:print:]' | cut -c1-300 > \"$_why\"\n"
    "\t\t\tif [ ! -s \"$_why\" ] && [ \"$TJ_LOCAL\" = 1 ]; then\n"
    "\t\t\t\techo \"its launch exited $4 before the worker ran\" > \"$_why\"\n"
    "\t\t\telif [ ! -s \"$_why\" ]; then\n"
    "\t\t\t\techo \"srun exited $4 before the worker ran\" > \"$_why\"\n"
    "\t\t\tfi\n"
    "\t\tfi\n"
    "\telse\n"
    "\t\t_x=\n"
    "\t\t[ -f \"$3.exit\" ] && read -r _x < \"$3.exit\"\n"
    "\t\tcase \"$_x\" in\n"
    "\t\t[0-9] | [0-9][0-9] | [0-9][0-9][0-9]) [ \"$_x\" -le 255 ] && TJ_O_RC=$_x ;;\n"
    "\t\t*) # the wrapper did not see the worker end: its step was killed under it\n"
    "\t\t\tTJ_O_KIND=killed\n"
    "\t\t\t[ \"$4\" -gt 128 ] || TJ_O_RC=137\n"
    "\t\t\t;;\n"
    "\t\tesac\n"
    "\t\t# srun says so when Slurm cancelled the step (the wrapper may have seen the\n"
    "\t\t# worker die first): killed, never a success\n"
    "\t\tif [ -s \"$TJ_RUN/srun.$1.$2\" ] && grep -q '^srun: Job step aborted' "
    "\"$TJ_RUN/srun.$1.$2\"; then\n"
    "\t\t\tTJ_O_KIND=killed\n"
    "\t\t\t[ \"$TJ_O_RC\" -gt 128 ] || TJ_O_RC=137\n"
    "\t\tfi\n"
    "\tfi\n"
    "}\n"
    "\n"
    "# tj_start I: starts worker I in the background: with TJ_LOCAL in this batch step\n"
    "# (its own session and process group: TJ_PID_I), else as a srun step whose watcher reports\n"
    "# \"I GEN STATUS\" to the fifo\n"
    "tj_start() {\n"
    "\teval \"_name=\\$TJ_NAME_$1 _node=\\$TJ_NODE_$1 _gen=\\$TJ_GEN_$1\"\n"
    "\t_gen=$((_gen + 1))\n"
    "\teval \"TJ_GEN_$1=$_gen TJ_PHASE_$1=Running TJ_EXIT_$1= TJ_SIG_$1= TJ_RULE_$1= TJ_ENDED_$1= "
    "TJ_STARTED_$1=\\$TJ_T TJ_T0_$1=\\$TJ_S TJ_LIVE_$1=1\"\n"
    "\teval \"TJ_ATTEMPT_$1=\\$((TJ_ATTEMPT_$1 + 1))\"\n"
    "\teval \"_at=\\$TJ_ATTEMPT_$1 _st=\\$TJ_STARTED_$1\"\n"
    "\ttj_record \"$1\"\n"
    "\t# as trainjobd, each attempt's output follows a line that says which\n"
    "\t_ah=started\n"
    "\t[ \"$_at\" -gt 1 ] && _ah=restarted\n"
    "\tprintf -- '--- %s: %s %s on %s (attempt %d) ---\\n' \"$_st\" \"$_name\" \"$_ah\" \"$_node\" "
    "\"$_at\" >> \"$TJ_JOBDIR/logs/$_name.log\"\n"
    "\t_mk=\"$TJ_JOBDIR/launch/$_name\"\n"
    "\tif [ -e \"$_mk.start\" ] || [ -e \"$_mk.exit\" ] || [ -e \"$_mk.fail\" ]; then\n"
    "\t\trm -f \"$_mk.start\" \"$_mk.exit\" \"$_mk.fail\"\n"
    "\tfi\n"
    "\tif [ \"$TJ_LOCAL\" = 1 ]; then\n"
    "\t\t(\n"
    "\t\t\ttj_worker_env \"$1\"\n"
    "\t\t\ttj_exec \"$_mk\"\n"
    "\t\t) </dev/null >> \"$TJ_JOBDIR/logs/$_name.log\" 2>&1 &\n"
    "\t\teval \"TJ_PID_$1=\\$!\"\n"
    "\t\treturn 0\n"
    "\tfi\n"
    "\t(\n"
    "\t\ttrap 'kill -TERM \"$_spid\" 2>/dev/null' TERM\n"
    "\t\ttj_worker_env \"$1\"\n"
    "\t\ttj_srun \"$_mk\" --nodes=1 --ntasks=1 -w \"$_node\" --job-name=\"$_name\" \\\n"
    "\t\t\t--output=\"$TJ_JOBDIR/logs/$_name.log\" --open-mode=append </dev/null "
    "2>\"$TJ_RUN/srun.$1.$_gen\" &\n"
    "\t\t_spid=$!\n"
    "\t\twait \"$_spid\"\n"
    "\t\t_rc=$?\n"
    "\t\twhile kill -0 \"$_spid\" 2>/dev/null; do # a trapped signal ended the first wait\n"
    "\t\t\twait \"$_spid\"\n"
    "\t\t\t_rc=$?\n"
    "\t\tdone\n"
    "\t\ttj_outcome \"$1\" \"$_gen\" \"$_mk\" \"$_rc\"\n"
    "\t\t[ -s \"$TJ_RUN/srun.$1.$_gen\" ] && cat \"$TJ_RUN/srun.$1.$_gen\" >&2\n"
    "\t\t: > \"$TJ_RUN/done.$1.$_gen\"\n"
    "\t\techo \"$1 $_gen $TJ_O_RC $TJ_O_KIND\" >&3\n"
    "\t) &\n"
    "\teval \"TJ_PID_$1=\\$!\"\n"
    "}\n"
    "\n"
    "# tj_next: the next worker that ended: sets _i _g _rc _kind (1: none yet)\n"
    "tj_next() {\n"
    "\tif [ \"$TJ_LOCAL\" != 1 ]; then\n"
    "\t\tread -r _i _g _rc _kind <&3\n"
    "\t\treturn\n"
    "\tfi\n"
    "\t_i=0 _g=$TJ_GEN_0\n"
    "\twait \"$TJ_PID_0\"\n"
    "\t_rc=$?\n"
    "\twhile kill -0 \"$TJ_PID_0\" 2>/dev/null; do # a trapped signal ended the first wait\n"
    "\t\twait \"$TJ_PID_0\"\n"
    "\t\t_rc=$?\n"
    "\tdone\n"
    "\t# no start or exit record: this process saw both (two files fewer on the shared\n"
    "\t# directory a start), only the checks' MARK.fail\n"
    "\ttj_outcome 0 \"$_g\" \"$TJ_JOBDIR/launch/$TJ_NAME_0\" \"$_rc\"\n"
    "\t_rc=$TJ_O_RC _kind=$TJ_O_KIND\n"
    "}\n"
    "\n"
    "# tj_stop_local: ends the worker of this batch step as trainjobd does: SIGTERM\n"
    "# to its process group, TJ_GRACE seconds, then SIGKILL to what is left of it\n"
    "tj_stop_local() {\n"
    "\tkill -TERM -\"$TJ_PID_0\" 2>/dev/null\n"
    "\ttj_clock\n"
    "\t_end=$((TJ_S + TJ_GRACE))\n"
    "\twhile kill -0 -\"$TJ_PID_0\" 2>/dev/null && [ \"$TJ_S\" -lt \"$_end\" ]; do\n"
    "\t\t# the worker ended (a zombie, or reaped by the shell's wait for a sleep): its\n"
    "\t\t# group may still hold children\n"
    "\t\tif { read -r _ps <\"/proc/$TJ_PID_0/stat\"; } 2>/dev/null; then\n"
    "\t\t\tcase \"${_ps##*) }\" in Z*) break ;; esac\n"
    "\t\telif [ -d /proc/self ]; then\n"
    "\t\t\tbreak\n"
    "\t\tfi\n"
    "\t\tsleep 0.2\n"
    "\t\ttj_clock\n"
    "\tdone\n"
    "\tkill -KILL -\"$TJ_PID_0\" 2>/dev/null\n"
    "\twait \"$TJ_PID_0\" 2>/dev/null\n"
    "\ttj_clock\n"
    "\tTJ_LIVE_0=0 TJ_GEN_0=$((TJ_GEN_0 + 1)) TJ_ALIVE=$((TJ_ALIVE - 1))\n"
    "}\n"
    "\n"
    "# tj_steps NAME...: the ids of this job's steps named NAME… (each worker's steps carry its "
    "name)\n"
    "tj_steps() {\n"
    "\tsqueue -h -s -j \"$SLURM_JOB_ID\" -o '%i %j' 2>/dev/null | while read -r _sid _sn; do\n"
    "\t\tcase \"$_sid\" in '' | *[!0-9.]*) continue ;; esac\n"
    "\t\tfor _w in \"$@\"; do [ \"$_sn\" = \"$_w\" ] && echo \"$_sid\"; done\n"
    "\tdone\n"
    "}\n"
    "\n"
    "# tj_stop_all: ends every live worker as trainjobd does: SIGTERM to every\n"
    "# process of its step, TJ_GRACE seconds, then SIGKILL (scancel signals the\n"
    "# whole step; signalling srun alone leaves the script's children running and\n"
    "# the step holding its node); then waits for their watchers\n"
    "tj_stop_all() {\n"
    "\tif [ \"$TJ_LOCAL\" = 1 ]; then\n"
    "\t\t[ \"$TJ_LIVE_0\" = 1 ] && tj_stop_local\n"
    "\t\treturn 0\n"
    "\tfi\n"
    "\t_k=0\n"
    "\t_names=\n"
    "\twhile [ \"$_k\" -lt \"$TJ_REPLICAS\" ]; do\n"
    "\t\teval \"_l=\\$TJ_LIVE_$_k _p=\\$TJ_PID_$_k _n=\\$TJ_NAME_$_k\"\n"
    "\t\tif [ \"$_l\" = 1 ]; then\n"
    "\t\t\t_names=\"$_names $_n\"\n"
    "\t\t\tkill -TERM \"$_p\" 2>/dev/null # a srun still waiting to create its step\n"
    "\t\tfi\n"
    "\t\t_k=$((_k + 1))\n"
    "\tdone\n"
    "\t[ -n \"$_names\" ] || return 0\n"
    "\t# shellcheck disable=SC2086 # the names and ids are single words\n"
    "\t_ids=$(tj_steps $_names)\n"
    "\t# shellcheck disable=SC2086\n"
    "\t[ -n \"$_ids\" ] && scancel --quiet --signal=TERM $_ids\n"
    "\ttj_clock\n"
    "\t_end=$((TJ_S + TJ_GRACE))\n"
    "\twhile :; do\n"
    "\t\t_left=0\n"
    "\t\t_k=0\n"
    "\t\twhile [ \"$_k\" -lt \"$TJ_REPLICAS\" ]; do\n"
    "\t\t\teval \"_l=\\$TJ_LIVE_$_k _g=\\$TJ_GEN_$_k\"\n"
    "\t\t\t[ \"$_l\" = 1 ] && [ ! -e \"$TJ_RUN/done.$_k.$_g\" ] && _left=1\n"
    "\t\t\t_k=$((_k + 1))\n"
    "\t\tdone\n"
    "\t\t[ \"$_left\" = 0 ] && break\n"
    "\t\tif [ \"$TJ_S\" -ge \"$_end\" ]; then\n"
    "\t\t\t# shellcheck disable=SC2086\n"
    "\t\t\t_ids=$(tj_steps $_names)\n"
    "\t\t\t# shellcheck disable=SC2086\n"
    "\t\t\t[ -n \"$_ids\" ] && scancel --quiet $_ids\n"
    "\t\t\tbreak\n"
    "\t\tfi\n"
    "\t\tsleep 0.2\n"
    "\t\ttj_clock\n"
    "\tdone\n"
    "\t_k=0\n"
    "\twhile [ \"$_k\" -lt \"$TJ_REPLICAS\" ]; do\n"
    "\t\teval \"_l=\\$TJ_LIVE_$_k _p=\\$TJ_PID_$_k\"\n"
    "\t\tif [ \"$_l\" = 1 ]; then\n"
    "\t\t\twait \"$_p\" 2>/dev/null\n"
    "\t\t\teval \"TJ_LIVE_$_k=0 TJ_GEN_$_k=\\$((TJ_GEN_$_k + 1))\" # its report is stale now\n"
    "\t\t\tTJ_ALIVE=$((TJ_ALIVE - 1))\n"
    "\t\tfi\n"
    "\t\t_k=$((_k + 1))\n"
    "\tdone\n"
    "\ttj_clock\n"
    "}\n"
    "\n"
    "tj_start_all() {\n"
    "\t_i=0\n"
    "\t_where=\n"
    "\twhile [ \"$_i\" -lt \"$TJ_REPLICAS\" ]; do\n"
    "\t\teval \"_where=\\\"\\$_where\\${_where:+, }\\$TJ_NAME_$_i on \\$TJ_NODE_$_i\\\"\"\n"
    "\t\t_i=$((_i + 1))\n"
    "\tdone\n"
    "\ttj_event Normal Scheduled SCHEDULED \"\" \"placed: $_where\"\n"
    "\t_i=0\n"
    "\twhile [ \"$_i\" -lt \"$TJ_REPLICAS\" ]; do\n"
    "\t\ttj_start \"$_i\"\n"
    "\t\t_i=$((_i + 1))\n"
    "\tdone\n"
    "\tTJ_ALIVE=$TJ_REPLICAS\n"
    "}\n"
    "\n"
    "# tj_on_signal: stop, cancel, preemption or a requeue: end the steps, record it, exit\n"
    "tj_on_signal() {\n"
    "\ttrap '' TERM INT\n"
    "\ttj_clock\n"
    "\ttj_event Normal Stopping STOPPED \"\" \"the job was stopped by Slurm (cancel, preemption or "
    "requeue); stopping every worker\"\n"
    "\ttj_stop_all\n"
    "\t_k=0\n"
    "\twhile [ \"$_k\" -lt \"$TJ_REPLICAS\" ]; do\n"
    "\t\teval \"[ \\\"\\$TJ_PHASE_$_k\\\" = Running ] && TJ_PHASE_$_k=Failed TJ_SIG_$_k=15 "
    "TJ_ENDED_$_k=\\$TJ_T && tj_record $_k\"\n"
    "\t\t_k=$((_k + 1))\n"
    "\tdone\n"
    "\texit 143\n"
    "}\n"
    "\n"
    "# tj_requeue_away: the job continues without the nodes in TJ_MARKED. Slurm cannot\n"
    "# move a running job, so a detached helper requeues it held, excludes the nodes\n"
    "# once it is pending again and releases it (the sequence slurm_supervisor.test.sh\n"
    "# proves); the supervisor stops the workers and waits to be ended by the requeue. Returns\n"
    "# (1) only when the requeue did not happen: within 60 s, or the helper said so.\n"
    "tj_requeue_away() {\n"
    "\t_ex=$(printf '%s' \"$TJ_MARKED\" | tr ' ' ',')\n"
    "\t# double fork: the helper must not be a descendant of the batch shell, which\n"
    "\t# the requeue ends (under proctrack/cgroup Slurm may end it anyway: then the\n"
    "\t# job stays held, and the driver releases it from state.json's marked nodes)\n"
    "\t( setsid sh -c '\n"
    "\t\tid=$1 ex=$2 failed=$3\n"
    "\t\tscontrol requeuehold \"$id\" || { : > \"$failed\"; exit 1; }\n"
    "\t\ti=0\n"
    "\t\twhile [ $i -lt 600 ]; do\n"
    "\t\t\tcase $(scontrol show job -o \"$id\" 2>/dev/null) in *JobState=PENDING*) break ;; esac\n"
    "\t\t\tsleep 0.5\n"
    "\t\t\ti=$((i + 1))\n"
    "\t\tdone\n"
    "\t\tscontrol update JobId=\"$id\" ExcNodeList=\"$ex\"\n"
    "\t\tscontrol release \"$id\"' tj-requeue \"$SLURM_JOB_ID\" \"$_ex\" "
    "\"$TJ_RUN/requeue-failed.$TJ_RUNS\" \\\n"
    "\t\t</dev/null >>\"$TJ_JOBDIR/requeue.log\" 2>&1 & )\n"
    "\ttj_stop_all\n"
    "\t_end=$((TJ_S + 60))\n"
    "\twhile [ \"$TJ_S\" -lt \"$_end\" ] && [ ! -e \"$TJ_RUN/requeue-failed.$TJ_RUNS\" ]; do\n"
    "\t\tsleep 0.5\n"
    "\t\ttj_clock\n"
    "\tdone\n"
    "\t_why=$(tail -n 1 \"$TJ_JOBDIR/requeue.log\" 2>/dev/null | LC_ALL=C tr -cd '[:print:]' | cut "
    "-c1-200)\n"
    "\ttj_event Warning RequeueFailed NODE_MARKED \"\" \\\n"
    "\t\t\"could not requeue the job away from $_ex${_why:+ ($_why)}; restarting it on the same "
    "nodes\"\n"
    "\treturn 1\n"
    "}\n"
    "\n"
    "# tj_backoff I: the crash-loop back-off before a restart for worker I, as trainjobd's:\n"
    "# the first restart of a loop of quick failures is at once, the next waits TJ_DELAY\n"
    "# seconds and each next twice the last, up to TJ_DELAY_MAX; a run of TJ_RESET seconds\n"
    "# or more starts a new loop\n"
    "tj_backoff() {\n"
    "\teval \"_t0=\\$TJ_T0_$1 _name=\\$TJ_NAME_$1\"\n"
    "\tif [ $((TJ_S - _t0)) -ge \"$TJ_RESET\" ]; then TJ_LOOPS=1; else TJ_LOOPS=$((TJ_LOOPS + 1)); "
    "fi\n"
    "\t[ \"$TJ_LOOPS\" -gt 1 ] || return 0\n"
    "\t_d=$TJ_DELAY _k=2\n"
    "\twhile [ \"$_k\" -lt \"$TJ_LOOPS\" ] && [ \"$_d\" -lt \"$TJ_DELAY_MAX\" ]; do\n"
    "\t\t_d=$((_d * 2)) _k=$((_k + 1))\n"
    "\tdone\n"
    "\t[ \"$_d\" -le \"$TJ_DELAY_MAX\" ] || _d=$TJ_DELAY_MAX\n"
    "\t_ds=${_d}s\n"
    "\t[ \"$_d\" -ge 60 ] && _ds=$((_d / 60))m && [ $((_d % 60)) -gt 0 ] && _ds=$_ds$((_d % 60))s\n"
    "\ttj_event Normal BackOff WAITING \"$_name\" \"back-off $_ds restarting failed $_name "
    "(restart $TJ_RESTARTS)\"\n"
    "\tsleep \"$_d\" &\n"
    "\twait $! # a stop (TERM) ends the wait at once\n"
    "\ttj_clock\n"
    "}\n"
    "\n"
    "# tj_decided I CODE: applies the fault policy to worker I that exited CODE (1..255)\n"
    "tj_decided() {\n"
    "\teval \"_name=\\$TJ_NAME_$1 _node=\\$TJ_NODE_$1\"\n"
    "\ttj_decide \"$2\" \"$TJ_RESTARTS\" \"$_name\"\n"
    "\teval \"TJ_RULE_$1=\\$TJ_D_RULEDESC\"\n"
    "\ttj_last \"$1\" \"$2\" decided\n"
    "\t_extra=\"\\\"exit_code\\\":$2,\\\"action\\\":\\\"$TJ_D_ACTION\\\",\\\"restarts_used\\\":$TJ_"
    "D_USED,\\\"restart_limit\\\":$TJ_LIMIT,\\\"node\\\":\\\"$_node\\\"\"\n"
    "\t[ \"$TJ_D_RULE\" -gt 0 ] && _extra=\"$_extra,\\\"rule\\\":$TJ_D_RULE\"\n"
    "\tcase \"$TJ_D_OUTCOME\" in\n"
    "\tRESTART_POD) _reason=RestartPod ;;\n"
    "\tRESTART_JOB) _reason=RestartJob ;;\n"
    "\t*) _reason=FailJob ;;\n"
    "\tesac\n"
    "\t[ \"$TJ_D_LIMIT_REACHED\" = 1 ] && _reason=BackoffLimitExceeded\n"
    "\tTJ_RESTARTS=$TJ_D_USED\n"
    "\tif [ \"$TJ_D_MARK\" = 1 ]; then\n"
    "\t\tcase \" $TJ_MARKED \" in *\" $_node \"*) ;; *) TJ_MARKED=\"$TJ_MARKED${TJ_MARKED:+ "
    "}$_node\" ;; esac\n"
    "\tfi\n"
    "\ttj_save_state\n"
    "\ttj_record \"$1\"\n"
    "\ttj_event Warning \"$_reason\" FAULT \"$_name\" \"$TJ_D_TEXT\" \"$_extra\"\n"
    "\tcase \"$TJ_D_OUTCOME\" in\n"
    "\tRESTART_POD)\n"
    "\t\tif [ \"$TJ_D_MARK\" = 1 ]; then\n"
    "\t\t\ttj_event Warning NodeMarked NODE_MARKED \"$_name\" \"node $_node marked unschedulable "
    "for this job\" \"\\\"node\\\":\\\"$_node\\\"\"\n"
    "\t\tfi\n"
    "\t\teval \"TJ_RESTARTS_$1=\\$((TJ_RESTARTS_$1 + 1))\"\n"
    "\t\ttj_backoff \"$1\"\n"
    "\t\tif [ \"$TJ_D_MARK\" = 1 ]; then\n"
    "\t\t\ttj_requeue_away # returns when it failed: every worker was stopped\n"
    "\t\t\ttj_start_all\n"
    "\t\telse\n"
    "\t\t\ttj_start \"$1\"\n"
    "\t\t\tTJ_ALIVE=$((TJ_ALIVE + 1))\n"
    "\t\tfi\n"
    "\t\t;;\n"
    "\tRESTART_JOB) # counted in the job's restarts, not in each worker's (as trainjobd)\n"
    "\t\ttj_stop_all\n"
    "\t\ttj_backoff \"$1\"\n"
    "\t\tif [ \"$TJ_D_MARK\" = 1 ]; then\n"
    "\t\t\ttj_event Warning NodeMarked NODE_MARKED \"$_name\" \"node $_node marked unschedulable "
    "for this job\" \"\\\"node\\\":\\\"$_node\\\"\"\n"
    "\t\t\ttj_requeue_away\n"
    "\t\tfi\n"
    "\t\ttj_start_all\n"
    "\t\t;;\n"
    "\t*)\n"
    "\t\ttj_stop_all\n"
    "\t\ttj_event Warning Failed STATE \"\" \"job failed: $_name exited $2\"\n"
    "\t\texit \"$2\"\n"
    "\t\t;;\n"
    "\tesac\n"
    "}\n"
    "\n"
    "# tj_start_failed I WHY: worker I never ran (srun could not launch its step, or\n"
    "# the launcher is missing on the node): as trainjobd says \"could not start\n"
    "# WORKER: WHY\" and fails the job, no fault rule applies\n"
    "tj_start_failed() {\n"
    "\teval \"_name=\\$TJ_NAME_$1\"\n"
    "\teval \"TJ_PHASE_$1=Failed TJ_EXIT_$1= TJ_SIG_$1=\"\n"
    "\ttj_record \"$1\"\n"
    "\ttj_event Warning FailedStart WORKER \"$_name\" \"could not start $_name: ${2:-srun "
    "failed}\"\n"
    "\ttj_stop_all\n"
    "\ttj_event Warning Failed STATE \"\" \"job failed: could not start $_name: ${2:-srun "
    "failed}\"\n"
    "\texit 1\n"
    "}\n"
    "\n"
    "# tj_nodes: TJ_NODE_i and TJ_ADDR_i of the allocation's first TJ_REPLICAS nodes,\n"
    "# in Slurm's order, from one scontrol call (exits when a name is unusable or\n"
    "# there are too few). A worker in this batch step is its own master: its\n"
    "# address is 127.0.0.1, as trainjobd gives a lone worker, and no scontrol runs\n"
    "tj_nodes() {\n"
    "\tif [ \"$TJ_LOCAL\" = 1 ]; then\n"
    "\t\t_n=${SLURMD_NODENAME:-$SLURM_JOB_NODELIST}\n"
    "\t\ttj_safe_word \"$_n\" || { echo \"trainjob supervisor: node name '$_n' is not usable\" "
    ">&2; exit 2; }\n"
    "\t\tTJ_NODE_0=$_n TJ_ADDR_0=127.0.0.1\n"
    "\t\treturn 0\n"
    "\tfi\n"
    "\tcase \"$SLURM_JOB_NODELIST\" in\n"
    "\t*[\\[]*) _nodes=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\") || exit 2 ;;\n"
    "\t*) _nodes=$SLURM_JOB_NODELIST ;;\n"
    "\tesac\n"
    "\t_info=$(scontrol show node -o \"$SLURM_JOB_NODELIST\" 2>/dev/null)\n"
    "\t_addrs=' '\n"
    "\t_ifs=$IFS\n"
    "\tIFS=$TJ_NL\n"
    "\tfor _l in $_info; do\n"
    "\t\tcase \"$_l\" in NodeName=*' NodeAddr='*) ;; *) continue ;; esac\n"
    "\t\t_n=${_l#NodeName=}\n"
    "\t\t_n=${_n%% *}\n"
    "\t\t_a=${_l#* NodeAddr=}\n"
    "\t\t_a=${_a%% *}\n"
    "\t\ttj_safe_word \"$_n\" && tj_safe_word \"$_a\" && _addrs=\"$_addrs$_n=$_a \"\n"
    "\tdone\n"
    "\tIFS=\"$_ifs,\"\n"
    "\t_k=0\n"
    "\tfor _n in $_nodes; do\n"
    "\t\tIFS=$_ifs\n"
    "\t\t[ \"$_k\" -lt \"$TJ_REPLICAS\" ] || break\n"
    "\t\ttj_safe_word \"$_n\" || { echo \"trainjob supervisor: node name '$_n' is not usable\" "
    ">&2; exit 2; }\n"
    "\t\t_a=\n"
    "\t\tcase \"$_addrs\" in *\" $_n=\"*) _a=${_addrs#* \"$_n\"=} _a=${_a%% *} ;; esac\n"
    "\t\ttj_safe_word \"$_a\" || _a=$_n\n"
    "\t\teval \"TJ_NODE_$_k=\\$_n TJ_ADDR_$_k=\\$_a\"\n"
    "\t\t_k=$((_k + 1))\n"
    "\tdone\n"
    "\tIFS=$_ifs\n"
    "\tif [ \"$_k\" -lt \"$TJ_REPLICAS\" ]; then\n"
    "\t\ttj_event Warning Failed STATE \"\" \"job failed: Slurm gave $_k node(s) for $TJ_REPLICAS "
    "workers\"\n"
    "\t\texit 2\n"
    "\tfi\n"
    "}\n"
    "\n"
    "tj_main() {\n"
    "\t[ -n \"${SLURM_JOB_ID:-}\" ] && [ -n \"${SLURM_JOB_NODELIST:-}\" ] || {\n"
    "\t\techo \"trainjob supervisor: not inside a Slurm job (no SLURM_JOB_ID/SLURM_JOB_NODELIST)\" "
    ">&2\n"
    "\t\texit 2\n"
    "\t}\n"
    "\ttj_clock\n"
    "\t# one worker runs in this batch step itself (its own process group), unless\n"
    "\t# its launcher is srun options or there is no setsid to give it that group\n"
    "\t[ \"$TJ_REPLICAS\" = 1 ] && [ \"$TJ_LOCAL\" = 1 ] && command -v setsid >/dev/null 2>&1 || "
    "TJ_LOCAL=0\n"
    "\tif [ \"$TJ_LOCAL\" != 1 ]; then\n"
    "\t\tTJ_SRUN=$(command -v srun) || { echo \"trainjob supervisor: no srun on PATH\" >&2; exit "
    "2; }\n"
    "\tfi\n"
    "\tif [ ! -d \"$TJ_JOBDIR/logs\" ] || [ ! -d \"$TJ_JOBDIR/workers\" ] || [ ! -d "
    "\"$TJ_JOBDIR/launch\" ]; then\n"
    "\t\tmkdir -p \"$TJ_JOBDIR/logs\" \"$TJ_JOBDIR/workers\" \"$TJ_JOBDIR/launch\" || exit 2\n"
    "\tfi\n"
    "\tif [ \"$TJ_LOCAL\" = 1 ]; then\n"
    "\t\tTJ_RUN=$TJ_JOBDIR/launch\n"
    "\telse\n"
    "\t\tTJ_RUN=$(mktemp -d \"${TMPDIR:-/tmp}/trainjob-sup.XXXXXX\") || exit 2\n"
    "\t\ttrap 'rm -rf \"$TJ_RUN\"' EXIT\n"
    "\t\tmkfifo \"$TJ_RUN/fifo\" || exit 2\n"
    "\t\texec 3<>\"$TJ_RUN/fifo\"\n"
    "\tfi\n"
    "\ttj_load_state\n"
    "\tTJ_RUNS=$((TJ_RUNS + 1))\n"
    "\ttj_nodes\n"
    "\t# MASTER_PORT (worker i listens on MASTER_PORT + i): apart for jobs sharing a host\n"
    "\tTJ_MASTER_PORT=$((20000 + (SLURM_JOB_ID % 625) * 64))\n"
    "\t_hosts=\n"
    "\t_k=0\n"
    "\twhile [ \"$_k\" -lt \"$TJ_REPLICAS\" ]; do\n"
    "\t\teval \"_hosts=\\\"\\$_hosts\\$TJ_ADDR_$_k slots=1\\$TJ_NL\\\"\"\n"
    "\t\teval \"TJ_GEN_$_k=0 TJ_LIVE_$_k=0 TJ_PHASE_$_k=Pending TJ_RESTARTS_$_k=0 TJ_EXIT_$_k= "
    "TJ_SIG_$_k= TJ_RULE_$_k= TJ_STARTED_$_k= TJ_ENDED_$_k= TJ_T0_$_k=0 TJ_ATTEMPT_$_k=0 "
    "TJ_LAST_$_k=\"\n"
    "\t\t# a worker's restarts count across requeues, as the job's do (its last record)\n"
    "\t\teval \"_f=\\\"\\$TJ_JOBDIR/workers/\\$TJ_NAME_$_k.json\\\"\"\n"
    "\t\tif [ -f \"$_f\" ]; then\n"
    "\t\t\t_r=$(head -c 4096 \"$_f\" 2>/dev/null | sed -n "
    "'s/.*\"restarts\":\\([0-9]\\{1,4\\}\\),.*/\\1/p')\n"
    "\t\t\tcase \"$_r\" in [0-9] | [0-9][0-9] | [0-9][0-9][0-9] | [0-9][0-9][0-9][0-9]) eval "
    "\"TJ_RESTARTS_$_k=$_r\" ;; esac\n"
    "\t\t\t_r=$(head -c 4096 \"$_f\" 2>/dev/null | sed -n "
    "'s/.*\"attempt\":\\([0-9]\\{1,6\\}\\)}.*/\\1/p')\n"
    "\t\t\tcase \"$_r\" in [0-9]*) eval \"TJ_ATTEMPT_$_k=$_r\" ;; esac\n"
    "\t\t\ttj_read_last \"$_f\"\n"
    "\t\t\teval \"TJ_LAST_$_k=\\$TJ_R\"\n"
    "\t\tfi\n"
    "\t\teval \"_n=\\$TJ_NODE_$_k\"\n"
    "\t\tcase \" $TJ_MARKED \" in *\" $_n \"*)\n"
    "\t\t\ttj_event Warning NodeMarked NODE_MARKED \"\" \"node $_n is marked unschedulable for "
    "this job, but Slurm placed the job on it\" \"\\\"node\\\":\\\"$_n\\\"\" ;;\n"
    "\t\tesac\n"
    "\t\t_k=$((_k + 1))\n"
    "\tdone\n"
    "\t# one write: the workers that read it start after it; as on trainjobd, only an\n"
    "\t# MPI job's workers are given it\n"
    "\t[ \"$TJ_STYLE\" = mpi ] && printf '%s' \"$_hosts\" > \"$TJ_JOBDIR/hostfile\"\n"
    "\ttj_save_state\n"
    "\ttrap tj_on_signal TERM INT\n"
    "\tTJ_LOOPS=0\n"
    "\ttj_start_all\n"
    "\ttj_event Normal Running STATE \"\" \"QUEUEING → RUNNING\" "
    "\"\\\"state\\\":\\\"RUNNING\\\"\"\n"
    "\twhile [ \"$TJ_ALIVE\" -gt 0 ]; do\n"
    "\t\ttj_next || continue\n"
    "\t\teval \"_cur=\\$TJ_GEN_$_i\"\n"
    "\t\t[ \"$_g\" = \"$_cur\" ] || continue # a step ended by a restart or a stop\n"
    "\t\t# Slurm signals the steps and this shell together when it preempts, requeues\n"
    "\t\t# or cancels the job, and a step may end first: its end is the job's stop,\n"
    "\t\t# not a worker's failure, once that TERM reaches tj_on_signal (wait returns to\n"
    "\t\t# a trap at once). A step ended alone is decided 2 s later.\n"
    "\t\tif [ \"$_kind\" = killed ]; then\n"
    "\t\t\tsleep 2 &\n"
    "\t\t\twait $!\n"
    "\t\tfi\n"
    "\t\ttj_clock\n"
    "\t\tTJ_ALIVE=$((TJ_ALIVE - 1))\n"
    "\t\teval \"TJ_LIVE_$_i=0 TJ_ENDED_$_i=\\$TJ_T TJ_EXIT_$_i=\\$_rc _name=\\$TJ_NAME_$_i\"\n"
    "\t\ttj_meaning \"$_rc\"\n"
    "\t\t_m=$TJ_M\n"
    "\t\tif [ \"$_rc\" -gt 128 ]; then eval \"TJ_SIG_$_i=$((_rc - 128))\"; fi\n"
    "\t\tif [ \"$_rc\" = 0 ]; then\n"
    "\t\t\teval \"TJ_PHASE_$_i=Succeeded\"\n"
    "\t\t\ttj_last \"$_i\" 0\n"
    "\t\t\ttj_record \"$_i\"\n"
    "\t\t\ttj_event Normal WorkerSucceeded WORKER \"$_name\" \"$_name exited 0\" "
    "\"\\\"exit_code\\\":0\"\n"
    "\t\t\tcontinue\n"
    "\t\tfi\n"
    "\t\teval \"TJ_PHASE_$_i=Failed\"\n"
    "\t\tif [ \"$_kind\" = nostart ]; then\n"
    "\t\t\ttj_start_failed \"$_i\" \"$(cat \"$TJ_RUN/why.$_i.$_g\" 2>/dev/null)\"\n"
    "\t\tfi\n"
    "\t\t_how=\n"
    "\t\t[ \"$_kind\" = killed ] && _how=\"; its step was cancelled or killed outside the "
    "supervisor\"\n"
    "\t\ttj_event Warning WorkerFailed WORKER \"$_name\" \"$_name exited $_rc${_m:+ ($_m)}$_how\" "
    "\"\\\"exit_code\\\":$_rc\"\n"
    "\t\ttj_decided \"$_i\" \"$_rc\"\n"
    "\tdone\n"
    "\ttj_event Normal Succeeded STATE \"\" \"job succeeded: every worker exited 0\"\n"
    "\texit 0\n"
    "}\n"
    "\n"
    "# tj_decide CODE USED NAME: the fault policy, as api/fault.c decides and words it.\n"
    "# tj_match (above, from the job's rules) sets TJ_D_RULE TJ_D_ACTION TJ_D_MARKABLE "
    "TJ_D_RULEDESC.\n"
    "tj_decide() {\n"
    "\ttj_match \"$1\"\n"
    "\tTJ_D_USED=$2 TJ_D_MARK=0 TJ_D_LIMIT_REACHED=0\n"
    "\tif [ \"$TJ_D_ACTION\" = FAIL_JOB ]; then\n"
    "\t\tTJ_D_OUTCOME=FAIL_JOB\n"
    "\telif [ \"$TJ_LIMIT\" = -1 ] || [ \"$2\" -lt \"$TJ_LIMIT\" ]; then\n"
    "\t\tTJ_D_OUTCOME=$TJ_D_ACTION TJ_D_USED=$(($2 + 1)) TJ_D_MARK=$TJ_D_MARKABLE\n"
    "\telse\n"
    "\t\tTJ_D_OUTCOME=FAIL_JOB TJ_D_LIMIT_REACHED=1\n"
    "\tfi\n"
    "\ttj_meaning \"$1\"\n"
    "\t_dm=$TJ_M\n"
    "\tTJ_D_TEXT=\"$3 exited $1${_dm:+ ($_dm)}: $TJ_D_RULEDESC\"\n"
    "\tif [ \"$TJ_D_LIMIT_REACHED\" = 1 ]; then\n"
    "\t\tTJ_D_TEXT=\"$TJ_D_TEXT, but the restart limit is reached ($2/$TJ_LIMIT); job failed\"\n"
    "\telse\n"
    "\t\tcase \"$TJ_D_OUTCOME\" in\n"
    "\t\tRESTART_POD) TJ_D_TEXT=\"$TJ_D_TEXT; restarting $3\" ;;\n"
    "\t\tRESTART_JOB) TJ_D_TEXT=\"$TJ_D_TEXT; restarting the job\" ;;\n"
    "\t\t*) TJ_D_TEXT=\"$TJ_D_TEXT; job failed\" ;;\n"
    "\t\tesac\n"
    "\t\tif [ \"$TJ_LIMIT\" = -1 ]; then _dl=unlimited; else _dl=$TJ_LIMIT; fi\n"
    "\t\tTJ_D_TEXT=\"$TJ_D_TEXT (restarts $TJ_D_USED/$_dl)\"\n"
    "\tfi\n"
    "\tif [ \"$TJ_D_MARK\" = 1 ]; then TJ_D_TEXT=\"$TJ_D_TEXT; node marked unschedulable for this "
    "job\"; fi\n"
    "}\n"
    "\n"
    "case \"${1:-}\" in\n"
    "--tj-functions) ;; # sourced by the tests: the functions only\n"
    "*) tj_main ;;\n"
    "esac\n";

/*
 * What runs inside each step (argv: tj-worker SCRIPT): the device variables
 * trainjobd sets, from the GPUs Slurm gave the step, then the startup script.
 */
#define DEVICE_VARS                                                                                \
    "NVIDIA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-none}\n"                                       \
    "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-}\n"                                              \
    "export NVIDIA_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES\n"
static const char inner_script[] = DEVICE_VARS "exec /bin/sh -c \"$1\"\n";

/*
 * The step wrapper's checks (argv: MARK NEED LAUNCHER…): says MARK.fail and
 * exits 127 when a directory of NEED (the volumes the worker mounts, one a
 * line) or the launcher's program is not there. The wrapper below begins
 * with them; a worker in the batch step runs them in the supervisor's own
 * subshell (TJ_CHECK), with no wrapper process.
 */
#define LAUNCH_CHECK                                                                               \
    "set -f\n"                                                                                     \
    "m=$1\n"                                                                                       \
    "need=$2\n"                                                                                    \
    "shift 2\n"                                                                                    \
    "w=\n"                                                                                         \
    "what=$1\n"                                                                                    \
    "IFS='\n'\n"                                                                                   \
    "for d in $need; do\n"                                                                         \
    "\tif [ ! -d \"$d\" ]; then what=$d; w='not a directory (a volume of the job)'; break; fi\n"   \
    "done\n"                                                                                       \
    "unset IFS\n"                                                                                  \
    "if [ -z \"$w\" ]; then\n"                                                                     \
    "\tcase \"$1\" in\n"                                                                           \
    "\t*/*) if [ ! -e \"$1\" ]; then w='not found'; elif [ ! -f \"$1\" ] || [ ! -x \"$1\" ]; "     \
    "then w='not an executable file'; fi ;;\n"                                                     \
    "\t*) command -v \"$1\" >/dev/null 2>&1 || w='not found' ;;\n"                                 \
    "\tesac\n"                                                                                     \
    "fi\n"                                                                                         \
    "if [ -n \"$w\" ]; then\n"                                                                     \
    "\tprintf '%s: %s on %s\\n' \"$what\" \"$w\" \"${SLURMD_NODENAME:-the node}\" > \"$m.fail\"\n" \
    "\techo \"trainjob: could not start the worker: $what: $w\" >&2\n"                             \
    "\texit 127\n"                                                                                 \
    "fi\n"

/*
 * The first program of each step (argv: tj-launch MARK NEED LAUNCHER…
 * /bin/sh -c INNER …), on the node (outside any container, but for a
 * launcher of srun options): the checks above, else MARK.start, runs the
 * rest and records its exit code in MARK.exit. A step cancelled from
 * outside ends it before that record; srun's own failures end the step
 * before MARK.start.
 */
static const char launch_wrapper[] =
    LAUNCH_CHECK ": > \"$m.start\"\n"
                 "trap : TERM INT HUP # the worker gets the signal; its exit is recorded\n"
                 "\"$@\"\n"
                 "rc=$?\n"
                 "echo \"$rc\" > \"$m.exit\"\n"
                 "exit \"$rc\"\n";

/*
 * Appends the supervisor's body as a job's script carries it: without the
 * body's own comment lines (this file keeps them) and, but after a line
 * that continues, without its indentation: 28 KB become 20, and every job
 * sends them to slurmrestd, slurmctld stores them and the node's sh parses
 * them. The body has no comment line or indented line inside a quoted
 * text, where leaving them out would change the text.
 */
static void add_body(struct strbuf *out, const char *body)
{
    strbuf_adds(out,
                "# the supervisor: the same for every job (its comments: api/slurm_script.c)\n");
    bool continued = false;
    for (const char *p = body; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
        const char *s = p, *end = p + len;
        while (!continued && s < end && *s == '\t')
            s++;
        if (*s != '#') {
            strbuf_add(out, s, (size_t)(end - s));
            continued = len >= 2 && p[len - 2] == '\\';
        }
        p = end;
    }
}

void slurm_shell_quote(struct strbuf *out, const char *s)
{
    strbuf_addc(out, '\'');
    for (; s && *s; s++) {
        if (*s == '\'')
            strbuf_adds(out, "'\\''");
        else
            strbuf_addc(out, *s);
    }
    strbuf_addc(out, '\'');
}

bool slurm_safe_name(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > max || s[0] == '.' || s[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* A job or workspace name used as one component of the job directory's path. */
static bool safe_component(const char *s)
{
    return slurm_safe_name(s, 253);
}

/*
 * The jobs root: absolute, no control characters, and no '%' or '\' (srun
 * expands them in --output paths), no "/../" component.
 */
static bool safe_root(const char *s)
{
    if (s == NULL || s[0] != '/')
        return false;
    for (const char *p = s; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '%' || *p == '\\')
            return false;
        if (*p == '/' && p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
            return false;
    }
    return true;
}

char *slurm_jobdir_path(const char *jobs_dir, const char *workspace, const char *name)
{
    if (!safe_root(jobs_dir) || !safe_component(workspace) || !safe_component(name))
        return NULL;
    size_t n = strlen(jobs_dir);
    while (n > 1 && jobs_dir[n - 1] == '/')
        n--;
    return xasprintf("%.*s/%s/%s", (int)n, jobs_dir, workspace, name);
}

/* The supervisor's word for the framework's variables (tj_worker_env). */
static const char *framework_style(enum framework fw)
{
    if (framework_pytorch_style(fw))
        return "pytorch";
    if (fw == FRAMEWORK_TENSORFLOW_PS)
        return "tf_ps";
    if (fw == FRAMEWORK_TENSORFLOW)
        return "tf";
    if (fw == FRAMEWORK_MPI)
        return "mpi";
    return "other";
}

/*
 * tj_match CODE: the first rule catching CODE (api/fault.c's rule_matches:
 * an empty list catches any code, an unparsable one none), as a `case`.
 */
static void render_match(struct strbuf *out, const struct fault_tolerance *ft)
{
    size_t count = ft->present ? ft->rule_count : 0;
    strbuf_adds(out,
                "# tj_match CODE: the job's fault rules, first match wins (ENGINE.md §Faults)\n"
                "tj_match() {\n\tTJ_D_RULE=0 TJ_D_ACTION=RESTART_JOB TJ_D_MARKABLE=0 "
                "TJ_D_RULEDESC=");
    slurm_shell_quote(out, count ? "no rule matched, default RESTART_JOB"
                                 : "no rules, default RESTART_JOB");
    strbuf_adds(out, "\n\tcase \"$1\" in\n");
    for (size_t i = 0; i < count; i++) {
        const struct ft_rule *rule = &ft->rules[i];
        struct exitcode_set set;
        strbuf_addf(out, "\t# rule %zu: ", i + 1);
        if (fault_rule_has_codes(rule) && exitcodes_parse(rule->exit_codes, &set, NULL) != 0) {
            strbuf_adds(out, "its exit-code list does not parse: it never matches\n");
            continue;
        }
        strbuf_adds(out, fault_rule_has_codes(rule) ? "its exit codes\n" : "any exit code\n\t");
        if (fault_rule_has_codes(rule)) {
            int n = 0;
            strbuf_addc(out, '\t');
            for (int c = 1; c <= 255; c++) {
                if (!exitcodes_has(&set, c))
                    continue;
                if (n > 0 && n % 20 == 0)
                    strbuf_adds(out, " | \\\n\t");
                else if (n > 0)
                    strbuf_addc(out, '|');
                strbuf_addf(out, "%d", c);
                n++;
            }
        } else {
            strbuf_addc(out, '*');
        }
        enum ft_action action =
            rule->action == FT_ACTION_UNSPECIFIED ? FT_ACTION_RESTART_JOB : rule->action;
        struct strbuf desc = STRBUF_INIT;
        strbuf_addf(&desc, "rule %zu (", i + 1);
        fault_add_rule_codes(&desc, rule);
        strbuf_addf(&desc, " → %s) matched", fault_action_name(action));
        strbuf_addf(out,
                    ")\n\t\tTJ_D_RULE=%zu TJ_D_ACTION=%s TJ_D_MARKABLE=%d TJ_D_RULEDESC=", i + 1,
                    fault_action_name(action),
                    fault_rule_has_codes(rule) && rule->mark_node_unschedulable ? 1 : 0);
        slurm_shell_quote(out, strbuf_str(&desc));
        strbuf_adds(out, "\n\t\t;;\n");
        strbuf_free(&desc);
    }
    strbuf_adds(out, "\tesac\n}\n\n");
}

/* tj_meaning CODE: sets TJ_M to api/exitcodes.c's meaning of an exit code, or nothing. */
static void render_meanings(struct strbuf *out)
{
    strbuf_adds(out, "# tj_meaning CODE: sets TJ_M to what an exit code usually means "
                     "(api/exitcodes.c)\n"
                     "tj_meaning() {\n\tTJ_M=\n\tcase \"$1\" in\n");
    for (int c = 1; c <= 255; c++) {
        const char *m = exitcode_meaning(c);
        if (m == NULL)
            continue;
        strbuf_addf(out, "\t%d) TJ_M=", c);
        slurm_shell_quote(out, m);
        strbuf_adds(out, " ;;\n");
    }
    strbuf_adds(out, "\tesac\n}\n\n");
}

/* Sets err (400, field, the message) and returns -1. */
static int refuse(struct api_error *err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(struct api_error *err, const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    api_error_set(err, 400, "tjInvalidField", field, "%s", msg);
    return -1;
}

/* Appends one gap line: "field: what Slurm does instead". */
static void gap(struct strbuf *gaps, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void gap(struct strbuf *gaps, const char *field, const char *fmt, ...)
{
    va_list ap;
    if (gaps == NULL)
        return;
    strbuf_addf(gaps, "%s: ", field);
    va_start(ap, fmt);
    strbuf_vaddf(gaps, fmt, ap);
    va_end(ap);
    strbuf_addc(gaps, '\n');
}

/* Whether the context names a launcher: a template with a word in it. */
static bool has_launcher(const struct slurm_site *site)
{
    return site->launcher && site->launcher[strspn(site->launcher, " \t")] != '\0';
}

/* A launcher of srun options (Pyxis: --container-image={image}), not a program. */
static bool srun_options(const struct slurm_site *site)
{
    return has_launcher(site) && site->launcher[strspn(site->launcher, " \t")] == '-';
}

/* Whether the job's workers run through the context's launcher (not the node's environment). */
static bool contained(const struct slurm_site *site, const char *image)
{
    return has_launcher(site) && image && image[0] && strcmp(image, SLURM_HOST_IMAGE) != 0;
}

/* Every form rule the Slurm backend cannot honour as written, one line each. */
static void render_gaps(const struct jobspec *job, const struct slurm_site *site,
                        struct strbuf *gaps)
{
    const struct role *r = jobspec_worker(job);
    const char *image = r ? r->image_path : NULL;
    if (job->scheduling.present && job->scheduling.scoring_strategy != SCORING_UNSPECIFIED)
        gap(gaps, "scheduling.scoring_strategy",
            "%s is not applied: Slurm places jobs by the cluster's SelectType, not per job",
            enum_name(&scoring_strategy_names, (int)job->scheduling.scoring_strategy));
    if (job->resource_pool.present && job->resource_pool.vpc_id && job->resource_pool.vpc_id[0])
        gap(gaps, "resource_pool.vpc_id", "ignored: a Slurm cluster has no VPCs");
    if (job->resource_pool.present && job->resource_pool.zone && job->resource_pool.zone[0])
        gap(gaps, "resource_pool.zone", "ignored: the partition is the only placement Slurm takes");
    if (image && image[0] && strcmp(image, SLURM_HOST_IMAGE) != 0 && !has_launcher(site))
        gap(gaps, "roles[0].image_path",
            "not used: the context names no container launcher, so workers run in the "
            "node's own environment (" SLURM_HOST_IMAGE ")");
    if (job->ssh.present && job->ssh.has_auto_key_setup && job->ssh.auto_key_setup)
        gap(gaps, "ssh.auto_key_setup",
            "no keys are set up: workers reach each other as the cluster allows its users");
    if (job->barrier.present &&
        ((job->barrier.has_enable_ethernet_ping && job->barrier.enable_ethernet_ping) ||
         (job->barrier.has_enable_roce_mesh_ping && job->barrier.enable_roce_mesh_ping)))
        gap(gaps, "barrier", "no ping checks run before the workers start");
    if (job->async_checkpoint.present && job->async_checkpoint.has_max_ckpt_rounds)
        gap(gaps, "async_checkpoint", "not provided by Slurm: ignored");
    for (size_t i = 0; i < job->env_count; i++) {
        const char *key = job->env[i].key;
        char field[64];
        snprintf(field, sizeof field, "env[%zu].key", i);
        if (key && (strncmp(key, "SLURM_", 6) == 0 || strncmp(key, "SRUN_", 5) == 0))
            gap(gaps, field,
                "%s is also read by the supervisor's srun: it steers every worker's step, "
                "not only the worker",
                key);
    }
    if (job->lme.present)
        gap(gaps, "lme", "not provided by Slurm: ignored (use fault_tolerance rules)");
    if (job->fine_tuning_specs && job->fine_tuning_specs[0])
        gap(gaps, "fine_tuning_specs", "not provided by Slurm: ignored");
    const struct fault_tolerance *ft = &job->fault_tolerance;
    for (size_t i = 0; ft->present && i < ft->rule_count; i++) {
        const struct ft_rule *rule = &ft->rules[i];
        char field[64];
        snprintf(field, sizeof field, "fault_tolerance.rules[%zu]", i);
        if (rule->action == FT_ACTION_RESTART_POD && fault_rule_has_codes(rule) &&
            rule->mark_node_unschedulable)
            gap(gaps, field,
                "RESTART_POD with mark_node_unschedulable requeues the whole job away from the "
                "node: Slurm cannot move one worker of a running allocation");
    }
}

const char *slurm_path_problem(const char *p, bool bound)
{
    if (p == NULL || p[0] != '/')
        return "not an absolute path";
    for (const char *q = p; *q; q++) {
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            return "a control character in the path";
        if (bound && (*q == ',' || *q == ':'))
            return "',' and ':' cannot be in a path a container launcher binds (SRC:DST,…)";
    }
    if (path_has_dotdot(p))
        return "'..' cannot be in the path: write it as the nodes see it";
    return NULL;
}

static const struct slurm_volume *site_volume(const struct slurm_site *site, const char *name)
{
    for (size_t i = 0; name && i < site->volume_count; i++)
        if (site->volumes[i].name && strcmp(site->volumes[i].name, name) == 0)
            return &site->volumes[i];
    return NULL;
}

/*
 * The job's mounts on the nodes (slurm_script.h): binds gets {mounts} —
 * "DIR:DIR" for the job directory, then ",SRC:DST" per mount — when the
 * workers run through the launcher. Returns 0, or -1 with err naming the
 * mount's field when a mount cannot be made as written.
 */
static int resolve_mounts(const struct jobspec *job, const struct slurm_site *site,
                          const char *image, const char *dir, struct strbuf *binds,
                          struct strbuf *need, struct api_error *err)
{
    bool boxed = contained(site, image);
    if (boxed) {
        if (slurm_path_problem(dir, true))
            return refuse(err, "name",
                          "the job directory %s cannot be bound in a container: the context's "
                          "jobs_dir must have no ',' or ':'",
                          dir);
        strbuf_addf(binds, "%s:%s", dir, dir);
    }
    /* With srun options the step's wrapper runs in the container: it writes the job directory. */
    if (boxed && srun_options(site) && strstr(site->launcher, "{mounts}") == NULL)
        return refuse(err, "roles[0].image_path",
                      "the context's launcher gives srun options but no {mounts}: the "
                      "container would not see the job directory the supervisor keeps its "
                      "records in; add --container-mounts={mounts} to it");
    if (boxed && job->mount_count > 0 && strstr(site->launcher, "{mounts}") == NULL)
        return refuse(err, "mount[0]",
                      "the context's launcher has no {mounts}, so nothing would bind the "
                      "volumes: add --bind {mounts} (apptainer) or --container-mounts={mounts} "
                      "(Pyxis) to it");
    for (size_t i = 0; i < job->mount_count; i++) {
        const struct mount *m = &job->mount[i];
        char field[64];
        const struct slurm_volume *v = site_volume(site, m->id);
        snprintf(field, sizeof field, "mount[%zu].id", i);
        if (m->id == NULL || m->id[0] == '\0')
            return refuse(err, field, "required: the volume to mount");
        if (v == NULL && site->volume_count == 0)
            return refuse(err, field,
                          "no volume '%s': the context names no volumes (volumes: {NAME: "
                          "/shared/path} in its config.yaml)",
                          m->id);
        if (v == NULL) {
            struct strbuf names = STRBUF_INIT;
            for (size_t k = 0; k < site->volume_count; k++)
                strbuf_addf(&names, "%s%s", k ? ", " : "", site->volumes[k].name);
            int rc = refuse(err, field, "no volume '%s' in the context; its volumes: %s", m->id,
                            strbuf_str(&names));
            strbuf_free(&names);
            return rc;
        }
        const char *why = slurm_path_problem(v->path, boxed);
        if (why)
            return refuse(err, field, "volume '%s' at '%s': %s", v->name, v->path, why);
        snprintf(field, sizeof field, "mount[%zu].subdir", i);
        if (m->subdir && m->subdir[0] && (why = slurm_path_problem(m->subdir, boxed)) != NULL)
            return refuse(err, field, "%s", why);
        snprintf(field, sizeof field, "mount[%zu].mount_path", i);
        if (m->mount_path == NULL || m->mount_path[0] == '\0')
            return refuse(err, field, "required: where the worker sees the volume");
        if ((why = slurm_path_problem(m->mount_path, boxed)) != NULL)
            return refuse(err, field, "%s", why);
        struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT;
        strbuf_addf(&dst, "%s/%s", v->path, m->subdir ? m->subdir : "");
        path_normalise(strbuf_str(&dst), &src);
        path_normalise(m->mount_path, &dst);
        int rc = 0;
        if (!srun_options(site) || !boxed) /* the wrapper runs on the node: it sees SRC */
            strbuf_addf(need, "%s%s", need->len ? "\n" : "", strbuf_str(&src));
        if (boxed)
            strbuf_addf(binds, ",%s:%s", strbuf_str(&src), strbuf_str(&dst));
        else if (strcmp(strbuf_str(&src), strbuf_str(&dst)) != 0)
            rc = refuse(err, field,
                        "the workers run in the node's own environment (%s), where nothing "
                        "mounts volume '%s' at %s: it is at %s. Set mount_path to %s, or run "
                        "an image through %s",
                        SLURM_HOST_IMAGE, v->name, strbuf_str(&dst), strbuf_str(&src),
                        strbuf_str(&src),
                        has_launcher(site) ? "the context's launcher"
                                           : "a container launcher (the context's launcher:)");
        strbuf_free(&src);
        strbuf_free(&dst);
        if (rc)
            return rc;
    }
    return 0;
}

/*
 * The launcher's words with {image} and {mounts} replaced, each one quoted;
 * nothing for the host image.
 */
static void render_launcher(struct strbuf *out, const struct slurm_site *site, const char *image,
                            const char *mounts)
{
    if (!contained(site, image))
        return;
    const char *p = site->launcher;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *end = p;
        while (*end && *end != ' ' && *end != '\t')
            end++;
        struct strbuf word = STRBUF_INIT;
        for (const char *q = p; q < end;) {
            if ((size_t)(end - q) >= 7 && strncmp(q, "{image}", 7) == 0) {
                strbuf_adds(&word, image);
                q += 7;
            } else if ((size_t)(end - q) >= 8 && strncmp(q, "{mounts}", 8) == 0) {
                strbuf_adds(&word, mounts);
                q += 8;
            } else {
                strbuf_addc(&word, *q++);
            }
        }
        slurm_shell_quote(out, strbuf_str(&word));
        strbuf_addc(out, ' ');
        strbuf_free(&word);
        p = end;
    }
}

int slurm_script_render(const struct jobspec *job, const struct slurm_site *site,
                        struct strbuf *script, struct strbuf *gaps, struct api_error *err)
{
    if (job->name == NULL || job->name[0] == '\0')
        return refuse(err, "name", "required: the job's name names its directory on the cluster");
    if (!safe_component(job->name))
        return refuse(err, "name",
                      "the job name must be letters, digits, '.', '_' and '-' to name "
                      "its directory on the cluster");
    char *dir = slurm_jobdir_path(site->jobs_dir, site->workspace, job->name);
    if (dir == NULL)
        return refuse(err, "workspace_name",
                      "no job directory: the jobs directory must be an absolute path "
                      "without '%%', '\\' or '..', and the workspace a plain name");
    int replicas = jobspec_replicas(job);
    if (replicas > SLURM_MAX_REPLICAS) {
        free(dir);
        return refuse(err, "roles[0].total_replicas",
                      "%d workers: a Slurm job supervises at most %d", replicas,
                      SLURM_MAX_REPLICAS);
    }
    for (size_t i = 0; i < job->env_count; i++) {
        char buf[128], field[64];
        const char *key = job->env[i].key;
        const char *why = validate_env_name(key, buf, sizeof buf);
        if (why == NULL && strncmp(key, "TJ_", 3) == 0)
            why = "TJ_ names are the Slurm supervisor's own; choose another name";
        if (why != NULL) {
            snprintf(field, sizeof field, "env[%zu].key", i);
            free(dir);
            return refuse(err, field, "%s", why);
        }
    }
    const struct role *r = jobspec_worker(job);
    const char *image = r ? r->image_path : NULL;
    struct strbuf binds = STRBUF_INIT, need = STRBUF_INIT;
    if (resolve_mounts(job, site, image, dir, &binds, &need, err) != 0) {
        strbuf_free(&binds);
        strbuf_free(&need);
        free(dir);
        return -1;
    }

    strbuf_adds(script, "#!/bin/sh\n");
    strbuf_adds(script, "# The trainjob supervisor of one job (generated by trainjob, "
                        "api/slurm_script.c).\n"
                        "# Slurm runs it on the first node of the allocation: it runs a "
                        "one-worker job\n"
                        "# itself and starts one srun step per worker of a larger one; when a "
                        "worker fails\n"
                        "# it applies the job's fault rules as trainjobd does.\n"
                        "# Its exit status is the job's outcome. Records: the job directory "
                        "below.\n");
    /* -f: the supervisor never globs, so no word it splits can turn into file names */
    strbuf_adds(script, "set -uf\n");
    strbuf_adds(script, "TJ_JOB=");
    slurm_shell_quote(script, job->name);
    strbuf_adds(script, "\nTJ_JOBDIR=");
    slurm_shell_quote(script, dir);
    strbuf_addf(script, "\nTJ_REPLICAS=%d\nTJ_STYLE=%s\nTJ_LIMIT=%d\nTJ_GRACE=%d\n", replicas,
                framework_style(job->framework), fault_backoff_limit(&job->fault_tolerance),
                SLURM_GRACE_S);
    strbuf_addf(script, "TJ_DELAY=%d\nTJ_DELAY_MAX=%d\nTJ_RESET=%d\n", SLURM_RESTART_DELAY_S,
                SLURM_RESTART_DELAY_MAX_S, SLURM_RESTART_RESET_S);
    /* One worker runs in the batch step itself, but through a launcher of srun options. */
    strbuf_addf(script,
                "# 1: the one worker runs in this batch step, not in a srun step\n"
                "TJ_LOCAL=%d\n",
                replicas == 1 && !srun_options(site) ? 1 : 0);
    for (int i = 0; i < replicas; i++) {
        char name[64];
        jobspec_worker_name(job, i, name, sizeof name);
        strbuf_addf(script, "TJ_NAME_%d=%s\n", i, name);
    }
    strbuf_adds(script, "# the startup script, run by /bin/sh -c in each worker\nTJ_SCRIPT=");
    slurm_shell_quote(script, r && r->startup_script ? r->startup_script : "true");
    strbuf_adds(script, "\nTJ_INNER=");
    slurm_shell_quote(script, inner_script);
    strbuf_adds(script, "\n\n# tj_user_env: the job's variables, last (as trainjobd sets them)\n"
                        "tj_user_env() {\n");
    for (size_t i = 0; i < job->env_count; i++) {
        strbuf_adds(script, "\texport ");
        slurm_shell_quote(script, job->env[i].key);
        strbuf_addc(script, '=');
        slurm_shell_quote(script, job->env[i].value ? job->env[i].value : "");
        strbuf_addc(script, '\n');
    }
    strbuf_adds(script, "\t:\n}\n\n# the step's wrapper: runs the launcher, recording its start "
                        "and exit\nTJ_LAUNCH=");
    slurm_shell_quote(script, launch_wrapper);
    strbuf_adds(script,
                "\n# the volumes' directories each step needs on its node, one a line\nTJ_NEED=");
    slurm_shell_quote(script, strbuf_str(&need));
    strbuf_adds(script, "\n\n"
                        "# tj_srun MARK SRUN-OPTIONS...: one worker's step (the wrapper, the "
                        "launcher, then the step's own sh)\n"
                        "tj_srun() {\n\t_mk=$1\n\tshift\n"
                        "\t\"$TJ_SRUN\" \"$@\" ");
    /* A launcher of srun options goes to srun itself, a program after the step's wrapper. */
    if (srun_options(site))
        render_launcher(script, site, image, strbuf_str(&binds));
    strbuf_adds(script, "/bin/sh -c \"$TJ_LAUNCH\" tj-launch \"$_mk\" \"$TJ_NEED\" ");
    if (!srun_options(site))
        render_launcher(script, site, image, strbuf_str(&binds));
    strbuf_adds(script, "/bin/sh -c \"$TJ_INNER\" tj-worker \"$TJ_SCRIPT\" 3>&-\n}\n\n");
    /*
     * The one worker in this batch step (TJ_LOCAL): the wrapper's checks in
     * the supervisor's subshell, which then becomes the worker in a session
     * and process group of its own — the launcher and INNER's sh, or with no
     * launcher the worker's sh itself, the device variables set here. No
     * wrapper process and no start or exit record: the subshell's exit
     * status is the worker's, and tj_next records it in the worker's record.
     */
    strbuf_adds(script,
                "# the step wrapper's checks, for the worker in this batch step\nTJ_CHECK=");
    slurm_shell_quote(script, LAUNCH_CHECK);
    strbuf_adds(script, "\n# tj_exec MARK: the one worker in this batch step, in this subshell: "
                        "the checks (MARK.fail\n# when they fail), then setsid and the launcher "
                        "and the worker's sh\ntj_exec() {\n");
    if (contained(site, image) && !srun_options(site)) {
        strbuf_adds(script, "\tset -- \"$1\" \"$TJ_NEED\" ");
        render_launcher(script, site, image, strbuf_str(&binds));
        strbuf_adds(script, "/bin/sh -c \"$TJ_INNER\" tj-worker \"$TJ_SCRIPT\"\n");
    } else {
        /* INNER's variables set here: the worker's sh is the one INNER would exec */
        strbuf_adds(script, DEVICE_VARS "\tset -- \"$1\" \"$TJ_NEED\" /bin/sh -c \"$TJ_SCRIPT\"\n");
    }
    strbuf_adds(script, "\teval \"$TJ_CHECK\"\n\texec setsid \"$@\"\n}\n\n");
    render_match(script, &job->fault_tolerance);
    render_meanings(script);
    add_body(script, supervisor_body);
    render_gaps(job, site, gaps);
    strbuf_free(&binds);
    strbuf_free(&need);
    free(dir);
    return 0;
}
