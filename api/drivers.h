/*
 * drivers: the table of backend drivers, and backend_open (declared in
 * backend.h), which picks the one a context names. Each driver defines a
 * const struct backend_driver in its own module (api/acp.c, api/slurm.c)
 * and is listed once in drivers.c: backend.c, which every driver uses,
 * knows none of them, so the drivers and backend.c use each other one way.
 */
#ifndef API_DRIVERS_H
#define API_DRIVERS_H

#include <stdbool.h>

struct backend;
struct http_client;
struct resolved_context;
struct strbuf;

struct backend_driver {
    /* The backend for rc over client (which it then owns); NULL with why in err. */
    struct backend *(*open)(struct http_client *client, const struct resolved_context *rc,
                            struct strbuf *err);
    bool revives; /* it may speak to the local engine, which is started again when gone */
};

/* The driver for a context's driver: field (enum context_driver); never NULL. */
const struct backend_driver *backend_driver_for(int context_driver);

#endif
