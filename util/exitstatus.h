/*
 * exitstatus: what trainjob exits with, for every verb (cli/) and for the
 * full-screen programs (tui/tui.h) whose status a verb returns.
 *   0 success, 1 the input is invalid (or the operation failed: the server
 *   said no), 2 usage or I/O errors, or the server cannot be reached.
 */
#ifndef UTIL_EXITSTATUS_H
#define UTIL_EXITSTATUS_H

enum {
    EXIT_OK = 0,
    EXIT_INVALID = 1,
    EXIT_USAGE = 2,
};

#endif
