/*
 * bench_monitor: the live jobs view's costs with 10,000 jobs — a watch
 * stream's first sync into the jobstore (JSON encoded and decoded), the
 * memory the rows take, a full frame of the jobs view (120x40, into a counted
 * off-screen terminal, every cell repainted as after ^L), and the frame
 * after one job changed state (what a live dashboard draws per event), and
 * the workers pane over 1,000 workers (a full frame; one worker exiting);
 * and the bytes of a change that shows a state wider than any on the screen
 * (the first SUSPENDED) next to the same change to FAILED, in the same run.
 * The jobs are examples/pytorch-ddp.yaml under 10,000 names, each with two
 * workers, as trainjobd's watch stream sends them.
 */
#include <curses.h>
#include <linux/perf_event.h>
#include <locale.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "api/acp.h"
#include "api/backend.h"
#include "api/finding.h"
#include "api/jobfile.h"
#include "api/jobspec_json.h"
#include "bench/bench.h"
#include "tui/app.h"
#include "tui/jobs_view.h"
#include "tui/jobstore.h"
#include "tui/term.h"
#include "tui/workers_pane.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define RUNS 31
#define JOBS 10000
#define VIEW_W 120
#define VIEW_H 40

static double now_us(void)
{
    return bench_now_ns() / 1e3;
}

