/*
 * wizard_draw: draws the wizard (tui/wizard.c calls wizard_draw from its
 * owner's loop) — the section list with each section's marks and counts,
 * the current section's form or the Review page, the status line and the
 * key bar. Reads the wizard's state; changes nothing but its dirty flag.
 */
#include <stdio.h>
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
#include "widgets/form.h"
#include "widgets/keybar.h"
#include "widgets/select.h"

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

/* The review page: totals, every finding, and the exact job that will be sent. */
static void draw_review(struct wizard *wz, const struct term *t, int y, int x, int h, int w)
{
    wz_build_job(wz);
    const struct role *r = jobspec_worker(&wz->job);
    const struct catalog_pool *p = wz_current_pool(wz);
    const struct catalog_spec *s = p && r && r->resource_spec_count && r->resource_spec[0].name
                                       ? catalog_pool_spec(p, r->resource_spec[0].name)
                                       : NULL;
    int workers = r && r->has_total_replicas ? r->total_replicas : 0;
    attrset(t->role[THEME_ROLE_TITLE]);
    mvprintw(y++, x, "Review: %d worker%s, %d device%s · %zu error%s, %zu warning%s", workers,
             workers == 1 ? "" : "s", s ? workers * s->devices : 0,
             s && workers * s->devices == 1 ? "" : "s", wizard_error_count(wz),
             wizard_error_count(wz) == 1 ? "" : "s",
             findings_count(&wz->findings, SEVERITY_WARNING),
             findings_count(&wz->findings, SEVERITY_WARNING) == 1 ? "" : "s");
    for (size_t i = 0; i < wz->findings.count && y < h - 2; i++) {
        const struct finding *f = &wz->findings.items[i];
        struct strbuf sb = STRBUF_INIT;
        strbuf_addf(&sb, "%s %s: %s", f->severity == SEVERITY_ERROR ? (t->utf8 ? "✗" : "x") : "!",
                    f->path, f->message);
        struct strbuf clean = STRBUF_INIT;
        utf8_sanitize(&clean, sb.buf, sb.len, 0);
        attrset(f->severity == SEVERITY_ERROR ? t->role[THEME_ROLE_FIELD_ERROR]
                                              : t->role[THEME_ROLE_FIELD_WARNING]);
        mvaddnstr(y++, x, strbuf_str(&clean), w);
        strbuf_free(&clean);
        strbuf_free(&sb);
    }
    y++;
    attrset(t->role[THEME_ROLE_DIM]);
    mvprintw(y++, x,
             "The job as it will be sent (%s; t toggles):", wz->review_json ? "JSON" : "YAML");
    struct strbuf doc = STRBUF_INIT;
    jobfile_write(&wz->job, wz->review_json ? JOBFILE_JSON : JOBFILE_YAML, &doc);
    struct strbuf clean = STRBUF_INIT;
    utf8_sanitize(&clean, doc.buf ? doc.buf : "", doc.len, UTF8_KEEP_NEWLINE);
    attrset(t->role[THEME_ROLE_NORMAL]);
    const char *line = strbuf_str(&clean);
    while (*line && y < h) {
        size_t n = strcspn(line, "\n");
        mvaddnstr(y++, x, line, (int)n < w ? (int)n : w);
        line += n + (line[n] == '\n');
    }
    strbuf_free(&clean);
    strbuf_free(&doc);
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
