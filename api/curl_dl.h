/*
 * curl_dl: libcurl, loaded the first time a TCP endpoint needs it.
 *
 * trainjob talks to the local engine over a Unix socket with its own small
 * client (api/uhttp); libcurl and what it loads (OpenSSL, GnuTLS, Kerberos,
 * LDAP, SSH, p11-kit: ~8 MB resident in a 12 MB wizard) are needed only for
 * http(s):// endpoints. So trainjob does not link libcurl: api/http and
 * api/http_multi call it through this table, filled by dlopen on first use.
 * The types and constants still come from <curl/curl.h> (compile time only).
 */
#ifndef API_CURL_DL_H
#define API_CURL_DL_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

struct curl_fns {
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    CURLcode (*easy_perform)(CURL *);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_assign)(CURLM *, curl_socket_t, void *);
};

/*
 * The table, libcurl loaded and curl_global_init run on the first call; NULL
 * when libcurl.so.4 cannot be loaded, with why in why (why_len bytes).
 */
const struct curl_fns *curl_dl(char *why, size_t why_len);
/* True once libcurl is loaded in this process (tests check it stays out). */
bool curl_dl_loaded(void);

#endif
