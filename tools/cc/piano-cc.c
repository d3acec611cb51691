/*
 * piano-cc.c - piano-cc and piano-c++: drop-in CC / CXX wrappers.
 *
 * They exec (no shell) the clang that PianoPass.so was built for, with
 *   -fpass-plugin=<lib>/PianoPass.so                   when something is compiled
 *   -L<lib> -lpiano_rt -Wl,-rpath,<lib>               when something is linked
 * where <lib> is ../lib next to the wrapper's own executable (found through
 * /proc/self/exe), so the build tree and an installed prefix both work.
 * Every other argument is passed through untouched and in order; the exit
 * status is clang's.
 *
 * Usage: PIANO_FNS=parse make CC=piano-cc CXX=piano-c++
 * Built twice by tools/cc/CMakeLists.txt (PIANO_WRAPPER_CXX=0/1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PIANO_WRAPPER_NAME
#define PIANO_WRAPPER_NAME "piano-cc"
#endif
#ifndef PIANO_WRAPPER_CLANG
#define PIANO_WRAPPER_CLANG "clang"
#endif
#ifndef PIANO_WRAPPER_LIBDIR_ALT
#define PIANO_WRAPPER_LIBDIR_ALT "lib"
#endif

/* What the command line asks clang to do. */
struct scan {
    int sources;      /* C-family inputs that will be compiled */
    int inputs;       /* any input (source, object, library, stdin) */
    int no_link;      /* -c, -S, -E, -M, -MM, -fsyntax-only, -r, ... */
    int no_compile;   /* -E, -M, -MM, -fsyntax-only: nothing reaches LLVM */
    const char *lang; /* current -x language, NULL for "by extension" */
};

/* Options whose value is the next argument when written alone. */
static const char *const separate_value_opts[] = {
    "-o", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
    "-idirafter", "-iprefix", "-iwithprefix", "-iwithprefixbefore",
    "-isysroot", "--sysroot", "-MF", "-MT", "-MQ", "-MJ", "-L", "-l",
    "-Xlinker", "-Xclang", "-Xassembler", "-Xpreprocessor", "-Xopenmp-target",
    "-mllvm", "-target", "-arch", "-include-pch", "-T", "-u", "-z", "-e",
    "-B", "-F", "-iframework", "-cxx-isystem", "-isystem-after",
    "-ivfsoverlay", "-serialize-diagnostics", "-dependency-file",
    "-dependency-dot", "-working-directory", "--param", "-aux-info",
    "-gcc-toolchain", "-rpath", "--output", "--include-directory", "--define-macro",
    "--undefine-macro", "--library-directory", NULL,
};

static int takes_separate_value(const char *a)
{
    for (const char *const *o = separate_value_opts; *o; o++)
        if (strcmp(a, *o) == 0)
            return 1;
    return 0;
}

static int lang_is_compiled(const char *lang)
{
    static const char *const langs[] = {
        "c", "c++", "objective-c", "objective-c++", "cpp-output",
        "c++-cpp-output", "objective-c-cpp-output", "objc-cpp-output",
        "objective-c++-cpp-output", "ir", "cuda", "hip", "cl", "c++-module",
        NULL,
    };
    for (const char *const *l = langs; *l; l++)
        if (strcmp(lang, *l) == 0)
            return 1;
    return 0;
}

static int ext_is_compiled(const char *path)
{
    static const char *const exts[] = {
        "c", "i", "cc", "cp", "cpp", "cxx", "c++", "CPP", "C", "CC", "ii",
        "m", "mm", "M", "mi", "mii", "ll", "bc", "cppm", "cu", "hip", "cl",
        NULL,
    };
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (!dot)
        return 0;
    for (const char *const *e = exts; *e; e++)
        if (strcmp(dot + 1, *e) == 0)
            return 1;
    return 0;
}

static void scan_args(struct scan *s, int argc, char **argv, int depth);

/* Read a response file for classification only (it is passed on as @file). */
static void scan_response_file(struct scan *s, const char *path, int depth)
{
    FILE *f;
    char *buf = NULL, *tok;
    size_t cap = 0, len = 0;
    int ch, argc = 0, argcap = 0;
    char **argv = NULL;

    if (depth > 8 || !(f = fopen(path, "r"))) {
        /* Unknown contents: assume it holds sources (a compile). */
        s->sources++;
        s->inputs++;
        return;
    }
    /* Tokenize: whitespace separates, quotes group, backslash escapes. */
    tok = NULL;
    for (;;) {
        int quote = 0, in_tok = 0;
        len = 0;
        while ((ch = fgetc(f)) != EOF) {
            if (quote) {
                if (ch == quote)
                    quote = 0;
                else if (ch == '\\' && quote == '"' && (ch = fgetc(f)) == EOF)
                    break;
                else
                    goto add;
                continue;
            }
            if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
                if (in_tok)
                    break;
                continue;
            }
            in_tok = 1;
            if (ch == '"' || ch == '\'') {
                quote = ch;
                continue;
            }
            if (ch == '\\' && (ch = fgetc(f)) == EOF)
                break;
        add:
            if (len + 2 > cap) {
                cap = cap ? cap * 2 : 64;
                char *nb = realloc(buf, cap);
                if (!nb)
                    goto done;
                buf = nb;
            }
            buf[len++] = (char)ch;
        }
        if (!in_tok)
            break;
        if (!buf) {
            buf = malloc(1);
            if (!buf)
                goto done;
        }
        buf[len] = '\0';
        tok = strdup(buf);
        if (!tok)
            goto done;
        if (argc + 1 >= argcap) {
            argcap = argcap ? argcap * 2 : 16;
            char **na = realloc(argv, (size_t)argcap * sizeof *argv);
            if (!na) {
                free(tok);
                goto done;
            }
            argv = na;
        }
        argv[argc++] = tok;
        if (ch == EOF)
            break;
    }
