/*
 * piano-summary.c - what PIANO_FNS caught across a whole build.
 *
 * The plugin appends one line per compiled translation unit to the file
 * named by PIANO_SUMMARY (pass/summary.h). This tool reads it back:
 *
 *   piano-summary FILE            print the summary of FILE
 *   piano-summary [--] CMD ARG..  run CMD (e.g. make CC=piano-cc) with
 *                                 PIANO_SUMMARY set to a fresh temporary
 *                                 file, then print the summary on stderr;
 *                                 exits with CMD's status
 *
 * Output:
 *   found N function(s) across M file(s)
 *   left out K small function(s) (below PIANO_MIN_SIZE=S IR instructions; ...)
 *   piano: pattern 'xyz' matched nothing
 * N counts distinct instrumented functions (name and defining file), M their
 * distinct defining files, K the distinct functions that a broad selection
 * (unset PIANO_FNS, '*', a substring) caught but left out for their size and
 * that no unit instrumented (line only when K > 0). A translation unit compiled several times counts
 * once, with its latest compile. A pattern "matched nothing" when no unit
 * compiled with it instrumented a function it matches ('!' patterns are not
 * checked). --strict: exit 1 when a pattern matched nothing (FILE form).
 *
 *   piano-summary --list BINARY   the functions BINARY (a program or a shared
 *                                 library) can select at run time, from its
 *                                 .piano.fns section: one line each,
 *                                 "NAME<TAB>FILE:LINE", sorted; with PIANO_FNS
 *                                 set, only those it selects, as the runtime
 *                                 would (select.h)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "select.h"
#include "summary.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct strset {
    char **v;
    size_t n, cap;
};

static long strset_find(const struct strset *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return (long)i;
    return -1;
}

/* Adds x when missing; returns its index. Linear: builds hold thousands of
 * functions at most, and this runs once per build. */
static size_t strset_add(struct strset *s, const char *x)
{
    long i = strset_find(s, x);
    if (i >= 0)
        return (size_t)i;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) {
            fprintf(stderr, "piano-summary: out of memory\n");
            exit(1);
        }
    }
    s->v[s->n] = strdup(x);
    if (!s->v[s->n]) {
        fprintf(stderr, "piano-summary: out of memory\n");
        exit(1);
    }
    return s->n++;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fprintf(stderr, "piano-summary: out of memory\n");
        exit(1);
    }
    return p;
}

/* The latest line of each translation unit in the summary file f; *n: how many. */
static struct piano_summary_line *latest_lines(FILE *f, size_t *n)
{
    struct piano_summary_line *lines = NULL, l;
    size_t cap = 0;
    struct strset sources = {0};
    int r;
    *n = 0;
    while ((r = piano_summary_read(f, &l)) != 0) {
        if (r < 0)
            continue;
        long i = strset_find(&sources, l.source);
        if (i >= 0) {
            piano_summary_line_free(&lines[i]);
            lines[i] = l;
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            lines = xrealloc(lines, cap * sizeof *lines);
        }
        strset_add(&sources, l.source);
        lines[(*n)++] = l;
    }
    return lines;
}

/* Adds each function's key (its name and defining file) to set. */
static void add_fn_keys(struct strset *set, const struct piano_summary_fn *fns, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        size_t len = strlen(fns[j].display) + strlen(fns[j].file) + 2;
        char *key = xrealloc(NULL, len);
        snprintf(key, len, "%s%c%s", fns[j].display, 1, fns[j].file);
        strset_add(set, key);
        free(key);
    }
}

/* Each include pattern of the unit's spec, added to pats and checked on its
 * functions (also those left out for their size: the pattern did catch
 * them); hit[k] (grown with pats, *nhit long) is set for pats.v[k] matched. */
