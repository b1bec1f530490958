/*
 * acp_logs: worker logs on SenseCore ACP. ACP keeps them in its Monitor
 * service (CMS), not in the training-job API, so the acp driver (acp.c)
 * reads them here, from the offline-log endpoint of a telemetry station:
 *
 *   POST {monitor}/monitor/ts/data/v1/subscriptions/{sub}/resourceGroups/{rg}
 *        /zones/{zone}/telemetryStations/{station}
 *        /logStream/products/product.lepton-acp-new/logs
 *   {start, end, resource_id: [workspace id], page_size, offset,
 *    custom_filter: [{key: "Attributes.k8s.pod.name", value: WORKER}]}
 *   → {hits: [{body, log_time, attributes: {k8s.pod.name, k8s.container.name},
 *              resource: {resource_id}}], total}
 *
 * UNVERIFIED: the shapes come from SenseCore ACP's REST contract as taken
 * from third-party clients that work against SenseCore, not
 * from the official pages (not readable here). Where those clients differ
 * or say nothing, the choices are said next to the code: start and end as
 * decimal strings of seconds since the epoch, offset as a decimal string,
 * total as a number or a decimal string, the order of hits either way (it
 * is read from log_time).
 *
 * Following a log polls the same endpoint with a cursor (the newest
 * log_time read, and the lines already shown at that time, so a line is
 * shown once); polls that cannot reach the service are retried for about a
 * minute (ACP_LOGS_RETRIES). The live-log websocket (logLivestream/token, a JWT naming a
 * polling host, base64 entries) is not used: the public pages define
 * neither its token's lifetime nor its entries well enough to build on.
 */
#ifndef API_ACP_LOGS_H
#define API_ACP_LOGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/backend.h"

struct http_client;
struct strbuf;

/* The Monitor service's endpoint when the context names none (monitor_endpoint:). */
#define ACP_MONITOR_DEFAULT "https://monitor.sensecoreapi.cn"
#define ACP_LOGS_PRODUCT "product.lepton-acp-new"
/* Hits asked per page, and the most pages one read takes after the first. */
#define ACP_LOGS_PAGE 500
#define ACP_LOGS_MAX_PAGES 100
/* The most lines one read shows: of a longer log, the last ones. */
#define ACP_LOGS_LINES (ACP_LOGS_PAGE * ACP_LOGS_MAX_PAGES)
/* How often a followed log is asked again. */
#define ACP_LOGS_POLL_MS 2000
/* Polls in a row that may fail to reach the Monitor service before a follow gives up (~1 min). */
#define ACP_LOGS_RETRIES 30

/* Where a backend reads logs. */
struct acp_monitor {
    struct http_client *client; /* the Monitor service, signed with the context's keys */
    char *station;              /* telemetry_station: a name, or its /subscriptions/… path */
    long poll_ms;               /* how often a followed log is asked again */
};

/* One read of a page of a worker's log. */
struct acp_logs_query {
    const struct backend_target *target;
    const char *worker; /* the pod: k8s.pod.name */
    int64_t start, end; /* seconds since the epoch */
    long offset;
    int page_size;
};

/* One log line read: its time, and its body made safe for a terminal, ending in '\n'. */
struct acp_log_hit {
    int64_t ms; /* log_time in ms since the epoch, or -1 when it is not RFC 3339 */
    char *text;
    size_t seq; /* its place in the reply (before the worker filter) */
};

/* What a page of hits (or a whole read) holds. */
struct acp_log_page {
    struct acp_log_hit *hits;
    size_t count, cap;
    size_t raw;    /* hits in the reply, other workers' included */
    int64_t total; /* the server's count of hits in the window */
};

/*
 * The logs path below the monitor endpoint for station — a bare name (the
 * station in the context's subscription, resource group and zone), or the
 * path the console's log page uses, /subscriptions/S/resourceGroups/G/zones/Z
 * /telemetryStations/N. Returns -1 with why in err for anything else.
 */
int acp_logs_path(const struct backend_target *t, const char *station, struct strbuf *p,
                  struct strbuf *err);
/* The request body of q (the caller's). */
json_t *acp_logs_body(const struct acp_logs_query *q);
/*
 * Adds the hits of reply that belong to worker to page (a hit naming another
 * pod, or none, is left out: a server that ignored the filter must not mix
 * workers), each body sanitized (util/utf8.h); sets raw and total. Returns
 * -1 with why in err when the reply is not of the shape above.
 */
int acp_logs_decode(const json_t *reply, const char *worker, struct acp_log_page *page,
                    struct strbuf *err);
void acp_log_page_free(struct acp_log_page *page);

/*
 * A worker's log, to fn: the last tail lines (all when tail < 0) logged
 * since since_s (seconds since the epoch); with follow, then what is logged
 * next, every m->poll_ms, until fn returns non-zero or, when ended is
 * given, the job has ended and one more poll brought nothing new.
 * endpoint names the Monitor service in messages.
 */
enum backend_status acp_logs_read(const struct acp_monitor *m, const char *endpoint,
                                  const struct backend_target *t, const char *worker, long tail,
                                  bool follow, int64_t since_s, bool (*ended)(void *ctx),
                                  void *ended_ctx, backend_data_fn fn, void *ctx,
                                  struct api_error *err);

/*
 * The same read in steps, so that it runs blocking (acp_logs_read) or on a
 * loop (the acp driver's send, api/acp.c) with the same requests, paging,
 * tail, cursor and lines: acp_logs_begin, then for each step POST
 * acp_logs_request_body to acp_logs_request_path on m->client and hand the
 * result to acp_logs_reply, which says what next — ASK (the next page now),
 * POLL (wait acp_logs_poll_ms, then acp_logs_poll and ask), or END (*st and
 * err say how). Lines go to fn as they are read; fn non-zero ends the read.
 */
struct acp_logs;
enum acp_logs_next { ACP_LOGS_ASK, ACP_LOGS_POLL, ACP_LOGS_END };
struct http_result;

/* A read of worker's log (m and t must outlive it); no station in m: BACKEND_REJECTED. */
enum backend_status acp_logs_begin(struct acp_logs **out, const struct acp_monitor *m,
                                   const char *endpoint, const struct backend_target *t,
                                   const char *worker, long tail, bool follow, int64_t since_s,
                                   backend_data_fn fn, void *ctx, struct api_error *err);
const char *acp_logs_request_path(const struct acp_logs *r);
/* The body of the next page's POST (the caller frees it). */
char *acp_logs_request_body(const struct acp_logs *r);
enum acp_logs_next acp_logs_reply(struct acp_logs *r, const struct http_result *res,
                                  enum backend_status *st, struct api_error *err);
/* Starts a poll's window from the cursor; ended: the job had ended before it was asked. */
void acp_logs_poll(struct acp_logs *r, bool ended);
long acp_logs_poll_ms(const struct acp_logs *r);
void acp_logs_free(struct acp_logs *r);
/* Where a job's log starts: a minute before create_time (RFC 3339), or a week back. */
int64_t acp_logs_since(const char *create_time);

#endif
