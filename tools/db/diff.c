/*
 * diff.c - `piano-db diff [A B]`: per-function self time of two runs, sorted
 * by the absolute change, with a significance verdict per function (see
 * stats.c for the method). Functions match by (name, file), so a function
 * whose line moved between the runs still pairs up.
 */
#include "piano_db.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const fnrow *a, *b;
    int64_t delta;
    sig_result sig;
    int flagged; /* significant slowdown above --fail-above */
    char *label;   /* the name, with the file's shortest telling suffix when the name is on more than one row */
} drow;

/* Change of the per-call median self time from A to B, in percent. */
static double median_change_pct(const drow *d)
{
    return (d->sig.median_b_ns - d->sig.median_a_ns) * 100.0 / d->sig.median_a_ns;
}

static int cmp_drow(const void *x, const void *y)
{
    const drow *p = x, *q = y;
    int64_t dp = p->delta < 0 ? -p->delta : p->delta, dq = q->delta < 0 ? -q->delta : q->delta;
    if (dp != dq)
        return dp > dq ? -1 : 1;
    const fnrow *fp = p->a ? p->a : p->b, *fq = q->a ? q->a : q->b;
    int c = strcmp(fp->name, fq->name);
    return c ? c : strcmp(fp->file, fq->file);
}

static int cmp_key(const fnrow *a, const fnrow *b)
{
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->file, b->file);
}

static const char *verdict(const drow *d)
{
    if (!d->a)
        return "(added)";
    if (!d->b)
        return "(removed)";
    if (!d->sig.significant)
        return "-";
    return d->sig.z > 0 ? "slower" : "faster";
}

