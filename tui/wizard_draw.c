/*
 * wizard_draw: draws the wizard (tui/wizard.c calls wizard_draw from its
 * owner's loop) — the section list with each section's marks and counts,
 * the current section's form or the Review page, the status line and the
 * key bar. Reads the wizard's state; changes nothing but its dirty flag.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/catalog.h"
#include "api/finding.h"
#include "api/jobfile.h"
#include "api/jobspec.h"
#include "tui/term.h"
#include "tui/wizard.h"
#include "tui/wizard_lists.h"
#include "tui/wizard_priv.h"
#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/xalloc.h"
#include "widgets/form.h"
#include "widgets/keybar.h"
#include "widgets/select.h"
#include "widgets/textfield.h"
#include "widgets/widget.h"

const char *const wizard_section_titles[SECTION_COUNT] = {
    "Basics", "Resources",   "Image",       "Fault tolerance",
    "Data",   "Environment", "TensorBoard", "Review",
};

static void draw_sections(struct wizard *wz, const struct term *t, int h)
{
    attrset(t->role[THEME_ROLE_TITLE]);
    mvaddstr(0, 0, " trainjob · new job");
    for (int s = 0; s < SECTION_COUNT && s + 2 < h; s++) {
        const char *mark = t->utf8 ? "✓" : "+";
        enum theme_role role = THEME_ROLE_SECTION_OK;
        char count[16] = "";
        if (wz->errors[s]) {
            mark = t->utf8 ? "✗" : "x";
            role = THEME_ROLE_SECTION_ERROR;
            snprintf(count, sizeof count, " %d", wz->errors[s]);
        } else if (wz->warnings[s]) {
            mark = "!";
            role = THEME_ROLE_SECTION_WARNING;
            snprintf(count, sizeof count, " %d", wz->warnings[s]);
        }
        int y = 2 + s;
        attrset(s == (int)wz->cur ? t->role[THEME_ROLE_SELECTED] : t->role[THEME_ROLE_NORMAL]);
        mvprintw(y, 0, " %-*s", SIDEBAR_W - 2, "");
        attron(t->role[role]);
        mvprintw(y, 1, "%s", mark);
        attroff(t->role[role]);
        printw(" %s%s", wizard_section_titles[s], count);
    }
    attrset(t->role[THEME_ROLE_BORDER]);
    mvvline(1, SIDEBAR_W - 1, t->utf8 ? ACS_VLINE : '|', h - 2);
}

/* Review's lines, wrapped to its width: each with its role and the finding it shows (-1: none). */
struct review_text {
    struct strbuf text; /* the lines, each ending in '\n' */
    struct review_line {
        size_t off, len;
        enum theme_role role;
        long finding;
    } * lines;
    size_t count, cap;
};

/* Appends s (sanitized, one logical line) wrapped at w columns; continuations indented by 2. */
static void review_add(struct review_text *rt, const char *s, size_t n, int w, enum theme_role role,
                       long finding)
{
    struct strbuf clean = STRBUF_INIT;
    utf8_sanitize(&clean, s, n, 0);
    const char *p = strbuf_str(&clean);
    size_t left = clean.len;
    bool first = true;
    do {
        size_t len, next = widget_wrap_line(p, left, first ? w : w - 2, &len);
        if (rt->count == rt->cap) {
            rt->cap = rt->cap ? rt->cap * 2 : 64;
            rt->lines = xrealloc(rt->lines, rt->cap * sizeof *rt->lines);
        }
        size_t off = rt->text.len;
        if (!first)
            strbuf_adds(&rt->text, "  ");
        strbuf_add(&rt->text, p, len);
        rt->lines[rt->count++] = (struct review_line){off, rt->text.len - off, role, finding};
        strbuf_addc(&rt->text, '\n');
        p += next;
        left -= next;
        first = false;
    } while (left > 0 && w > 2);
    strbuf_free(&clean);
}

/*
 * The review page, scrolled to wz->review_top: the totals, the generated
 * name, every finding (the one n/N chose highlighted: Enter goes to its
 * field), and the exact job that will be sent; long lines wrap.
 */
