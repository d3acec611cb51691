/*
 * emit.c - the one place a result set is rendered: rows of typed columns as a
 * text table, a JSON array of objects or CSV with a header line (as the
 * sqlite3 shell's .mode renders any query). A command declares its columns
 * once (emit_col: table header, JSON/CSV key, type, width) and hands over
 * values; how a type reads in each form is decided here.
 */
#include "piano_db.h"
#include <stdlib.h>
#include <string.h>

/* Is column c part of the current form? */
static int shown_in(const emit_col *c, emit_mode mode)
{
    switch (mode) {
    case EMIT_TABLE: return c->head != NULL;
    case EMIT_JSON: return c->key && !(c->flags & COL_NOJSON);
    default: return c->key && !(c->flags & COL_NOCSV);
    }
}

/* The number types: every one is an integer outside tables. */
static int is_int(int type)
{
    return type == COL_INT || type == COL_NS || type == COL_DELTA_NS || type == COL_BYTES || type == COL_TIME ||
           type == COL_SIGNED;
}

/* What a table shows of v, in a new string. */
static char *cell_text(const emit_col *c, const emit_val *v)
{
    char buf[128];
    if (v->shown)
        return xstrdup(v->shown);
    if (v->null)
        return xstrdup("-");
    switch (c->type) {
    case COL_TEXT:
        if (!c->cut)
            return xstrdup(v->s);
        fmt_cut(buf, sizeof buf, v->s, (size_t)c->cut);
        return xstrdup(buf);
    case COL_LIST: {
        size_t len = 2;
        for (size_t i = 0; i < v->n; i++)
            len += strlen(v->names[i]) + 1;
        char *all = xmalloc(len), *at = all;
        for (size_t i = 0; i < v->n; i++)
            at += sprintf(at, "%s%s", i ? "," : "", v->names[i]);
        if (!v->n)
            strcpy(all, "-");
        if (!c->cut)
            return all;
        fmt_cut(buf, sizeof buf, all, (size_t)c->cut);
        free(all);
        return xstrdup(buf);
    }
    case COL_NS: fmt_ns(buf, sizeof buf, (double)v->i); break;
    case COL_DELTA_NS: fmt_delta_ns(buf, sizeof buf, (double)v->i); break;
    case COL_BYTES: fmt_bytes(buf, sizeof buf, v->i); break;
    case COL_TIME: fmt_time_local(buf, sizeof buf, v->i); break;
    case COL_SIGNED: snprintf(buf, sizeof buf, "%+lld", (long long)v->i); break;
    case COL_REAL: snprintf(buf, sizeof buf, c->fmt, v->d); break;
    case COL_BOOL: snprintf(buf, sizeof buf, "%s", v->i ? "true" : "false"); break;
    default: snprintf(buf, sizeof buf, "%lld", (long long)v->i); break;
    }
    return xstrdup(buf);
}

static void json_rows(FILE *f, const emit_col *cols, int ncols, const emit_val *v, size_t n, const char *indent);

static void json_value(FILE *f, const emit_col *c, const emit_val *v, const char *indent)
{
    if (v->null) {
        fputs("null", f);
    } else if (c->type == COL_TEXT) {
        json_str(f, v->s);
    } else if (c->type == COL_REAL) {
        fprintf(f, c->fmt, v->d);
    } else if (c->type == COL_BOOL || c->type == COL_FLAG) {
        fputs(v->i ? "true" : "false", f);
    } else if (c->type == COL_LIST || c->type == COL_MAP) {
        fputc(c->type == COL_LIST ? '[' : '{', f);
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                fputs(", ", f);
            json_str(f, v->names[i]);
            if (c->type == COL_MAP)
                fprintf(f, ": %lld", (long long)v->ints[i]);
        }
        fputc(c->type == COL_LIST ? ']' : '}', f);
    } else if (c->type == COL_ROWS) {
        char deeper[64];
        snprintf(deeper, sizeof deeper, "%s  ", indent);
        json_rows(f, c->sub, c->nsub, v->rows, v->n, deeper);
    } else {
        fprintf(f, "%lld", (long long)v->i);
    }
}

static void json_row(FILE *f, const emit_col *cols, int ncols, const emit_val *v, const char *indent)
{
    int any = 0;
    fputc('{', f);
    for (int c = 0; c < ncols; c++) {
        if (!shown_in(&cols[c], EMIT_JSON))
            continue;
        fprintf(f, "%s\"%s\": ", any++ ? ", " : "", cols[c].key);
        json_value(f, &cols[c], &v[c], indent);
    }
    fputc('}', f);
}

/* "[", each row on a line of its own one step in from indent, "]" under the "[" line. */
static void json_rows(FILE *f, const emit_col *cols, int ncols, const emit_val *v, size_t n, const char *indent)
{
    fputc('[', f);
    for (size_t r = 0; r < n; r++) {
        fprintf(f, "%s\n%s  ", r ? "," : "", indent);
        json_row(f, cols, ncols, v + r * (size_t)ncols, indent);
    }
    if (n)
        fprintf(f, "\n%s", indent);
    fputc(']', f);
}

static void csv_value(FILE *f, const emit_col *c, const emit_val *v)
{
    if (v->null)
        return;
    if (c->type == COL_TEXT)
        csv_str(f, v->s);
    else if (c->type == COL_REAL)
        fprintf(f, c->fmt, v->d);
    else if (c->type == COL_BOOL)
        fputs(v->i ? "true" : "false", f);
    else if (c->type == COL_FLAG)
        fputc(v->i ? '1' : '0', f);
    else if (is_int(c->type))
        fprintf(f, "%lld", (long long)v->i);
}