static void match_patterns(const struct piano_summary_line *line, struct strset *pats, char **hit, size_t *nhit)
{
    char *spec = strdup(line->spec), *save = NULL;
    if (!spec)
        exit(1);
    for (char *p = strtok_r(spec, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (p[0] == '!')
            continue;
        size_t k = strset_add(pats, p);
        if (k >= *nhit) { /* a new pattern */
            *hit = xrealloc(*hit, pats->n);
            while (*nhit < pats->n)
                (*hit)[(*nhit)++] = 0;
        }
        if ((*hit)[k])
            continue;
        struct piano_select *sel = NULL;
        char err[256];
        if (piano_select_parse(p, &sel, err, sizeof err) != 0) {
            (*hit)[k] = 1; /* malformed: the compile itself failed loudly */
            continue;
        }
        for (size_t j = 0; j < line->n + line->n_small && !(*hit)[k]; j++)
            if (piano_select_match(sel, line->fns[j].match, line->fns[j].file) != PIANO_SEL_NO)
                (*hit)[k] = 1;
        piano_select_free(sel);
    }
    free(spec);
}

/* The "left out K small function(s)" line: small functions some unit
 * instrumented anyway (named there) count as found, not as left out. */
static void say_small(FILE *out, const struct strset *small, const struct strset *fns, unsigned min_lo,
                      unsigned min_hi)
{
    size_t nsmall = 0;
    for (size_t j = 0; j < small->n; j++)
        nsmall += strset_find(fns, small->v[j]) < 0;
    if (!nsmall)
        return;
    char range[32];
    if (min_lo == min_hi)
        snprintf(range, sizeof range, "%u", min_hi);
    else
        snprintf(range, sizeof range, "%u..%u", min_lo, min_hi);
    fprintf(out, "left out %zu small function(s) (below PIANO_MIN_SIZE=%s IR "
                 "instructions; =NAME selects one anyway, PIANO_MIN_SIZE=0 "
                 "keeps them all)\n", nsmall, range);
}

/* Prints the summary; returns the number of patterns that matched nothing,
 * or -1 when the file cannot be read. */
static int summarize(const char *path, FILE *out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) { /* nothing was compiled with the plugin */
            fprintf(out, "found 0 function(s) across 0 file(s)\n");
            fprintf(stderr, "piano: no translation unit was compiled with the "
                            "plugin (%s does not exist)\n", path);
            return 0;
        }
        fprintf(stderr, "piano-summary: cannot read %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    size_t nlines;
    struct piano_summary_line *lines = latest_lines(f, &nlines);
    fclose(f);

    struct strset fns = {0}, files = {0}, pats = {0}, small = {0};
    char *hit = NULL;
    size_t nhit = 0;
    unsigned min_lo = 0, min_hi = 0;
    for (size_t i = 0; i < nlines; i++) {
        if (lines[i].n_small) {
            if (!min_hi || lines[i].min_size < min_lo)
                min_lo = lines[i].min_size;
            if (lines[i].min_size > min_hi)
                min_hi = lines[i].min_size;
        }
        add_fn_keys(&fns, lines[i].fns, lines[i].n);
        for (size_t j = 0; j < lines[i].n; j++)
            strset_add(&files, lines[i].fns[j].file);
        add_fn_keys(&small, lines[i].small, lines[i].n_small);
        match_patterns(&lines[i], &pats, &hit, &nhit);
    }

    fprintf(out, "found %zu function(s) across %zu file(s)\n", fns.n, files.n);
    say_small(out, &small, &fns, min_lo, min_hi);
    fflush(out); /* before the warnings, also when both go to one file */
    if (nlines == 0)
        fprintf(stderr, "piano: no translation unit was compiled with the plugin\n");
    int missed = 0;
    for (size_t k = 0; k < pats.n; k++)
        if (!hit[k]) {
            fprintf(stderr, "piano: pattern '%s' matched nothing\n", pats.v[k]);
            missed++;
        }
    for (size_t i = 0; i < nlines; i++)
        piano_summary_line_free(&lines[i]);
    free(lines);
    free(hit);
    return missed;
}

/* ---- --list BINARY: the .piano.fns section ---------------------------- */

/* The .piano.fns sections of path (a linked binary holds them as one),
 * copied, or NULL with *why set. 64-bit ELF only. */
static char *read_fns_section(const char *path, size_t *lenp, const char **why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *out = NULL;
    *why = "no .piano.fns section (not built with piano-cc/piano-c++ of this version, or nothing instrumented)";
    if (fd < 0) {
        *why = strerror(errno);
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
        close(fd);
        *why = "not a 64-bit ELF file";
        return NULL;
    }
    size_t len = (size_t)st.st_size;
    unsigned char *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        *why = strerror(errno);
        return NULL;
    }
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)map;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff == 0 || eh->e_shoff > len ||
        (len - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum || eh->e_shstrndx >= eh->e_shnum) {
        *why = "not a 64-bit ELF file";
        goto done;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(map + eh->e_shoff);
    const Elf64_Shdr *strs = &sh[eh->e_shstrndx];
    if (strs->sh_offset > len || strs->sh_size > len - strs->sh_offset) {
        *why = "damaged ELF section names";
        goto done;
    }
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_name >= strs->sh_size || sh[i].sh_type == SHT_NOBITS)
            continue;
        const char *nm = (const char *)map + strs->sh_offset + sh[i].sh_name;
        size_t room = strs->sh_size - sh[i].sh_name;
        if (strnlen(nm, room) == room || strcmp(nm, ".piano.fns") != 0)
            continue;
        if (sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset) {
            *why = "damaged .piano.fns section";
            break;
        }
        out = malloc(sh[i].sh_size + 1);
        if (out) {
            memcpy(out, map + sh[i].sh_offset, sh[i].sh_size);
            out[sh[i].sh_size] = '\0';
            *lenp = sh[i].sh_size;
        }
        break;
    }
