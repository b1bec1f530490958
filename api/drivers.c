/*
 * drivers: see drivers.h. A new driver adds its const struct
 * backend_driver here, and nowhere in backend.c.
 */
#include "api/drivers.h"

#include <stddef.h>

#include "api/acp.h"
#include "api/autostart.h"
#include "api/backend.h"
#include "api/context.h"
#include "api/http.h"
#include "api/slurm.h"
#include "util/xalloc.h"

/* Which driver opens each kind of context (ACP's also serves trainjobd's paths). */
static const struct {
    enum context_driver kind;
    const struct backend_driver *driver;
} table[] = {
    {CONTEXT_DRIVER_UNSPECIFIED, &acp_driver},
    {CONTEXT_DRIVER_ACP, &acp_driver},
    {CONTEXT_DRIVER_TRAINJOBD, &acp_driver},
    {CONTEXT_DRIVER_SLURM, &slurm_driver},
};

const struct backend_driver *backend_driver_for(int context_driver)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if ((int)table[i].kind == context_driver)
            return table[i].driver;
    return &acp_driver;
}

/* The revive hook of the local engine: start trainjobd on its socket, unless it was stopped so. */
static int start_engine(void *ctx, struct strbuf *err)
{
    if (autostart_stopped(err))
        return -1;
    return autostart_engine(ctx, err);
}

/* The driver for the context, with the local engine's revive hook when it may be started. */
struct backend *backend_open(const struct resolved_context *rc, struct strbuf *err)
{
    const struct backend_driver *d = backend_driver_for(rc->ctx.driver);
    struct http_client *client = http_client_new(rc->ctx.endpoint, err);
    if (client == NULL)
        return NULL;
    struct backend *b = d->open(client, rc, err);
    if (b && d->revives && rc->may_autostart && rc->engine_socket) {
        b->engine_socket = xstrdup(rc->engine_socket);
        b->revive = start_engine;
        b->revive_ctx = b->engine_socket;
    }
    return b;
}