done:
    fclose(f);
    if (argv)
        scan_args(s, argc, argv, depth + 1);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
    free(buf);
}

static void scan_input(struct scan *s, const char *a)
{
    s->inputs++;
    if (s->lang ? lang_is_compiled(s->lang) : ext_is_compiled(a))
        s->sources++;
}

static void scan_args(struct scan *s, int argc, char **argv, int depth)
{
    int only_inputs = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (only_inputs || strcmp(a, "-") == 0 || a[0] != '-') {
            if (!only_inputs && a[0] == '@' && a[1]) {
                scan_response_file(s, a + 1, depth);
                continue;
            }
            scan_input(s, a);
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_inputs = 1;
            continue;
        }
        if (strcmp(a, "-x") == 0) {
            if (i + 1 < argc) {
                const char *l = argv[++i];
                s->lang = strcmp(l, "none") == 0 ? NULL : l;
            }
            continue;
        }
        if (strncmp(a, "-x", 2) == 0) {
            s->lang = strcmp(a + 2, "none") == 0 ? NULL : a + 2;
            continue;
        }
        if (takes_separate_value(a)) {
            i++;
            continue;
        }
        if (strcmp(a, "-c") == 0 || strcmp(a, "-S") == 0 ||
            strcmp(a, "--compile") == 0 || strcmp(a, "--assemble") == 0 ||
            strcmp(a, "-r") == 0 || strcmp(a, "-emit-llvm") == 0 ||
            strcmp(a, "-emit-ast") == 0) {
            s->no_link = 1;
            continue;
        }
        if (strcmp(a, "-E") == 0 || strcmp(a, "--preprocess") == 0 ||
            strcmp(a, "-M") == 0 || strcmp(a, "-MM") == 0 ||
            strcmp(a, "-fsyntax-only") == 0) {
            s->no_link = 1;
            s->no_compile = 1;
            continue;
        }
    }
}

/* Directory that holds PianoPass.so and libpiano_rt.so. */
static int find_libdir(char *exe, size_t exelen, char *libdir, size_t liblen)
{
    ssize_t n = readlink("/proc/self/exe", exe, exelen - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char bindir[PATH_MAX];
    snprintf(bindir, sizeof bindir, "%s", exe);
    char *slash = strrchr(bindir, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    const char *cands[] = {"lib", PIANO_WRAPPER_LIBDIR_ALT};
    for (size_t k = 0; k < sizeof cands / sizeof cands[0]; k++) {
        char p[PATH_MAX + 64], real[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s/../%s/PianoPass.so", bindir, cands[k]);
        if (stat(p, &st) != 0)
            continue;
        snprintf(p, sizeof p, "%s/../%s", bindir, cands[k]);
        if (!realpath(p, real))
            continue;
        snprintf(libdir, liblen, "%s", real);
        return 0;
    }
    return -1;
}

int main(int argc, char **argv)
{
    struct scan s = {0};
    char exe[PATH_MAX] = "", libdir[PATH_MAX] = "";
    const char *clang = PIANO_WRAPPER_CLANG;

    scan_args(&s, argc - 1, argv + 1, 0);
    int compile = s.sources > 0 && !s.no_compile;
    int link = s.inputs > 0 && !s.no_link;

    char **nargv = calloc((size_t)argc + 8, sizeof *nargv);
    if (!nargv) {
        fprintf(stderr, PIANO_WRAPPER_NAME ": out of memory\n");
        return 1;
    }
    int k = 0;
    nargv[k++] = (char *)clang;

    if (compile || link) {
        if (find_libdir(exe, sizeof exe, libdir, sizeof libdir) != 0) {
            fprintf(stderr,
                    PIANO_WRAPPER_NAME ": cannot find PianoPass.so next to %s\n",
                    exe[0] ? exe : argv[0]);
            return 1;
        }
    }
    static char plugin[PATH_MAX + 32], ldir[PATH_MAX + 8], rpath[PATH_MAX + 16];
    if (compile) {
        snprintf(plugin, sizeof plugin, "-fpass-plugin=%s/PianoPass.so", libdir);
        nargv[k++] = plugin;
    }
    for (int i = 1; i < argc; i++)
        nargv[k++] = argv[i];
    if (link) {
        snprintf(ldir, sizeof ldir, "-L%s", libdir);
        snprintf(rpath, sizeof rpath, "-Wl,-rpath,%s", libdir);
        nargv[k++] = ldir;
        nargv[k++] = "-lpiano_rt";
        nargv[k++] = rpath;
    }
    nargv[k] = NULL;

    execv(clang, nargv);
    fprintf(stderr, PIANO_WRAPPER_NAME ": cannot run %s: %s\n", clang,
            strerror(errno));
    return 127;
}