/* The CSV header: the columns' keys, a nested column's own in its place. */
static void csv_header(FILE *f, const emit_col *cols, int ncols, int *any)
{
    for (int c = 0; c < ncols; c++) {
        if (!shown_in(&cols[c], EMIT_CSV))
            continue;
        if (cols[c].type == COL_ROWS) {
            csv_header(f, cols[c].sub, cols[c].nsub, any);
            continue;
        }
        if ((*any)++)
            fputc(',', f);
        csv_str(f, cols[c].csv ? cols[c].csv : cols[c].key);
    }
}

/* One line per row; a row with nested rows (its last column) writes one line
 * per nested row, its own values first. */
static void csv_row(FILE *f, const emit_col *cols, int ncols, const emit_val *v)
{
    for (int c = 0; c < ncols; c++) {
        if (!shown_in(&cols[c], EMIT_CSV))
            continue;
        if (cols[c].type == COL_ROWS) {
            for (size_t r = 0; r < v[c].n; r++) {
                for (int p = 0; p < c; p++)
                    if (shown_in(&cols[p], EMIT_CSV)) {
                        csv_value(f, &cols[p], &v[p]);
                        fputc(',', f);
                    }
                csv_row(f, cols[c].sub, cols[c].nsub, v[c].rows + r * (size_t)cols[c].nsub);
            }
            return;
        }
    }
    int any = 0;
    for (int c = 0; c < ncols; c++) {
        if (!shown_in(&cols[c], EMIT_CSV))
            continue;
        if (any++)
            fputc(',', f);
        csv_value(f, &cols[c], &v[c]);
    }
    fputc('\n', f);
}

/* A line of a streamed table: cells padded to the columns' minw as they come;
 * column 0 left-aligned, the others right-aligned. */
static void stream_line(emitter *e, const char *const *cells, const char *color)
{
    if (color && (e->flags & EMIT_COLOR))
        fputs(color, e->f);
    for (int t = 0; t < e->ntable; t++)
        print_pad(e->f, cells[t], (size_t)e->minw[t], t > 0);
    if (color && (e->flags & EMIT_COLOR))
        fputs(C_OFF, e->f);
    fputc('\n', e->f);
}

void emit_begin(emitter *e, FILE *f, emit_mode mode, const emit_col *cols, int ncols, unsigned flags)
{
    memset(e, 0, sizeof *e);
    e->f = f;
    e->mode = mode;
    e->cols = cols;
    e->ncols = ncols;
    e->flags = flags;
    if (mode == EMIT_JSON) {
        fputc('[', f);
        return;
    }
    if (mode == EMIT_CSV) {
        int any = 0;
        csv_header(f, cols, ncols, &any);
        fputc('\n', f);
        return;
    }
    e->table_col = xmalloc((size_t)ncols * sizeof *e->table_col);
    e->hdr = xmalloc((size_t)ncols * sizeof *e->hdr);
    e->minw = xmalloc((size_t)ncols * sizeof *e->minw);
    table_init(&e->t, 0, e->hdr, e->minw);
    for (int c = 0; c < ncols; c++) {
        if (!shown_in(&cols[c], EMIT_TABLE))
            continue;
        int t = e->ntable++;
        e->table_col[t] = c;
        e->hdr[t] = cols[c].head;
        e->minw[t] = cols[c].minw;
        if (cols[c].flags & COL_LEFT)
            e->t.leftmask |= 1u << t;
        if (cols[c].flags & (COL_FIT_NAMES | COL_FIT_COMMAND)) {
            e->t.fit_col = t;
            e->t.fit_mode = cols[c].flags & COL_FIT_COMMAND ? FIT_COMMAND : FIT_NAMES;
        }
    }
    e->t.ncols = e->ntable;
    if (flags & EMIT_STREAM) {
        size_t total = 0;
        for (int t = 0; t < e->ntable; t++)
            total += (size_t)e->minw[t];
        stream_line(e, e->hdr, NULL);
        for (size_t i = 0; i < total; i++)
            fputc('-', f);
        fputc('\n', f);
    }
}

void emit_row(emitter *e, const emit_val *v, const char *color)
{
    if (e->mode == EMIT_JSON) {
        fprintf(e->f, "%s\n  ", e->rows ? "," : "");
        json_row(e->f, e->cols, e->ncols, v, "");
    } else if (e->mode == EMIT_CSV) {
        csv_row(e->f, e->cols, e->ncols, v);
    } else {
        char **cells = xmalloc((size_t)(e->ntable ? e->ntable : 1) * sizeof *cells);
        for (int t = 0; t < e->ntable; t++)
            cells[t] = cell_text(&e->cols[e->table_col[t]], &v[e->table_col[t]]);
        if (e->flags & EMIT_STREAM)
            stream_line(e, (const char *const *)cells, color);
        else
            table_add(&e->t, (const char **)cells, color);
        for (int t = 0; t < e->ntable; t++)
            free(cells[t]);
        free(cells);
    }
    e->rows++;
}

size_t emit_end(emitter *e, const char *none)
{
    if (e->mode == EMIT_JSON)
        fputs(e->rows ? "\n]\n" : "]\n", e->f);
    else if (e->mode == EMIT_TABLE && none && !e->rows)
        fputs(none, e->f);
    else if (e->mode == EMIT_TABLE && !(e->flags & EMIT_STREAM))
        table_print(&e->t, e->f, (e->flags & EMIT_COLOR) != 0);
    size_t rows = e->rows;
    table_free(&e->t);
    free(e->table_col);
    free(e->hdr);
    free(e->minw);
    memset(e, 0, sizeof *e);
    return rows;
}

emit_mode emit_mode_of(const pdb_opts *o)
{
    return o->json ? EMIT_JSON : o->csv ? EMIT_CSV : EMIT_TABLE;
}