static void draw_review(struct wizard *wz, const struct term *t, int y, int x, int h, int w)
{
    wz_build_job(wz);
    const struct role *r = jobspec_worker(&wz->job);
    const struct catalog_pool *p = wz_current_pool(wz);
    const struct catalog_spec *s = p && r && r->resource_spec_count && r->resource_spec[0].name
                                       ? catalog_pool_spec(p, r->resource_spec[0].name)
                                       : NULL;
    int workers = r && r->has_total_replicas ? r->total_replicas : 0;
    struct review_text rt = {STRBUF_INIT, NULL, 0, 0};
    struct strbuf sb = STRBUF_INIT;
    size_t errors = wizard_error_count(wz);
    size_t warnings = findings_count(&wz->findings, SEVERITY_WARNING);
    strbuf_addf(&sb, "Review: %d worker%s, %d device%s \xc2\xb7 %zu error%s, %zu warning%s",
                workers, workers == 1 ? "" : "s", s ? workers * s->devices : 0,
                s && workers * s->devices == 1 ? "" : "s", errors, errors == 1 ? "" : "s", warnings,
                warnings == 1 ? "" : "s");
    review_add(&rt, sb.buf, sb.len, w, THEME_ROLE_TITLE, -1);
    strbuf_reset(&sb);
    if (wz->generated_name && !*textfield_value(wz->name)) {
        strbuf_addf(&sb, "Name: %s (generated; type one in Basics to choose)", wz->generated_name);
        review_add(&rt, sb.buf, sb.len, w, THEME_ROLE_NORMAL, -1);
        strbuf_reset(&sb);
    }
    static const char keys[] = "Up/Down, PgUp/PgDn, Home/End scroll (PgUp at the top goes back) "
                               "\xc2\xb7 n/N next/previous finding, Enter goes to its field "
                               "\xc2\xb7 Ctrl-S submits";
    review_add(&rt, keys, sizeof keys - 1, w, THEME_ROLE_DIM, -1);
    for (size_t i = 0; i < wz->findings.count; i++) {
        const struct finding *f = &wz->findings.items[i];
        strbuf_addf(&sb, "%s %s: %s",
                    f->severity == SEVERITY_ERROR ? (t->utf8 ? "\xe2\x9c\x97" : "x") : "!", f->path,
                    f->message);
        enum theme_role role = (long)i == wz->review_sel       ? THEME_ROLE_SELECTED
                               : f->severity == SEVERITY_ERROR ? THEME_ROLE_FIELD_ERROR
                                                               : THEME_ROLE_FIELD_WARNING;
        review_add(&rt, sb.buf, sb.len, w, role, (long)i);
        strbuf_reset(&sb);
    }
    wizard_kept_from_file(wz, &sb);
    if (sb.len) { /* nothing the form does not show is lost: it is sent, and said here */
        char *kept = strbuf_detach(&sb, NULL);
        strbuf_addf(&sb, "Kept from the file (no field here edits them): %s", kept);
        free(kept);
        review_add(&rt, sb.buf, sb.len, w, THEME_ROLE_NORMAL, -1);
        strbuf_reset(&sb);
    }
    review_add(&rt, "", 0, w, THEME_ROLE_NORMAL, -1);
    strbuf_addf(&sb,
                "The job as it will be sent (%s; t toggles):", wz->review_json ? "JSON" : "YAML");
    review_add(&rt, sb.buf, sb.len, w, THEME_ROLE_DIM, -1);
    strbuf_free(&sb);
    struct strbuf doc = STRBUF_INIT;
    jobfile_write(&wz->job, wz->review_json ? JOBFILE_JSON : JOBFILE_YAML, &doc);
    const char *line = strbuf_str(&doc);
    while (*line) {
        size_t n = strcspn(line, "\n");
        review_add(&rt, line, n, w, THEME_ROLE_NORMAL, -1);
        line += n + (line[n] == '\n');
    }
    strbuf_free(&doc);

    /* Scroll: clamp, and bring the finding n/N chose into view. */
    int page = h - y > 1 ? h - y : 1, total = (int)rt.count;
    bool scrolls = total > page;
    if (scrolls && page > 1)
        page--; /* the last row says where the view is */
    if (wz->review_sel >= 0 && wz->review_follow) {
        for (int i = 0; i < total; i++)
            if (rt.lines[i].finding == wz->review_sel) {
                if (i < wz->review_top)
                    wz->review_top = i;
                else if (i >= wz->review_top + page)
                    wz->review_top = i - page + 1;
                break;
            }
        wz->review_follow = false;
    }
    if (wz->review_top > total - page)
        wz->review_top = total - page;
    if (wz->review_top < 0)
        wz->review_top = 0;
    wz->review_page = page;
    wz->review_lines = total;
    int y0 = y;
    for (int i = wz->review_top; i < total && y < y0 + page; i++, y++) {
        attrset(t->role[rt.lines[i].role]);
        widget_put_clipped(stdscr, y, x, w, rt.text.buf + rt.lines[i].off, rt.lines[i].len,
                           t->utf8);
    }
    if (scrolls) {
        int last = wz->review_top + page < total ? wz->review_top + page : total;
        attrset(t->role[THEME_ROLE_DIM]);
        mvprintw(y0 + page, x, "lines %d-%d of %d%s", wz->review_top + 1, last, total,
                 last < total ? " \xc2\xb7 more below" : "");
    }
    free(rt.lines);
    strbuf_free(&rt.text);
}

