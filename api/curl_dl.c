/*
 * curl_dl: dlopen("libcurl.so.4") and its function table; see curl_dl.h.
 * Loaded once per process and never unloaded. Called by api/http and
 * api/http_multi when a transfer goes over TCP.
 */
#include "api/curl_dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static struct curl_fns fns;
static bool loaded;
static char load_error[200];

/* Every symbol of the table, or false with the missing one named. */
static bool resolve(void *lib)
{
    static const struct {
        const char *name;
        size_t offset;
    } syms[] = {
#define SYM(field) {"curl_" #field, offsetof(struct curl_fns, field)}
        SYM(easy_init),           SYM(easy_setopt),      SYM(easy_getinfo),
        SYM(easy_perform),        SYM(easy_cleanup),     SYM(easy_strerror),
        SYM(slist_append),        SYM(slist_free_all),   SYM(multi_init),
        SYM(multi_setopt),        SYM(multi_add_handle), SYM(multi_remove_handle),
        SYM(multi_socket_action), SYM(multi_info_read),  SYM(multi_cleanup),
        SYM(multi_assign),
#undef SYM
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(lib, syms[i].name);
        if (p == NULL) {
            snprintf(load_error, sizeof load_error, "libcurl.so.4 has no %s", syms[i].name);
            return false;
        }
        /* POSIX guarantees a function pointer survives this round trip through void *. */
        memcpy((char *)&fns + syms[i].offset, &p, sizeof p);
    }
    return true;
}

const struct curl_fns *curl_dl(char *why, size_t why_len)
{
    static bool tried;
    if (!tried) {
        tried = true;
        void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            const char *e = dlerror();
            snprintf(load_error, sizeof load_error,
                     "http(s) endpoints need libcurl (libcurl.so.4): %s", e ? e : "not found");
        } else if (resolve(lib)) {
            CURLcode (*global_init)(long) = NULL;
            void *p = dlsym(lib, "curl_global_init");
            memcpy(&global_init, &p, sizeof p);
            if (global_init && global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK)
                loaded = true;
            else
                snprintf(load_error, sizeof load_error, "curl_global_init failed");
        }
    }
    if (!loaded && why && why_len)
        snprintf(why, why_len, "%s", load_error);
    return loaded ? &fns : NULL;
}

bool curl_dl_loaded(void)
{
    return loaded;
}
