/*
 * ngctag: what the tag of an NGC image says (FORM.md §3: "NGC images show
 * their tag's meaning: release, CUDA, Python, Ubuntu").
 *
 * NGC framework images are tagged by release and flavour —
 * nvcr.io/nvidia/pytorch:24.05-py3 is release 24.05 (May 2024), for
 * Python 3 — and each release pins a CUDA, Ubuntu and Python, which a
 * table here knows for the releases it lists. NGC's CUDA images are tagged
 * by CUDA version, flavour and OS (cuda:12.4.1-cudnn-devel-ubuntu22.04).
 * Mirrors count as NGC: any registry whose path has an "nvidia" or "ngc"
 * component (registry.cn-sh-01.sensecore.cn/ngc/pytorch:25.06-py3).
 *
 * The wizard shows the explanation under the image field. No curses here.
 */
#ifndef API_NGCTAG_H
#define API_NGCTAG_H

#include <stdbool.h>

struct strbuf;

/*
 * Appends one line explaining image's tag to out, e.g.
 *   "24.05-py3: NGC release 24.05 (May 2024), CUDA 12.4, Python 3.10, Ubuntu 22.04"
 * and returns true; false (out untouched) when image is no NGC image, or
 * its tag reads as no NGC tag.
 */
bool ngctag_explain(const char *image, struct strbuf *out);

#endif
