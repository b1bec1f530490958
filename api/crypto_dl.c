/*
 * crypto_dl: dlopen("libcrypto.so.3") and its function table; see crypto_dl.h.
 * Loaded once per process and never unloaded. Called by api/hmac.
 */
#include "api/crypto_dl.h"

#include <dlfcn.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

/*
 * Each entry has OpenSSL's own type: checked here at compile time. _Generic
 * does not evaluate &fn, so this references no symbol and links nothing.
 */
#define SAME_TYPE(field, fn)                                                                       \
    _Static_assert(_Generic(&fn, __typeof__(((struct crypto_fns *)0)->field) : 1, default : 0),    \
                   #fn "'s prototype is not the table's " #field)
SAME_TYPE(evp_sha256, EVP_sha256);
SAME_TYPE(evp_digest, EVP_Digest);
SAME_TYPE(hmac, HMAC);
SAME_TYPE(encode_block, EVP_EncodeBlock);
SAME_TYPE(memcmp, CRYPTO_memcmp);
#undef SAME_TYPE

static struct crypto_fns fns;
static bool loaded;
static char load_error[300];

/* Every symbol of the table, or false with the missing one named. */
static bool resolve(void *lib)
{
    static const struct {
        const char *name;
        size_t offset;
    } syms[] = {
#define SYM(field, name) {#name, offsetof(struct crypto_fns, field)}
        SYM(evp_sha256, EVP_sha256),        SYM(evp_digest, EVP_Digest), SYM(hmac, HMAC),
        SYM(encode_block, EVP_EncodeBlock), SYM(memcmp, CRYPTO_memcmp),
#undef SYM
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(lib, syms[i].name);
        if (p == NULL) {
            snprintf(load_error, sizeof load_error,
                     "ACP signing needs " CRYPTO_DL_SONAME " (Debian: libssl3): it has no %s",
                     syms[i].name);
            return false;
        }
        /* POSIX guarantees a function pointer survives this round trip through void *. */
        memcpy((char *)&fns + syms[i].offset, &p, sizeof p);
    }
    return true;
}

const struct crypto_fns *crypto_dl(char *why, size_t why_len)
{
    static bool tried;
    if (!tried) {
        tried = true;
        void *lib = dlopen(CRYPTO_DL_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            const char *e = dlerror();
            snprintf(load_error, sizeof load_error,
                     "ACP signing needs " CRYPTO_DL_SONAME " (Debian: libssl3): %s",
                     e ? e : "not found");
        } else {
            loaded = resolve(lib);
        }
    }
    if (!loaded && why && why_len)
        snprintf(why, why_len, "%s", load_error);
    return loaded ? &fns : NULL;
}

bool crypto_dl_loaded(void)
{
    return loaded;
}