static double median(double *v, size_t n)
{
    return bench_quantile(v, n, 0.5);
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

static int apply_message(void *ctx, const struct watch_message *m)
{
    jobstore_apply(ctx, m);
    return 0;
}

/* The bytes of the last sync_store's stream. */
static size_t sync_bytes;

/*
 * The first sync of JOBS jobs made from the example (names differ), as it
 * really travels: each message encoded as the engine does (jobspec_to_json,
 * the workers, one NDJSON line), then each line decoded as the client does
 * (acp_watch_decode) into the store. Only the socket is left out.
 */
static void sync_store(struct jobstore *s, const struct jobspec *base)
{
    struct strbuf text = STRBUF_INIT;
    struct worker_info w[2];
    memset(w, 0, sizeof w);
    w[0].name = (char *)"master-0";
    w[0].role = (char *)"master";
    w[0].node_name = (char *)"local-0";
    w[0].phase = WORKER_RUNNING;
    w[0].devices = (char *)"0";
    w[1].name = (char *)"worker-0";
    w[1].role = (char *)"worker";
    w[1].node_name = (char *)"local-0";
    w[1].phase = WORKER_RUNNING;
    w[1].devices = (char *)"1";
    jobstore_begin_sync(s);
    for (int i = 0; i < JOBS; i++) {
        struct watch_message m;
        memset(&m, 0, sizeof m);
        m.kind = WATCH_JOB;
        m.job = *base;
        char name[32], uid[40];
        snprintf(name, sizeof name, "pt-%08x", (unsigned)(i * 2654435761u));
        snprintf(uid, sizeof uid, "uid-%d", i);
        m.job.name = name;
        m.job.uid = uid;
        m.job.state = (enum job_state)(JOB_STATE_QUEUEING + i % 8);
        m.job.create_time = (char *)"2026-11-29T10:00:00Z";
        json_t *workers = json_array();
        for (int k = 0; k < 2; k++)
            json_array_append_new(workers, worker_info_to_json(&w[k]));
        json_t *msg = json_pack("{s:s, s:o, s:o}", "type", "JOB", "job", jobspec_to_json(&m.job),
                                "workers", workers);
        char *line = json_dumps(msg, JSON_COMPACT);
        json_decref(msg);
        strbuf_addf(&text, "%s\n", line);
        free(line);
    }
    strbuf_addf(&text, "{\"type\":\"SYNCED\"}\n");
    sync_bytes = text.len;
    for (size_t start = 0; start < text.len;) {
        const char *nl = memchr(text.buf + start, '\n', text.len - start);
        size_t len = (size_t)(nl - (text.buf + start));
        acp_watch_decode(text.buf + start, len, apply_message, s);
        start += len + 1;
    }
    strbuf_free(&text);
}

int main(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8")) {
        fprintf(stderr, "bench_monitor: no C.UTF-8 locale\n");
        return 1;
    }
    struct jobfile jf;
    jobfile_init(&jf);
    struct findings fs = FINDINGS_INIT;
    struct strbuf io = STRBUF_INIT;
    if (jobfile_load("examples/pytorch-ddp.yaml", &jf, &fs, &io) != JOBFILE_OK) {
        fprintf(stderr, "bench_monitor: cannot read examples/pytorch-ddp.yaml\n");
        return 1;
    }
    findings_free(&fs);
    strbuf_free(&io);
    const struct jobspec base = jf.job;
    int counter = bench_counter_open();

    /* The first sync, fresh store each run. */
    double sync_us[5];
    for (int r = 0; r < 5; r++) {
        struct jobstore *s = jobstore_new();
        double t0 = now_us();
        sync_store(s, &base);
        sync_us[r] = now_us() - t0;
        jobstore_free(s);
    }

    /* Memory of the rows. */
    malloc_trim(0);
    struct mallinfo2 before = mallinfo2();
    long rss0 = rss_kib();
    struct jobstore *s = jobstore_new();
    sync_store(s, &base);
    struct mallinfo2 after = mallinfo2();
    long rss1 = rss_kib();
    double heap_mib = (double)(after.uordblks - before.uordblks) / 1048576.0;

    struct bench_term term;
    if (!bench_term_open(&term, VIEW_H, VIEW_W)) {
        fprintf(stderr, "bench_monitor: no off-screen terminal\n");
        return 1;
    }
    struct term t;
    memset(&t, 0, sizeof t);
    t.utf8 = true;
    t.palette = *widget_palette_mono();
    struct monitor *m = monitor_new_detached(s, &t, false);
    struct screen *jv = jobs_view_new(m);
    jv->ops->draw(jv, stdscr, 1, 0, VIEW_H - 3, VIEW_W, true); /* warm up */
    doupdate();
    double full_us[RUNS], full_in[RUNS], ev_us[RUNS], ev_in[RUNS];
    double full_b[RUNS], ev_b[RUNS], wfull_b[RUNS], wexit_b[RUNS];
    for (int i = 0; i < RUNS; i++) {
        werase(stdscr);
        bench_term_force_repaint();
        double b0 = bench_term_bytes(&term);
        double t0 = now_us();
        bench_counter_start(counter);
        jv->ops->draw(jv, stdscr, 1, 0, VIEW_H - 3, VIEW_W, true);
        wnoutrefresh(stdscr);
        doupdate();
        full_in[i] = bench_counter_stop(counter);
        full_us[i] = now_us() - t0;
        full_b[i] = bench_term_bytes(&term) - b0;

        /* One job on the screen changes state: the store, the view's rows, a frame. */
        const struct job_row *row = jobstore_at(s, (size_t)i % 20);
        struct watch_message msg;
        memset(&msg, 0, sizeof msg);
        msg.kind = WATCH_JOB;
        msg.job = base;
        msg.job.name = row->name;
        msg.job.uid = row->uid;
        msg.job.create_time = row->create_time;
        msg.job.state = row->state == JOB_STATE_RUNNING ? JOB_STATE_FAILED : JOB_STATE_RUNNING;
        msg.workers = row->workers;
        b0 = bench_term_bytes(&term);
        t0 = now_us();
        bench_counter_start(counter);
        jobstore_apply(s, &msg);
        jv->ops->changed(jv);
        jv->ops->draw(jv, stdscr, 1, 0, VIEW_H - 3, VIEW_W, false);
        wnoutrefresh(stdscr);
        doupdate();
        ev_in[i] = bench_counter_stop(counter);
        ev_us[i] = now_us() - t0;
        ev_b[i] = bench_term_bytes(&term) - b0;
    }
    /*
     * Issue 24: a change that shows a state wider than any on the screen (the
     * first SUSPENDED) against the same change to one that is not (FAILED):
     * the bytes of each frame, each change undone (unmeasured) before the next.
     */
    double widen_b[RUNS], plain_b[RUNS];
    for (size_t k = 0; k < 2 * VIEW_H; k++) { /* the rows on the screen: RUNNING or FAILED */
        const struct job_row *row = jobstore_at(s, k);
        struct watch_message msg;
        memset(&msg, 0, sizeof msg);
        msg.kind = WATCH_JOB;
        msg.job = base;
        msg.job.name = row->name;
        msg.job.uid = row->uid;
        msg.job.create_time = row->create_time;
        msg.job.state = k % 3 ? JOB_STATE_RUNNING : JOB_STATE_FAILED;
        msg.workers = row->workers;
        jobstore_apply(s, &msg);
    }
    jv->ops->changed(jv);
    jv->ops->draw(jv, stdscr, 1, 0, VIEW_H - 3, VIEW_W, false);
    wnoutrefresh(stdscr);
    doupdate();
    for (int i = 0; i < RUNS; i++) {
        /* RUNNING first, then SUSPENDED (counted), back, FAILED (counted), back */
        static const enum job_state seq[] = {JOB_STATE_RUNNING, JOB_STATE_SUSPENDED,
                                             JOB_STATE_RUNNING, JOB_STATE_FAILED,
                                             JOB_STATE_RUNNING};
        size_t k = (size_t)i % 20;
        for (size_t step = 0; step < sizeof seq / sizeof seq[0]; step++) {
            const struct job_row *row = jobstore_at(s, k);
            struct watch_message msg;
            memset(&msg, 0, sizeof msg);
            msg.kind = WATCH_JOB;
            msg.job = base;
            msg.job.name = row->name;
            msg.job.uid = row->uid;
            msg.job.create_time = row->create_time;
            msg.job.state = seq[step];
            msg.workers = row->workers;
            double b0 = bench_term_bytes(&term);
            jobstore_apply(s, &msg);
            jv->ops->changed(jv);
            jv->ops->draw(jv, stdscr, 1, 0, VIEW_H - 3, VIEW_W, false);
            wnoutrefresh(stdscr);
            doupdate();
            if (step == 1)
                widen_b[i] = bench_term_bytes(&term) - b0;
            if (step == 3)
                plain_b[i] = bench_term_bytes(&term) - b0;
        }
    }
    /* The workers pane with 1,000 workers: a full frame, and one worker's exit. */
    struct worker_list wl = {xcalloc(1000, sizeof(struct worker_info)), 1000};
    char names[1000][16];
    for (int i = 0; i < 1000; i++) {
        snprintf(names[i], sizeof names[i], i ? "worker-%d" : "master-0", i - 1);
        wl.workers[i].name = names[i];
        wl.workers[i].role = (char *)(i ? "worker" : "master");
        wl.workers[i].node_name = (char *)"n1";
        wl.workers[i].phase = WORKER_RUNNING;
        wl.workers[i].devices = (char *)"0";
        wl.workers[i].create_time = (char *)"2026-11-29T10:00:00Z";
    }
    struct workers_pane *wp = workers_pane_new();
    workers_pane_set_style(wp, &t.palette, true);
    workers_pane_set_workers(wp, &wl, 0);
    double wfull_us[RUNS], wfull_in[RUNS], wexit_us[RUNS], wexit_in[RUNS];
    for (int i = 0; i < RUNS; i++) {
        werase(stdscr);
        workers_pane_invalidate(wp);
        bench_term_force_repaint();
        double b0 = bench_term_bytes(&term);
        double t0 = now_us();
        bench_counter_start(counter);
        workers_pane_draw(wp, stdscr, 1, 0, VIEW_H - 3, VIEW_W, true);
        wnoutrefresh(stdscr);
        doupdate();
        wfull_in[i] = bench_counter_stop(counter);
        wfull_us[i] = now_us() - t0;
        wfull_b[i] = bench_term_bytes(&term) - b0;
        /* A worker on the screen exits 137: the list again, one frame. */
        struct worker_info *w = &wl.workers[i % 20];
        w->has_exit_code = !w->has_exit_code;
        w->exit_code = 137;
        b0 = bench_term_bytes(&term);
        t0 = now_us();
        bench_counter_start(counter);
        workers_pane_set_workers(wp, &wl, 0);
        workers_pane_draw(wp, stdscr, 1, 0, VIEW_H - 3, VIEW_W, true);
        wnoutrefresh(stdscr);
        doupdate();
        wexit_in[i] = bench_counter_stop(counter);
        wexit_us[i] = now_us() - t0;
        wexit_b[i] = bench_term_bytes(&term) - b0;
    }
    workers_pane_free(wp);
    free(wl.workers);
    monitor_free_detached(m);
    bench_term_close(&term);

    printf("live screens (tui/jobstore, jobs_view, workers_pane): %d jobs of "
           "examples/pytorch-ddp.yaml, "
           "2 workers each; frames %dx%d into a counted off-screen terminal, %d runs\n",
           JOBS, VIEW_W, VIEW_H, RUNS);
    printf("| %-50s | %12s | %14s | %8s | %-12s |\n", "measurement", "median", "instructions",
           "bytes", "target");
    printf("|----------------------------------------------------|--------------|----------------|"
           "----------|--------------|\n");
    char instr[32];
    printf("| %-50s | %9.1f ms | %14s | %8.0f | %-12s |\n",
           "watch sync of 10,000 jobs: encode, decode, store", median(sync_us, 5) / 1000, "n/a",
           (double)sync_bytes / JOBS, "< 1 s live");
    printf("| %-50s | %8.1f MiB | %14s | %8s | %-12s |\n", "heap of the store with 10,000 jobs",
           heap_mib, "", "", "< 20 MB RSS");
    printf("| %-50s | %8.1f MiB | %14s | %8s | %-12s |\n", "RSS growth for the store",
           (rss1 - rss0) / 1024.0, "", "", "-");
    snprintf(instr, sizeof instr, "%.0f", counter >= 0 ? median(full_in, RUNS) : -1);
    printf("| %-50s | %9.1f µs | %14s | %8.0f | %-12s |\n", "jobs view full frame over 10,000 jobs",
           median(full_us, RUNS), counter >= 0 ? instr : "n/a", median(full_b, RUNS), "< 2 ms");
    snprintf(instr, sizeof instr, "%.0f", counter >= 0 ? median(ev_in, RUNS) : -1);
    printf("| %-50s | %9.1f µs | %14s | %8.0f | %-12s |\n", "one job changes: store + rows + frame",
           median(ev_us, RUNS), counter >= 0 ? instr : "n/a", median(ev_b, RUNS), "< 2 ms");
    printf("| %-50s | %9.2f x  | %14s | %8.0f | %-12s |\n",
           "a change widening STATE (first SUSPENDED) / plain", median(widen_b, RUNS) /
           median(plain_b, RUNS), "", median(widen_b, RUNS), "<= 2x plain");
    printf("| %-50s | %12s | %14s | %8.0f | %-12s |\n",
           "...the same change not widening (FAILED): bytes", "reference", "", median(plain_b, RUNS),
           "-");
    snprintf(instr, sizeof instr, "%.0f", counter >= 0 ? median(wfull_in, RUNS) : -1);
    printf("| %-50s | %9.1f µs | %14s | %8.0f | %-12s |\n",
           "workers pane full frame, 1,000 workers", median(wfull_us, RUNS),
           counter >= 0 ? instr : "n/a", median(wfull_b, RUNS), "< 2 ms");
    snprintf(instr, sizeof instr, "%.0f", counter >= 0 ? median(wexit_in, RUNS) : -1);
    printf("| %-50s | %9.1f µs | %14s | %8.0f | %-12s |\n",
           "one worker exits: list + frame (1,000)", median(wexit_us, RUNS),
           counter >= 0 ? instr : "n/a", median(wexit_b, RUNS), "< 2 ms");
    jobstore_free(s);
    jobfile_free(&jf);
    if (counter >= 0)
        close(counter);
    return 0;
}
