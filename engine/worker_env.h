/*
 * worker_env: the environment every worker receives (ENGINE.md §Workers), as a
 * pure function of the job and the worker's place in it: ECP_JOB_NAME; for
 * PyTorch DDP and SenseParrots MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK,
 * NODE_RANK; for TensorFlow PS TF_CONFIG; for MPI the hostfile's path; the
 * device slice in CUDA_VISIBLE_DEVICES; then the user's variables. Also the
 * worker names ("master-0", "worker-0", …) and the MPI hostfile text.
 *
 * The variables, in the order they are set (a later one replaces an earlier
 * one of the same name):
 *
 *   base                    what the engine passes on (PATH, HOME, LANG…)
 *   ECP_JOB_NAME            the job's name
 *   PyTorch, PyTorch DDP, SenseParrots, SenseParrots DDP:
 *     MASTER_ADDR, MASTER_PORT   worker 0's address and the engine's free port
 *     WORLD_SIZE            the number of workers (SenseCore's meaning: the
 *                           node count, not the global process count)
 *     RANK, NODE_RANK       the worker's index; LOCAL_RANK=0
 *   TensorFlow PS: TF_CONFIG, compact JSON: worker 0 is the parameter server
 *     {"cluster":{"ps":["h0:p0"],"worker":["h1:p1",…]},
 *      "task":{"type":"ps"|"worker","index":N}}   ("worker" left out for 1 replica)
 *   TensorFlow (no PS): TF_CONFIG with every worker in "worker"
 *   MPI: TRAINJOB_HOSTFILE and OMPI_MCA_orte_default_hostfile, when
 *     place->hostfile is set (the engine writes worker_hostfile's text there)
 *   CUDA_VISIBLE_DEVICES    the device slice; "" when the worker has none, so
 *                           it cannot pick up GPUs it was not given
 *   NVIDIA_VISIBLE_DEVICES  the same slice; "none" when empty (the NVIDIA
 *                           container toolkit's word for no devices)
 *   TRAINJOB_WORKER_NAME    jobspec_worker_name's answer
 *   TRAINJOB_SSH_DIR        place->ssh_dir, when set
 *   the user's env[]        last
 */
#ifndef ENGINE_WORKER_ENV_H
#define ENGINE_WORKER_ENV_H

#include <stddef.h>

struct jobspec;
struct strbuf;

/*
 * Where a worker sits in its job. hosts and ports may be NULL: every worker
 * then has master_addr (or "127.0.0.1"), and worker i has master_port + i.
 */
struct worker_place {
    int index; /* 0 .. replicas-1 */
    int replicas;
    const char *devices;      /* "0,1" or "" (or NULL) for none (CUDA_VISIBLE_DEVICES) */
    const char *master_addr;  /* address of worker 0 ("127.0.0.1" locally) */
    int master_port;          /* a free port chosen by the engine */
    const char *const *hosts; /* every worker's address, replicas entries */
    const int *ports;         /* every worker's port (TF_CONFIG), replicas entries */
    const char *hostfile;     /* path of the MPI hostfile inside the worker, or NULL */
    const char *ssh_dir;      /* where the SSH keys are, inside the worker, or NULL */
};

/* A growable NULL-terminated array of "NAME=value" strings (owned). */
struct envv {
    char **v; /* NULL until the first envv_set; then always NULL-terminated */
    size_t n, cap;
};

/* Sets name to value, replacing an entry of the same name in place. */
void envv_set(struct envv *e, const char *name, const char *value);
void envv_free(struct envv *e);
/* The value of name in e, or NULL. */
const char *envv_get(const struct envv *e, const char *name);

/*
 * Fills env for the worker at place, starting from the base variables
 * (PATH, HOME, LANG… that the engine passes on, "NAME=value", NULL-terminated,
 * may be NULL), then the platform's, then the user's (which validation keeps
 * from overriding the platform's). env must be empty or hold earlier entries
 * the caller wants kept.
 */
void worker_env_build(const struct jobspec *job, const struct worker_place *place,
                      const char *const *base, struct envv *env);
/* The MPI hostfile: one "host slots=N" line per worker. */
void worker_hostfile(const struct worker_place *place, int slots, struct strbuf *out);

#endif
