/*
 * piano-cc.c - piano-cc and piano-c++: drop-in CC / CXX wrappers.
 *
 * They exec (no shell) the clang of the LLVM they were built with (LLVM N),
 * with
 *   -fpass-plugin=<lib>/piano/llvm-N/PianoPass.so       when something is compiled
 *      (or <lib>/PianoPass.so when there is no piano/llvm-N/ folder)
 *   -L<lib> -lpiano_rt -Wl,-rpath,<lib>               when something is linked
 * where <lib> is ../lib next to the wrapper's own executable (found through
 * /proc/self/exe), so the build tree and an installed prefix both work.
 * A plugin built for another LLVM (its embedded "piano-built-for-llvm=M"
 * differs) is refused with one line, before clang runs.
 * Installed also as piano-cc-N / piano-c++-N, so that several builds (one per
 * LLVM) can share a prefix.
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
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PIANO_WRAPPER_NAME
#define PIANO_WRAPPER_NAME "piano-cc"
#endif
#ifndef PIANO_WRAPPER_CLANG
#define PIANO_WRAPPER_CLANG "clang"
#endif
#ifndef PIANO_WRAPPER_LLVM_MAJOR
#define PIANO_WRAPPER_LLVM_MAJOR "14"
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

/* The LLVM major a PianoPass.so is built for: the number after the marker
 * "piano-built-for-llvm=" that pass/PianoPass.cpp embeds; 0 when the file has
 * none (an older or foreign plugin), -1 when it cannot be read. */
static int plugin_llvm_major(const char *path)
{
    static const char marker[] = "piano-built-for-llvm=";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        close(fd);
        return -1;
    }
    size_t len = (size_t)st.st_size;
    char *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return -1;
    int major = 0;
    const char *m = memmem(map, len, marker, sizeof marker - 1);
    if (m) {
        const char *d = m + sizeof marker - 1, *end = map + len;
        while (d < end && *d >= '0' && *d <= '9' && major < 1000)
            major = major * 10 + (*d++ - '0');
    }
    munmap(map, len);
    return major;
}

/* Finds the plugin for this wrapper's LLVM and the directory of
 * libpiano_rt.so: for <lib> in ../lib and ../<libdir> next to the wrapper,
 * <lib>/piano/llvm-N/PianoPass.so (installed side by side for several LLVM
 * majors), else <lib>/PianoPass.so (the build tree, or a single install). */
static int find_plugin(char *exe, size_t exelen, char *libdir, size_t liblen,
                       char *plugin, size_t pluglen)
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
    const char *subdirs[] = {"piano/llvm-" PIANO_WRAPPER_LLVM_MAJOR "/", ""};
    for (size_t k = 0; k < sizeof cands / sizeof cands[0]; k++) {
        char p[PATH_MAX + 64], real[PATH_MAX];
        snprintf(p, sizeof p, "%s/../%s", bindir, cands[k]);
        if (!realpath(p, real))
            continue;
        for (size_t j = 0; j < sizeof subdirs / sizeof subdirs[0]; j++) {
            struct stat st;
            snprintf(p, sizeof p, "%s/%sPianoPass.so", real, subdirs[j]);
            if (stat(p, &st) != 0)
                continue;
            snprintf(libdir, liblen, "%s", real);
            snprintf(plugin, pluglen, "%s", p);
            return 0;
        }
    }
    return -1;
}

static const char *wrapper_name(const char *argv0)
{
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    const char *n = slash ? slash + 1 : argv0;
    return n && *n ? n : PIANO_WRAPPER_NAME;
}

int main(int argc, char **argv)
{
    struct scan s = {0};
    char exe[PATH_MAX] = "", libdir[PATH_MAX] = "";
    static char pluginpath[PATH_MAX + 64];
    const char *clang = PIANO_WRAPPER_CLANG;
    const char *me = wrapper_name(argv[0]);

    scan_args(&s, argc - 1, argv + 1, 0);
    int compile = s.sources > 0 && !s.no_compile;
    int link = s.inputs > 0 && !s.no_link;

    char **nargv = calloc((size_t)argc + 8, sizeof *nargv);
    if (!nargv) {
        fprintf(stderr, "%s: out of memory\n", me);
        return 1;
    }
    int k = 0;
    nargv[k++] = (char *)clang;

    if (compile || link) {
        if (find_plugin(exe, sizeof exe, libdir, sizeof libdir, pluginpath,
                        sizeof pluginpath) != 0) {
            fprintf(stderr, "%s: cannot find PianoPass.so next to %s\n", me,
                    exe[0] ? exe : argv[0]);
            return 1;
        }
    }
    if (compile) {
        int major = plugin_llvm_major(pluginpath);
        if (major != atoi(PIANO_WRAPPER_LLVM_MAJOR)) {
            char built[48] = "an unknown LLVM", hint[64] = "";
            if (major > 0) {
                snprintf(built, sizeof built, "LLVM %d", major);
                snprintf(hint, sizeof hint, ", or use " PIANO_WRAPPER_NAME "-%d", major);
            }
            fprintf(stderr,
                    "%s: %s is built for %s, but %s runs clang " PIANO_WRAPPER_LLVM_MAJOR
                    " (%s): install piano built with LLVM " PIANO_WRAPPER_LLVM_MAJOR
                    " (it adds lib/piano/llvm-" PIANO_WRAPPER_LLVM_MAJOR "/)%s\n",
                    me, pluginpath, built, me, clang, hint);
            return 1;
        }
    }
    static char plugin[PATH_MAX + 96], ldir[PATH_MAX + 8], rpath[PATH_MAX + 16];
    if (compile) {
        snprintf(plugin, sizeof plugin, "-fpass-plugin=%s", pluginpath);
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
    int err = errno;
    fprintf(stderr, "%s: cannot run %s: %s%s\n", me, clang, strerror(err),
            err == ENOENT ? " (Debian package clang-" PIANO_WRAPPER_LLVM_MAJOR ")" : "");
    return 127;
}
