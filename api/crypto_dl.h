/*
 * crypto_dl: libcrypto, loaded the first time a request is signed or checked.
 *
 * Only the AK/SK signature (api/hmac) uses OpenSSL: HMAC-SHA256, SHA-256,
 * base64 and a constant-time compare. Loading and relocating libcrypto.so.3
 * costs every exec of trainjob about as much as the rest of its start, and
 * most runs (the local engine, Slurm) never sign anything. So neither binary
 * links it: api/hmac calls it through this table, filled by dlopen on first
 * use. The types still come from OpenSSL's headers (compile time only), and
 * crypto_dl.c checks each entry against OpenSSL's own prototype.
 */
#ifndef API_CRYPTO_DL_H
#define API_CRYPTO_DL_H

#include <openssl/evp.h>
#include <stdbool.h>
#include <stddef.h>

/* The library dlopen asks for, and the message's name for it. */
#define CRYPTO_DL_SONAME "libcrypto.so.3"

struct crypto_fns {
    const EVP_MD *(*evp_sha256)(void);
    int (*evp_digest)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *,
                      ENGINE *);
    unsigned char *(*hmac)(const EVP_MD *, const void *, int, const unsigned char *, size_t,
                           unsigned char *, unsigned int *);
    int (*encode_block)(unsigned char *, const unsigned char *, int);
    int (*memcmp)(const void *, const void *, size_t);
};

/*
 * The table, libcrypto loaded on the first call; NULL when libcrypto.so.3
 * cannot be loaded or lacks a function, with why (naming the library and
 * the Debian package that has it) in why (why_len bytes; may be NULL).
 */
const struct crypto_fns *crypto_dl(char *why, size_t why_len);
/* True once libcrypto is loaded in this process (tests check it stays out). */
bool crypto_dl_loaded(void);

#endif
