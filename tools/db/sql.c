/* sql.c - piano-db sql [SQL]: the user's own statements on the database, with
 * the views contexts and stats that the stored schema no longer holds (schema
 * 19: every run's exit parsed them; store/piano_schema.h). Rows print as the
 * sqlite3 shell prints them (-batch -noheader: columns separated by '|', NULL
 * empty), or as CSV or JSON as it does with -csv and -json. */
#include "piano_db.h"
#include "db_path.h"
#include "store.h"
#include "contexts_blob.h"
#include "frames_blob.h"
#include "stats_blob.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The SQL to run: the argument, else all of stdin. */
static char *read_sql(const pdb_opts *o)
{
    if (o->npos > 1)
        pdb_usage_die("sql: one SQL argument (quote it), or none to read SQL from stdin");
    if (o->npos == 1)
        return xstrdup(o->pos[0]);
    size_t cap = 4096, len = 0;
    char *s = xmalloc(cap);
    size_t n;
    while ((n = fread(s + len, 1, cap - len - 1, stdin)) > 0) {
        len += n;
        if (cap - len - 1 == 0)
            s = xrealloc(s, cap *= 2);
    }
    if (ferror(stdin))
        pdb_die("sql: cannot read stdin");
    s[len] = 0;
    return s;
}

/* sqlite3's CSV quoting: a field with a control character, a space, a quote,
 * a byte past ASCII or a comma, or an empty one, goes in double quotes. */
static void put_csv(const char *z)
{
    int quote = !*z;
    for (const unsigned char *c = (const unsigned char *)z; *c && !quote; c++)
        quote = *c < 0x20 || *c == ' ' || *c == '"' || *c == '\'' || *c == ',' || *c >= 0x7f;
    if (!quote) {
        fputs(z, stdout);
        return;
    }
    putchar('"');
    for (const char *c = z; *c; c++) {
        if (*c == '"')
            putchar('"');
        putchar(*c);
    }
    putchar('"');
}

static void put_json_string(const unsigned char *z, int n)
{
    putchar('"');
    for (int i = 0; i < n; i++) {
        unsigned char c = z[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c == '\n')
            fputs("\\n", stdout);
        else if (c == '\t')
            fputs("\\t", stdout);
        else if (c == '\r')
            fputs("\\r", stdout);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* One statement's rows. Returns sqlite3_step's last result. */
static int print_rows(sqlite3_stmt *st, const pdb_opts *o, int header)
{
    int n = sqlite3_column_count(st), rows = 0, rc;
    const char *sep = o->csv ? "," : "|";
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (o->json) {
            fputs(rows ? ",\n{" : "[{", stdout);
            for (int i = 0; i < n; i++) {
                const char *name = sqlite3_column_name(st, i);
                if (i)
                    putchar(',');
                put_json_string((const unsigned char *)name, (int)strlen(name));
                putchar(':');
                switch (sqlite3_column_type(st, i)) {
                case SQLITE_NULL:
                    fputs("null", stdout);
                    break;
                case SQLITE_INTEGER:
                    printf("%lld", (long long)sqlite3_column_int64(st, i));
                    break;
                case SQLITE_FLOAT: {   /* SQLite's text of it, as the list prints; infinity as sqlite3 -json */
                    double d = sqlite3_column_double(st, i);
                    if (d > 1.7976931348623157e308 || d < -1.7976931348623157e308)
                        fputs(d > 0 ? "1e999" : "-1e999", stdout);
                    else
                        fputs((const char *)sqlite3_column_text(st, i), stdout);
                    break;
                }
                default: {   /* text, and a blob as a string of its bytes (as sqlite3 -json) */
                    const unsigned char *z = sqlite3_column_type(st, i) == SQLITE_BLOB
                                                 ? sqlite3_column_blob(st, i)
                                                 : sqlite3_column_text(st, i);
                    put_json_string(z ? z : (const unsigned char *)"", sqlite3_column_bytes(st, i));
                }
                }
            }
            putchar('}');
            rows++;
            continue;
        }
        if (!rows++ && header)
            for (int i = 0; i < n; i++) {
                if (o->csv)
                    put_csv(sqlite3_column_name(st, i));
                else
                    fputs(sqlite3_column_name(st, i), stdout);
                fputs(i + 1 < n ? sep : "\n", stdout);
            }
        for (int i = 0; i < n; i++) {
            const char *z = (const char *)sqlite3_column_text(st, i);
            if (z && o->csv)
                put_csv(z);
            else if (z)
                fputs(z, stdout);   /* (a blob's bytes, to its first NUL: as sqlite3) */
            fputs(i + 1 < n ? sep : "\n", stdout);
        }
    }
    if (o->json && rows)
        fputs("]\n", stdout);
    return rc;
}

int cmd_sql(pdb *p, const pdb_opts *o)
{
    char *sql = read_sql(o);
    /* piano_contexts, piano_stats and piano_frames, the TEMP views contexts,
     * stats and frames over them (pdb_open made them) and the triggers that
     * make them writable */
    if (piano_contexts_make_triggers(p->db) != SQLITE_OK || piano_stats_make_triggers(p->db) != SQLITE_OK ||
        piano_frames_make_triggers(p->db) != SQLITE_OK)
        pdb_die("sql: %s", sqlite3_errmsg(p->db));
    const char *tail = sql;
    while (*tail) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(p->db, tail, -1, &st, &tail) != SQLITE_OK)
            pdb_die("sql: %s", sqlite3_errmsg(p->db));
        if (!st)   /* blanks or a comment */
            continue;
        int rc = print_rows(st, o, o->header);
        if (rc != SQLITE_DONE) {
            fflush(stdout);
            pdb_die("sql: %s", sqlite3_errmsg(p->db));
        }
        sqlite3_finalize(st);
    }
    free(sql);
    return 0;
}
