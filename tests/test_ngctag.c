/*
 * test_ngctag: NGC tags explained — framework releases with what they pin,
 * their suffixes, CUDA images, mirrors, and the images and tags left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <stdbool.h>
#include <stdio.h>

#include "api/ngctag.h"
#include "util/strbuf.h"

/* The explanation of image, or NULL when there is none (a static buffer). */
static const char *explain(const char *image)
{
    static char buf[512];
    struct strbuf sb = STRBUF_INIT;
    bool ok = ngctag_explain(image, &sb);
    snprintf(buf, sizeof buf, "%s", strbuf_str(&sb));
    strbuf_free(&sb);
    if (!ok)
        assert_string_equal(buf, ""); /* nothing appended when there is nothing to say */
    return ok ? buf : NULL;
}

static void test_framework_releases(void **state)
{
    assert_string_equal(explain("nvcr.io/nvidia/pytorch:24.05-py3"),
                        "24.05-py3: NGC release 24.05 (May 2024), CUDA 12.4, Python 3.10, "
                        "Ubuntu 22.04");
    assert_string_equal(explain("nvcr.io/nvidia/pytorch:25.06-py3"),
                        "25.06-py3: NGC release 25.06 (June 2025), CUDA 12.9, Python 3.12, "
                        "Ubuntu 24.04");
    assert_string_equal(explain("nvcr.io/nvidia/pytorch:22.12-py3"),
                        "22.12-py3: NGC release 22.12 (December 2022), CUDA 11.8, Python 3.8, "
                        "Ubuntu 20.04");
    /* a release the table does not know: its date, and what the suffix says */
    assert_string_equal(explain("nvcr.io/nvidia/pytorch:27.03-py3"),
                        "27.03-py3: NGC release 27.03 (March 2027), Python 3");
    /* one it knows only in part */
    assert_string_equal(explain("nvcr.io/nvidia/pytorch:24.12-py3"),
                        "24.12-py3: NGC release 24.12 (December 2024), CUDA 12.6, Python 3");
}

static void test_suffixes(void **state)
{
    assert_string_equal(explain("nvcr.io/nvidia/tensorflow:24.03-tf2-py3"),
                        "24.03-tf2-py3: NGC release 24.03 (March 2024), CUDA 12.4, "
                        "TensorFlow 2, Python 3.10, Ubuntu 22.04");
    assert_string_equal(explain("nvcr.io/nvidia/pytorch:24.05-py3-igpu"),
                        "24.05-py3-igpu: NGC release 24.05 (May 2024), CUDA 12.4, Python 3.10, "
                        "for integrated GPUs (Jetson, IGX), Ubuntu 22.04");
    assert_string_equal(explain("nvcr.io/nvidia/tritonserver:24.05-py3-sdk"),
                        "24.05-py3-sdk: NGC release 24.05 (May 2024), CUDA 12.4, Python 3.10, "
                        "client SDK and examples, Ubuntu 22.04");
    /* an unknown suffix is left out, not guessed at */
    assert_string_equal(explain("nvcr.io/nvidia/pytorch:24.05-xyz-py3"),
                        "24.05-xyz-py3: NGC release 24.05 (May 2024), CUDA 12.4, Python 3.10, "
                        "Ubuntu 22.04");
    /* a digest after the tag changes nothing */
    assert_non_null(explain("nvcr.io/nvidia/pytorch:24.05-py3@sha256:"
                            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
}

static void test_cuda_images(void **state)
{
    assert_string_equal(explain("nvcr.io/nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04"),
                        "12.4.1-cudnn-devel-ubuntu22.04: CUDA 12.4.1 with cuDNN, devel "
                        "(libraries, headers and nvcc, to build), Ubuntu 22.04");
    assert_string_equal(explain("nvcr.io/nvidia/cuda:12.2.0-runtime-ubuntu20.04"),
                        "12.2.0-runtime-ubuntu20.04: CUDA 12.2.0, runtime (the CUDA libraries, "
                        "to run), Ubuntu 20.04");
    assert_string_equal(explain("nvcr.io/nvidia/cuda:11.8.0-cudnn8-base-ubuntu22.04"),
                        "11.8.0-cudnn8-base-ubuntu22.04: CUDA 11.8.0 with cuDNN 8, base (the "
                        "CUDA runtime alone), Ubuntu 22.04");
    assert_null(explain("nvcr.io/nvidia/cuda:latest"));
}

static void test_mirrors_and_others(void **state)
{
    /* a mirror of NGC under an "ngc" or "nvidia" path counts */
    assert_non_null(explain("registry.cn-sh-01.sensecore.cn/ngc/pytorch:25.06-py3"));
    assert_non_null(explain("harbor.example.com:5000/mirror/nvidia/pytorch:24.05-py3"));
    /* not NGC: Docker Hub, other registries, no tag */
    assert_null(explain("pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime"));
    assert_null(explain("nvidia/cuda:12.4.1-devel-ubuntu22.04")); /* Docker Hub's */
    assert_null(explain("registry.example.com/team/train:24.05-py3"));
    assert_null(explain("nvcr.io/nvidia/pytorch"));
    assert_null(explain("local/host"));
    /* tags that read as no release */
    assert_null(explain("nvcr.io/nvidia/pytorch:latest"));
    assert_null(explain("nvcr.io/nvidia/pytorch:24.13-py3"));
    assert_null(explain("nvcr.io/nvidia/pytorch:2024.05-py3"));
    assert_null(explain("nvcr.io/nvidia/pytorch:24.5-py3"));
    assert_null(explain("nvcr.io/nvidia/pytorch:24.05py3"));
    /* not an image reference at all */
    assert_null(explain("NVCR.io/Nvidia/PyTorch:24.05-py3"));
    assert_null(explain(""));
    assert_null(explain(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_framework_releases),
        cmocka_unit_test(test_suffixes),
        cmocka_unit_test(test_cuda_images),
        cmocka_unit_test(test_mirrors_and_others),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
