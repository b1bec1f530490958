/*
 * table_filter: the table widget's filter (see table.h, table_set_filter):
 * parsing the filter text into terms — free words matched anywhere in a row,
 * `column:value` terms matched against one column's cell — and whether an
 * owner's row passes them all. Called by table.c when the filter is set and
 * on every rebuild; moved out of table.c unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"
#include "widgets/table_priv.h"

static bool is_alnum(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* ---- filter ------------------------------------------------------------ */

/* s folded, with ' ', '_' and '-' left out: how titles and terms name a column. */
char *column_name(const char *s, size_t n)
{
    char *out = xmalloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '_' && s[i] != '-')
            out[k++] = fold(s[i]);
    out[k] = '\0';
    return out;
}

static char *folded_copy(const char *s, size_t n)
{
    char *out = xmalloc(n + 1);
    for (size_t i = 0; i < n; i++)
        out[i] = fold(s[i]);
    out[n] = '\0';
    return out;
}

void free_terms(struct table *t)
{
    for (size_t i = 0; i < t->nterms; i++)
        free(t->terms[i].text);
    free(t->terms);
    t->terms = NULL;
    t->nterms = 0;
}

/* One term of the filter: `col=value` or a substring. */
static struct term parse_term(const struct table *t, const char *s, size_t n)
{
    struct term term = {.col = TERM_ANY};
    const char *eq = memchr(s, '=', n);
    if (eq && eq > s) {
        char *name = column_name(s, (size_t)(eq - s));
        term.col = TERM_NONE;
        for (size_t c = 0; c < t->ncols; c++)
            if (strcmp(name, t->cols[c].name) == 0 ||
                (t->cols[c].also && strcmp(name, t->cols[c].also) == 0)) {
                term.col = c;
                break;
            }
        free(name);
        n -= (size_t)(eq + 1 - s);
        s = eq + 1;
    }
    term.text = folded_copy(s, n);
    term.len = n;
    return term;
}

/* Splits the filter at spaces into terms. */
void parse_filter(struct table *t)
{
    const char *s = strbuf_str(&t->filter);
    free_terms(t);
    for (size_t i = 0; s[i];) {
        while (s[i] == ' ' || s[i] == '\t')
            i++;
        size_t start = i;
        while (s[i] && s[i] != ' ' && s[i] != '\t')
            i++;
        if (i == start)
            break;
        t->terms = xreallocarray(t->terms, t->nterms + 1, sizeof *t->terms);
        t->terms[t->nterms++] = parse_term(t, s + start, i - start);
    }
}

/* Whether hay (hn bytes) contains the folded needle, ASCII case-insensitively. */
static bool contains_folded(const char *hay, size_t hn, const char *needle, size_t nn)
{
    if (nn == 0)
        return true;
    for (size_t i = 0; i + nn <= hn; i++) {
        if (fold(hay[i]) != needle[0])
            continue;
        size_t j = 1;
        while (j < nn && fold(hay[i + j]) == needle[j])
            j++;
        if (j == nn)
            return true;
    }
    return false;
}

static bool equals_folded(const char *s, size_t n, const char *folded, size_t fn)
{
    if (n != fn)
        return false;
    for (size_t i = 0; i < n; i++)
        if (fold(s[i]) != folded[i])
            return false;
    return true;
}

/*
 * A `col=value` match: the cell equals value, or is an icon (a word with no
 * ASCII letter or digit), spaces, then value ("✗ FAILED").
 */
static bool cell_matches_value(const char *s, size_t n, const struct term *term)
{
    if (equals_folded(s, n, term->text, term->len))
        return true;
    const char *sp = memchr(s, ' ', n);
    if (!sp || sp == s)
        return false;
    for (const char *p = s; p < sp; p++)
        if (is_alnum(*p))
            return false;
    while (sp < s + n && *sp == ' ')
        sp++;
    return equals_folded(sp, (size_t)(s + n - sp), term->text, term->len);
}

/* Whether the owner's row passes every term of the filter. */
bool row_passes(struct table *t, size_t row)
{
    for (size_t i = 0; i < t->nterms; i++) {
        const struct term *term = &t->terms[i];
        if (term->col == TERM_NONE)
            return false;
        if (term->col != TERM_ANY) {
            const char *s = cell_text(t, row, term->col);
            if (!cell_matches_value(s, strlen(s), term))
                return false;
            continue;
        }
        bool found = false;
        for (size_t c = 0; c < t->ncols && !found; c++) {
            const char *s = cell_text(t, row, c);
            found = contains_folded(s, strlen(s), term->text, term->len);
        }
        if (!found)
            return false;
    }
    return true;
}
