/*
 * exitstatus: what trainjob exits with, for every verb (cli/) and for the
 * full-screen programs (tui/tui.h) whose status a verb returns.
 *   0 done: the job is in the state asked for (also when it already was)
 *   1 refused: the input is invalid, or the server said no (not found,
 *     wrong state, no rights)
 *   2 usage: a bad option or argument, a file that cannot be read, a bad
 *     config file
 *   3 the server cannot be reached (or the connection broke)
 */
#ifndef UTIL_EXITSTATUS_H
#define UTIL_EXITSTATUS_H

enum {
    EXIT_OK = 0,
    EXIT_INVALID = 1,
    EXIT_USAGE = 2,
    EXIT_UNREACHABLE = 3,
};

#endif
