/*
 * exec_wire: the one message `trainjob exec` (api/exec.c) sends trainjobd's
 * exec helper (engine/shim_exec.c) on the connection the engine switched to
 * it: this header, then len bytes of NUL-ended strings (envc "TERM=…"
 * first, then argc arguments), with four descriptors (SCM_RIGHTS): the
 * command's stdin, stdout, stderr and the pipe the helper answers on
 * ("exit N\n" or "error WHY\n").
 */
#ifndef API_EXEC_WIRE_H
#define API_EXEC_WIRE_H

#include <stdint.h>

#define EXEC_WIRE_MAGIC "TJX1"
#define EXEC_WIRE_TTY 1u /* flags: stdin is a terminal's side: make it the controlling one */
#define EXEC_WIRE_MAX (256u << 10) /* the most bytes of strings */
#define EXEC_WIRE_MAX_ARGS 4096u
/* The protocol name in the HTTP Upgrade header of the request. */
#define EXEC_WIRE_UPGRADE "trainjob-exec"

struct exec_wire_header {
    char magic[4];
    uint32_t flags;
    uint32_t envc;
    uint32_t argc;
    uint32_t len;
};

#endif