done:
    munmap(map, len);
    return out;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Prints what path can select at run time; with PIANO_FNS set, what it selects. */
static int list_binary(const char *path)
{
    const char *spec = getenv("PIANO_FNS");
    struct piano_select *sel = NULL;
    char err[512];
    if (spec && *spec && piano_select_parse(spec, &sel, err, sizeof err) != 0) {
        fprintf(stderr, "piano-summary: %s\n", err);
        return 2;
    }
    size_t len = 0;
    const char *why;
    char *sec = read_fns_section(path, &len, &why);
    if (!sec) {
        fprintf(stderr, "piano-summary: %s: %s\n", path, why);
        piano_select_free(sel);
        return 1;
    }
    char **rows = NULL;
    size_t n = 0, cap = 0;
    for (size_t at = 0; at < len;) {
        char *e = sec + at;
        size_t l = strlen(e);
        at += l + 1;
        /* "piano-fn 1" \t match \t display \t file \t line \t system */
        char *f[6];
        size_t k = 0;
        for (char *p = e; k < 6; k++) {
            f[k] = p;
            p = strchr(p, '\t');
            if (!p) {
                k++;
                break;
            }
            *p++ = '\0';
        }
        if (k != 6 || strcmp(f[0], "piano-fn 1") != 0)
            continue;   /* another version's entry, or padding */
        if (sel && piano_select_match_fn(sel, f[1], f[3], f[5][0] == '1' && !piano_select_is_default(sel)) ==
                       PIANO_SEL_NO)
            continue;
        size_t need = strlen(f[2]) + strlen(f[3]) + strlen(f[4]) + 3;
        char *row = malloc(need);
        if (!row)
            break;
        snprintf(row, need, "%s\t%s:%s", f[2], f[3], f[4]);
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(rows, cap * sizeof *rows);
            if (!grown) {
                free(row);
                break;
            }
            rows = grown;
        }
        rows[n++] = row;
    }
    if (n)
        qsort(rows, n, sizeof *rows, by_str);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(rows[i], rows[i - 1]) != 0)
            printf("%s\n", rows[i]);
        free(rows[i]);
    }
    free(rows);
    free(sec);
    piano_select_free(sel);
    return 0;
}

static void usage(FILE *o)
{
    fprintf(o,
            "usage: piano-summary [--strict] FILE\n"
            "       piano-summary [--] COMMAND [ARG...]\n"
            "       [PIANO_FNS=PATTERNS] piano-summary --list BINARY\n"
            "FILE is what PIANO_SUMMARY named while compiling with piano-cc/"
            "piano-c++ (or -fpass-plugin=PianoPass.so); the second form runs "
            "COMMAND with PIANO_SUMMARY set to a fresh file and summarizes "
            "it. --list prints the functions BINARY can select at run time "
            "(with PIANO_FNS set: those the patterns select).\n");
}

int main(int argc, char **argv)
{
    int strict = 0, i = 1;
    if (i < argc && strcmp(argv[i], "--strict") == 0) {
        strict = 1;
        i++;
    }
    if (i < argc && (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[i], "--list") == 0) {
        if (i + 2 != argc) {
            usage(stderr);
            return 2;
        }
        return list_binary(argv[i + 1]);
    }
    int run = 0;
    if (strcmp(argv[i], "--") == 0) {
        run = 1;
        i++;
        if (i >= argc) {
            usage(stderr);
            return 2;
        }
    } else if (i + 1 < argc) {
        run = 1; /* several words: a command */
    } else if (access(argv[i], F_OK) != 0 && strchr(argv[i], '/') == NULL) {
        run = 1; /* a lone word that is no file: a command such as "make" */
    }
    if (!run) {
        int missed = summarize(argv[i], stdout);
        return missed < 0 ? 1 : (strict && missed > 0) ? 1 : 0;
    }

    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/piano-summary.XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        fprintf(stderr, "piano-summary: cannot create %s: %s\n", path,
                strerror(errno));
        return 1;
    }
    close(fd); /* the compiles append to it */
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "piano-summary: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        setenv("PIANO_SUMMARY", path, 1);
        execvp(argv[i], argv + i);
        fprintf(stderr, "piano-summary: cannot run %s: %s\n", argv[i],
                strerror(errno));
        _exit(127);
    }
    /* Like a shell: the child gets ^C, we wait and report. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            st = 1 << 8;
            break;
        }
    summarize(path, stderr);
    unlink(path);
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + WTERMSIG(st);
}
