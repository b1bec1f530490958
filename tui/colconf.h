/*
 * colconf: the user's choice and order of the jobs view's columns, kept in
 * $XDG_CONFIG_HOME/trainjob/columns (~/.config/trainjob/columns by default):
 * one column title per line, in the order shown; a column not listed is
 * hidden. Blank lines and lines starting with '#' are ignored; titles match
 * ignoring case, spaces, '_' and '-' ("display_name" is "DISPLAY NAME").
 * Called by tui/jobs_view.c (load at start, save after the `C` list); pure
 * parse/format here so tests drive it without a screen.
 *
 * The file is the user's but read as hostile: a size cap, a line cap, an
 * unknown or repeated title or an empty choice is an error naming
 * file:line, and the caller then keeps the defaults — never a crash.
 */
#ifndef TUI_COLCONF_H
#define TUI_COLCONF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;

#define COLCONF_MAX_BYTES 4096

/*
 * Parses text (len bytes) against the n titles: order[0..*count) gets the
 * columns shown, by index into titles (order holds n). former (NULL, or n
 * entries, NULL where none): a title a column had before, still read, so
 * a file written then keeps working. Returns 0, or -1 with "FILE:LINE:
 * why" in err (order then undefined).
 */
int colconf_parse(const char *text, size_t len, const char *file, const char *const *titles,
                  const char *const *former, size_t n, size_t *order, size_t *count,
                  struct strbuf *err);
/* The file's text for the columns order[0..count) (a header comment, a title a line). */
void colconf_format(struct strbuf *out, const char *const *titles, const size_t *order,
                    size_t count);
/* The user's columns file (malloc'd); tilde: $HOME written "~", to show. */
char *colconf_user_file(bool tilde);
/*
 * Loads path: 1 when it set order/count, 0 when there is no file, -1 with
 * the message in err (the caller keeps its defaults).
 */
int colconf_load(const char *path, const char *const *titles, const char *const *former, size_t n,
                 size_t *order, size_t *count, struct strbuf *err);
/* Writes the choice to path atomically (its directory made); 0, or -1 with err. */
int colconf_save(const char *path, const char *const *titles, const size_t *order, size_t count,
                 struct strbuf *err);

#endif