void wizard_draw(struct wizard *wz, const struct term *t, const char *status)
{
    int h = LINES, w = COLS;
    bkgdset(' ' | t->role[THEME_ROLE_NORMAL]);
    erase();
    draw_sections(wz, t, h - 1);
    int fx = SIDEBAR_W + 1, fw = w - fx - 1;
    struct select *open = NULL;
    if (wz->cur == SECTION_REVIEW) {
        draw_review(wz, t, 1, fx, h - 2, fw);
    } else {
        struct form *f = wz->forms[wz->cur];
        form_set_utf8(f, t->utf8);
        for (int i = 0; i < LIST_COUNT; i++)
            wlist_set_palette(wz->lists[i].l, &t->palette, t->utf8);
        attrset(t->role[THEME_ROLE_TITLE]);
        mvaddstr(1, fx, wizard_section_titles[wz->cur]);
        form_draw(f, stdscr, 2, fx, h - 4, fw, &t->palette);
        size_t e = form_focused(f);
        struct widget *wd = e != FORM_NO_ENTRY ? form_widget_at(f, e) : NULL;
        struct wlist *list = wd ? wz_list_at(wz, wz->cur, e) : NULL;
        int ay, ax, aw;
        if (list) { /* a row's select: where its row drew it in the form's pad */
            open = wlist_open_select(list, &ay, &ax, &aw);
            if (open)
                select_set_anchor(open, 2 + ay - form_scroll(f), fx + ax, aw);
        } else {
            open = wd ? select_from_widget(wd) : NULL;
            if (open && !select_is_open(open))
                open = NULL;
            if (open && form_entry_pos(f, e, &ay, &ax, &aw))
                select_set_anchor(open, ay, ax, aw); /* the form draws through a pad */
        }
    }
    int cy, cx;
    getyx(stdscr, cy, cx);
    if (status && *status) { /* it may quote a file or a server: sanitized */
        struct strbuf clean = STRBUF_INIT;
        utf8_sanitize(&clean, status, strlen(status), 0);
        attrset(t->role[THEME_ROLE_MESSAGE]);
        widget_put_clipped(stdscr, h - 2, fx, fw, clean.buf ? clean.buf : "", clean.len, t->utf8);
        strbuf_free(&clean);
    }
    keybar_set_palette(wz->keybar, &t->palette);
    attrset(t->role[THEME_ROLE_NORMAL]);
    keybar_widget(wz->keybar)->ops->draw(keybar_widget(wz->keybar), stdscr, h - 1, 0, w, false);
    move(cy, cx);
    curs_set(wz->cur == SECTION_REVIEW ? 0 : 1);
    wnoutrefresh(stdscr);
    if (open) {
        select_set_palette(open, &t->palette);
        select_draw_popup(open);
    }
    wz->dirty = false;
}
