/*
 * Tests for AK/SK signing (a vector computed with `openssl dgst -hmac`),
 * header parsing, the 15-minute window, and ACP error bodies both ways.
 */
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/apierror.h"
#include "api/hmac.h"

#define DATE "Wed, 26 Jul 2023 11:36:03 GMT"
#define DATE_T 1690371363

static void signature_matches_openssl(void **state)
{
    (void)state;
    char header[HMAC_HEADER_LEN], ak[64], sig[128];
    hmac_authorization("AK1", "secret-key", DATE, header);
    assert_string_equal(header, "hmac accesskey=\"AK1\", algorithm=\"hmac-sha256\", "
                                "headers=\"x-date\", "
                                "signature=\"+lAQZfZBsDZgWSrV6fiWlTjvvBckRBThESweVUJegVw=\"");
    assert_true(hmac_parse(header, ak, sizeof ak, sig, sizeof sig));
    assert_string_equal(ak, "AK1");
    assert_null(hmac_verify("secret-key", DATE, sig, DATE_T + 60));
}

static void bad_signatures_say_why(void **state)
{
    (void)state;
    char header[HMAC_HEADER_LEN], ak[64], sig[128];
    hmac_authorization("AK1", "secret-key", DATE, header);
    hmac_parse(header, ak, sizeof ak, sig, sizeof sig);
    assert_string_equal(hmac_verify("other-key", DATE, sig, DATE_T), "bad signature");
    assert_string_equal(hmac_verify("secret-key", DATE, sig, DATE_T + 16 * 60),
                        "X-Date is more than 15 minutes off");
    assert_string_equal(hmac_verify("secret-key", DATE, sig, DATE_T - 16 * 60),
                        "X-Date is more than 15 minutes off");
    assert_null(hmac_verify("secret-key", DATE, sig, DATE_T + 14 * 60));
    assert_string_equal(hmac_verify("secret-key", NULL, sig, DATE_T), "missing X-Date header");
    assert_string_equal(hmac_verify("secret-key", "2023-07-26", sig, DATE_T),
                        "X-Date is not an RFC 1123 GMT date");
    assert_false(hmac_parse("Bearer abc", ak, sizeof ak, sig, sizeof sig));
    assert_false(hmac_parse("hmac accesskey=\"a\"", ak, sizeof ak, sig, sizeof sig));
    assert_false(hmac_parse("hmac accesskey=\"a\", algorithm=\"md5\", signature=\"x\"", ak,
                            sizeof ak, sig, sizeof sig));
    char date[HMAC_DATE_LEN];
    hmac_date(DATE_T, date);
    assert_string_equal(date, DATE);
}

static void error_bodies_round_trip(void **state)
{
    (void)state;
    struct api_error e, back;
    assert_int_equal(api_error_set(&e, 409, "NameTaken", "name", "name '%s' is taken", "x"), 409);
    json_t *j = api_error_to_json(&e);
    char *text = json_dumps(j, JSON_COMPACT);
    api_error_from_body(&back, 409, text, strlen(text));
    assert_int_equal(back.status, 409);
    assert_string_equal(back.reason, "NameTaken");
    assert_string_equal(back.field, "name");
    assert_string_equal(back.message, "name 'x' is taken");
    free(text);
    json_decref(j);
    api_error_from_body(&back, 502, "<html>bad gateway</html>", 24);
    assert_string_equal(back.message, "HTTP 502: <html>bad gateway</html>");
    api_error_from_body(&back, 404, NULL, 0);
    assert_string_equal(back.message, "HTTP 404: not found");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(signature_matches_openssl),
        cmocka_unit_test(bad_signatures_say_why),
        cmocka_unit_test(error_bodies_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