int cmd_diff(pdb *p, const pdb_opts *o)
{
    if (o->json && o->csv)
        pdb_usage_die("diff: --json and --csv exclude each other");
    int64_t ab[2];
    pdb_pick_runs(p, o, 0, 2, "diff [A B]", ab);
    int64_t ia = ab[0], ib = ab[1];
    run_info ra, rb;
    pdb_run_load(p, ia, &ra);
    pdb_run_load(p, ib, &rb);
    int flags = AGG_KEEP_HIST | (o->uncorrected ? 0 : AGG_CORRECTED);
    fnset sa, sb;
    pdb_load_functions(p, &ra, o->thread_set ? o->thread : -1, flags, &sa);
    pdb_load_functions(p, &rb, o->thread_set ? o->thread : -1, flags, &sb);

    /* Both sets come sorted by (name, file): merge them. */
    drow *rows = xcalloc(sa.n + sb.n, sizeof *rows);
    size_t n = 0, i = 0, j = 0;
    while (i < sa.n || j < sb.n) {
        int c = i == sa.n ? 1 : j == sb.n ? -1 : cmp_key(&sa.v[i], &sb.v[j]);
        drow *d = &rows[n++];
        d->a = c <= 0 ? &sa.v[i++] : NULL;
        d->b = c >= 0 ? &sb.v[j++] : NULL;
        d->delta = (d->b ? d->b->self_ns : 0) - (d->a ? d->a->self_ns : 0);
        if (d->a && d->b) {
            /* Each side's calls are corrected by their own overhead correction. */
            d->sig = sig_mann_whitney(d->a->hist, d->a->nhist, ra.ns_per_tick, d->a->fix,
                                      d->b->hist, d->b->nhist, rb.ns_per_tick, d->b->fix);
            /* The gate compares per-call medians, as the test does: a total
             * moves with the number of calls and with preemption, a median
             * does not. */
            if (o->fail_set && d->sig.significant && d->sig.z > 0 && d->sig.median_a_ns > 0 &&
                median_change_pct(d) > o->fail_above)
                d->flagged = 1;
        }
    }
    /* Rows are still in (name, file) order here. */
    const char **fnames = xmalloc((n + 1) * sizeof *fnames), **files = xmalloc((n + 1) * sizeof *files);
    for (size_t k = 0; k < n; k++) {
        fnames[k] = (rows[k].a ? rows[k].a : rows[k].b)->name;
        files[k] = (rows[k].a ? rows[k].a : rows[k].b)->file;
    }
    char **labels = fn_labels(fnames, files, NULL, n, 1);
    for (size_t k = 0; k < n; k++)
        rows[k].label = labels[k];
    free(labels);
    free(fnames);
    free(files);
    qsort(rows, n, sizeof *rows, cmp_drow);
    size_t shown = o->top_set && !o->all && (size_t)o->top < n ? (size_t)o->top : n;

    FILE *f = stdout;
    if (o->json || o->csv) {
        if (o->json)
            fputc('[', f);
        else
            fputs("function,file,calls_a,calls_b,self_ns_a,self_ns_b,delta_ns,delta_pct,allocs_a,"
                  "allocs_b,alloc_bytes_a,alloc_bytes_b,change,significant,p_value,median_a_ns,"
                  "median_b_ns\n", f);
        for (size_t k = 0; k < shown; k++) {
            const drow *d = &rows[k];
            const fnrow *any = d->a ? d->a : d->b;
            fnrow zero = {0};
            const fnrow *a = d->a ? d->a : &zero, *b = d->b ? d->b : &zero;
            char pct[32] = "null", pval[32] = "null", meds[64] = "null, null";
            if (a->self_ns > 0)
                snprintf(pct, sizeof pct, "%.2f", (double)d->delta * 100.0 / (double)a->self_ns);
            if (d->sig.valid)
                snprintf(pval, sizeof pval, "%.3g", d->sig.p_value);
            const char *change = !d->a ? "added" : !d->b ? "removed"
                                 : d->sig.significant ? (d->sig.z > 0 ? "slower" : "faster") : "same";
            if (o->json) {
                fprintf(f, "%s\n  {\"function\": ", k ? "," : "");
                json_str(f, any->name);
                fputs(", \"file\": ", f);
                json_str(f, any->file);
            } else {
                csv_str(f, any->name);
                fputc(',', f);
                csv_str(f, any->file);
            }
            long long v[] = {a->calls, b->calls, a->self_ns, b->self_ns, d->delta};
            static const char *kv[] = {"calls_a", "calls_b", "self_ns_a", "self_ns_b", "delta_ns"};
            for (int q = 0; q < 5; q++)
                o->json ? fprintf(f, ", \"%s\": %lld", kv[q], v[q]) : fprintf(f, ",%lld", v[q]);
            if (o->json) {
                fprintf(f, ", \"delta_pct\": %s, \"allocs_a\": %lld, \"allocs_b\": %lld, "
                           "\"alloc_bytes_a\": %lld, \"alloc_bytes_b\": %lld, \"change\": \"%s\", "
                           "\"significant\": %s, \"p_value\": %s, ",
                        pct, (long long)a->allocs, (long long)b->allocs, (long long)a->alloc_bytes,
                        (long long)b->alloc_bytes, change, d->sig.significant ? "true" : "false", pval);
                if (d->sig.valid)
                    fprintf(f, "\"median_a_ns\": %.0f, \"median_b_ns\": %.0f}", d->sig.median_a_ns,
                            d->sig.median_b_ns);
                else
                    fputs("\"median_a_ns\": null, \"median_b_ns\": null}", f);
            } else {
                if (d->sig.valid)
                    snprintf(meds, sizeof meds, "%.0f,%.0f", d->sig.median_a_ns, d->sig.median_b_ns);
                else
                    snprintf(meds, sizeof meds, ",");
                fprintf(f, ",%s,%lld,%lld,%lld,%lld,%s,%s,%s,%s\n", a->self_ns > 0 ? pct : "",
                        (long long)a->allocs, (long long)b->allocs, (long long)a->alloc_bytes,
                        (long long)b->alloc_bytes, change, d->sig.significant ? "true" : "false",
                        d->sig.valid ? pval : "", meds);
            }
        }
        if (o->json)
            fputs(shown ? "\n]\n" : "]\n", f);
    } else {
        /* Before, After, Delta: total self time. C.Delta: the change in calls,
         * which moves a total but not a call. p50: the change of the median
         * per-call self time, and Per call the significance test's verdict on
         * per-call self time: so a total that grew with the number of calls
         * next to "faster" says so. */
        static const char *hdr[] = {"Function", "Before", "After", "Delta", "C.Delta", "p50", "Per call",
                                    "Allocs", "A.Delta"};
        static const int minw[] = {20, 11, 11, 11, 9, 9, 11, 9, 9};
        table t;
        table_init(&t, 9, hdr, minw);
        t.fit_col = 0;
        for (size_t k = 0; k < shown; k++) {
            const drow *d = &rows[k];
            char before[32] = "-", after[32] = "-", delta[32], allocs[32] = "-", ad[32], cd[32], med[32] = "-";
            if (d->a)
                fmt_ns(before, sizeof before, (double)d->a->self_ns);
            if (d->b) {
                fmt_ns(after, sizeof after, (double)d->b->self_ns);
                snprintf(allocs, sizeof allocs, "%lld", (long long)d->b->allocs);
            }
            fmt_delta_ns(delta, sizeof delta, (double)d->delta);
            long long adelta = (d->b ? d->b->allocs : 0) - (d->a ? d->a->allocs : 0);
            snprintf(ad, sizeof ad, "%+lld", adelta);
            long long cdelta = (d->b ? d->b->calls : 0) - (d->a ? d->a->calls : 0);
            snprintf(cd, sizeof cd, "%+lld", cdelta);
            if (d->a && d->b && d->sig.valid && d->sig.median_a_ns > 0)
                snprintf(med, sizeof med, "%+.1f%%", median_change_pct(d));
            const char *cells[] = {d->label, before, after, delta, cd, med, verdict(d), allocs, ad};
            const char *col = NULL;
            if (d->a && d->b && d->sig.significant)
                col = d->sig.z > 0 ? C_RED : C_GREEN;
            table_add(&t, cells, col);
        }
        table_print(&t, f, p->color);
        table_free(&t);
        if (shown < n)
            fprintf(f, "(%zu more function%s hidden: --all shows them)\n", n - shown,
                    n - shown == 1 ? "" : "s");
        fprintf(f, "\nbefore: run %lld, after: run %lld\n", (long long)ra.id, (long long)rb.id);
        fputs("Delta: change of the total self time (C.Delta: of the calls); p50 and Per call:\n"
              "change of one call's self time (median; significance test, see diff --help)\n", f);
    }

    int flagged = 0;
    char names[512] = "";
    size_t used = 0;
    for (size_t k = 0; k < n; k++) {
        if (!rows[k].flagged)
            continue;
        flagged++;
        int w = snprintf(names + used, sizeof names - used, "%s%s (median %+.1f%%)", used ? ", " : "",
                         rows[k].b->name, median_change_pct(&rows[k]));
        if (w > 0 && (size_t)w < sizeof names - used)
            used += (size_t)w;
    }
    for (size_t k = 0; k < n; k++)
        free(rows[k].label);
    free(rows);
    fnset_free(&sa);
    fnset_free(&sb);
    pdb_run_free(&ra);
    pdb_run_free(&rb);
    if (flagged) {
        fflush(stdout);
        fprintf(stderr, "piano-db: %d function%s significantly slower by more than %g%%: %s\n",
                flagged, flagged == 1 ? "" : "s", o->fail_above, names);
        return EXIT_REGRESSION;
    }
    return 0;
}
