/*
 * acp: the driver for SenseCore ACP's training-job REST API, over api/http.
 *
 * It speaks to two kinds of server with the same paths:
 *
 *   .../compute/acp/data/v2/subscriptions/{sub}/resourceGroups/{rg}/zones/{zone}
 *       /workspaces/{ws}/trainingJobs           create (POST ?training_job_name=), list
 *       /trainingJobs/{name}                    get, update (PATCH ?update_mask=)
 *       /trainingJobs/{name}/workers            workers
 *       /trainingJobs:batchStop | :batchDelete  stop, delete
 *
 * and, on trainjobd only (what SenseCore spreads over other services):
 *
 *   /trainjob/v1/catalog
 *   /trainjob/v1/workspaces/{ws}/trainingJobs/{name}:start | :markNode | /events
 *       | /workers/{worker}/logs?tail=&follow=true
 *       (:markNode {"node": N}: the job's next placement avoids N)
 *   .../trainingJobs?watch=true                 one JSON message per line
 *
 * Against real SenseCore those answer "not supported by this backend" —
 * but for worker logs, which real ACP keeps in its Monitor service (CMS):
 * the driver reads them there (api/acp_logs.h; acp_set_monitor).
 * Replies are decoded leniently: a server may add fields.
 */
#ifndef API_ACP_H
#define API_ACP_H

#include <stdbool.h>
#include <stddef.h>

#include "api/backend.h"

struct backend;
struct backend_driver;
struct backend_target;
struct jobspec;
struct json_t;
struct http_client;

/* The driver api/drivers.c opens acp and trainjobd contexts with. */
extern const struct backend_driver acp_driver;

/* A backend over client (which it then owns), aimed at target; trainjobd: the extras exist. */
struct backend *acp_backend_new(struct http_client *client, const struct backend_target *target,
                                bool trainjobd);

/*
 * Where real ACP's worker logs are read: monitor (owned from now on; the
 * Monitor service, signed as the endpoint is), the telemetry station (a
 * name or its /subscriptions/… path; NULL: logs say how to set it), and how
 * often a followed log is asked again.
 */
void acp_set_monitor(struct backend *b, struct http_client *monitor, const char *station,
                     long poll_ms);

/*
 * The body a create sends for job: its fields without those the server sets
 * (and, to ACP, without trainjob's own and workspace_name, which the path
 * carries). `render` prints it and `submit` sends it. A new tree.
 */
struct json_t *acp_create_body(const struct jobspec *job, bool trainjobd);

/*
 * Decodes one line of a watch stream (NDJSON, no '\n') into a message for fn,
 * as a watch does; returns fn's answer (0 for a line skipped as unknown).
 * For benchmarks and tests that feed recorded streams.
 */
int acp_watch_decode(const char *line, size_t len, backend_watch_fn fn, void *ctx);

#endif
