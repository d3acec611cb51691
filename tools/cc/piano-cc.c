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
 * When it links, the wrapper waits for clang and reads the .piano.sel section
 * of what was linked: the plugin writes there, for every translation unit,
 * the PIANO_FNS and PIANO_MIN_SIZE it was compiled under. Objects of
 * different selections linked together (PIANO_FNS changed, but the build
 * recompiled only some files), or all of another selection than a PIANO_FNS
 * set for this link, make it print one line naming them.
 *
 * Usage: PIANO_FNS=parse make CC=piano-cc CXX=piano-c++
 * Built twice by tools/cc/CMakeLists.txt (PIANO_WRAPPER_CXX=0/1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <elf.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
    const char *fully_static; /* -static or -static-pie: no shared library can be loaded */
    const char *other_abi;    /* -m32, -mx32, -m16: the runtime (built for the host) cannot be linked */
    int ir_inputs;    /* .ll, .bc or -x ir: LLVM IR, which clang does not generate */
    int own_pg;       /* -pg: the program's own mcount instrumentation */
    int no_passes;    /* -Xclang -disable-llvm-passes (or -optzns): the plugin does not run */
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

static int ext_is_ir(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    return dot && (strcmp(dot, ".ll") == 0 || strcmp(dot, ".bc") == 0);
}

static void scan_input(struct scan *s, const char *a)
{
    s->inputs++;
    if (s->lang ? lang_is_compiled(s->lang) : ext_is_compiled(a))
        s->sources++;
    if (s->lang ? strcmp(s->lang, "ir") == 0 : ext_is_ir(a))
        s->ir_inputs++;
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
        if (strcmp(a, "-Xclang") == 0 && i + 1 < argc &&
            (strcmp(argv[i + 1], "-disable-llvm-passes") == 0 ||
             strcmp(argv[i + 1], "-disable-llvm-optzns") == 0)) {
            s->no_passes = 1;
            i++;
            continue;
        }
        if (takes_separate_value(a)) {
            i++;
            continue;
        }
        if (strcmp(a, "-pg") == 0) {
            s->own_pg = 1;
            continue;
        }
        if (strcmp(a, "-c") == 0 || strcmp(a, "-S") == 0 ||
            strcmp(a, "--compile") == 0 || strcmp(a, "--assemble") == 0 ||
            strcmp(a, "-r") == 0 || strcmp(a, "-emit-llvm") == 0 ||
            strcmp(a, "-emit-ast") == 0) {
            s->no_link = 1;
            continue;
        }
        if (strcmp(a, "-static") == 0 || strcmp(a, "--static") == 0 || strcmp(a, "-static-pie") == 0) {
            s->fully_static = a;
            continue;
        }
        if (strcmp(a, "-m32") == 0 || strcmp(a, "-mx32") == 0 || strcmp(a, "-m16") == 0) {
            s->other_abi = a;
            continue;
        }
        if (strcmp(a, "-m64") == 0) {   /* the last one wins, as for clang */
            s->other_abi = NULL;
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
 * "piano-built-for-llvm=" that pass/Plugin.cpp embeds; 0 when the file has
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


/* Finds the folder of piano's public headers (<piano/span.h>): ../include
 * next to the wrapper, in an installed prefix and in the build tree alike.
 * Returns 0 with it in out, or -1 when there is none. */
static int find_include(char *out, size_t outlen)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    char p[PATH_MAX + 32], real[PATH_MAX];
    struct stat st;
    snprintf(p, sizeof p, "%s/../include", exe);
    if (!realpath(p, real))
        return -1;
    snprintf(p, sizeof p, "%s/piano/span.h", real);
    if (stat(p, &st) != 0)
        return -1;
    snprintf(out, outlen, "%s", real);
    return 0;
}


/* ---- The selection objects were compiled under (.piano.sel) ---------- */

/* The contents of the ELF section .piano.sel of path, malloc'd, or NULL
 * (not ELF, no such section, unreadable). 64-bit ELF only. */
static char *read_sel_section(const char *path, size_t *lenp)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *out = NULL;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
        close(fd);
        return NULL;
    }
    size_t len = (size_t)st.st_size;
    unsigned char *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return NULL;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)map;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff == 0 || eh->e_shoff > len ||
        (len - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum ||
        eh->e_shstrndx >= eh->e_shnum)
        goto done;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(map + eh->e_shoff);
    const Elf64_Shdr *strs = &sh[eh->e_shstrndx];
    if (strs->sh_offset > len || strs->sh_size > len - strs->sh_offset)
        goto done;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_name >= strs->sh_size || sh[i].sh_type == SHT_NOBITS)
            continue;
        const char *nm = (const char *)map + strs->sh_offset + sh[i].sh_name;
        size_t room = strs->sh_size - sh[i].sh_name;
        if (strnlen(nm, room) == room || strcmp(nm, ".piano.sel") != 0)
            continue;
        if (sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset)
            break;
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

struct sel_group {
    const char *spec, *min, *stage; /* point into the section's copy */
    const char *files[3];   /* the first few sources */
    size_t nfiles;
};

static void describe(char *buf, size_t len, const struct sel_group *g)
{
    const char *sep = g->stage[0] ? ", " : "";
    if (g->spec[0])
        snprintf(buf, len, "PIANO_FNS=%s PIANO_MIN_SIZE=%s%s%s", g->spec, g->min, sep, g->stage);
    else
        snprintf(buf, len, "PIANO_FNS unset, PIANO_MIN_SIZE=%s%s%s", g->min, sep, g->stage);
}

/* One entry of .piano.sel, split in place: "piano-sel 2" \t spec \t min \t
 * stage \t source (version 1: no stage). 0 when it is not one. */
static int parse_sel(char *e, struct sel_group *out, const char **src)
{
    int v2 = strncmp(e, "piano-sel 2\t", 12) == 0;
    if (!v2 && strncmp(e, "piano-sel 1\t", 12) != 0)
        return 0;
    char *f[4] = { e + 12 };
    int nf = v2 ? 4 : 3;
    for (int i = 1; i < nf; i++) {
        char *tab = strchr(f[i - 1], '\t');
        if (!tab)
            return 0;
        *tab = '\0';
        f[i] = tab + 1;
    }
    out->spec = f[0];
    out->min = f[1];
    out->stage = v2 ? f[2] : "";
    *src = f[nf - 1];
    return 1;
}

/* After a successful link of out: one line when its objects were compiled
 * under different selections, or under another one than this link's
 * PIANO_FNS (when set). */
static void check_selection(const char *me, const char *out)
{
    size_t len = 0;
    char *sec = read_sel_section(out, &len);
    if (!sec)
        return;
    struct sel_group groups[16];
    size_t ngroups = 0, extra = 0;
    for (char *e = sec; e < sec + len; e += strlen(e) + 1) {
        struct sel_group one;
        const char *src;
        if (!parse_sel(e, &one, &src))
            continue;
        size_t g = 0;
        while (g < ngroups && (strcmp(groups[g].spec, one.spec) || strcmp(groups[g].min, one.min) ||
                               strcmp(groups[g].stage, one.stage)))
            g++;
        if (g == ngroups) {
            if (ngroups == sizeof groups / sizeof groups[0]) {
                extra++;
                continue;
            }
            groups[ngroups] = one;
            groups[ngroups].nfiles = 0;
            ngroups++;
        }
        struct sel_group *gr = &groups[g];
        int seen = 0;
        for (size_t f = 0; f < gr->nfiles && f < 3; f++)
            seen |= strcmp(gr->files[f], src) == 0;
        if (seen)
            continue;
        if (gr->nfiles < 3)
            gr->files[gr->nfiles] = src;
        gr->nfiles++;
    }
    const char *hint = "rebuild them all with one PIANO_FNS (cmake --build . "
                       "--clean-first, make clean all; through ccache, with "
                       "CCACHE_COMPILERCHECK='%compiler% --piano-cache-key')";
    if (ngroups > 1) {
        fprintf(stderr, "%s: %s links objects compiled under %zu different "
                        "selections:", me, out, ngroups + extra);
        for (size_t g = 0; g < ngroups; g++) {
            char d[512];
            describe(d, sizeof d, &groups[g]);
            fprintf(stderr, "%s %s (%zu file%s:", g ? ";" : "", d,
                    groups[g].nfiles, groups[g].nfiles == 1 ? "" : "s");
            for (size_t f = 0; f < groups[g].nfiles && f < 3; f++) {
                const char *b = strrchr(groups[g].files[f], '/');
                fprintf(stderr, "%s %s", f ? "," : "", b ? b + 1 : groups[g].files[f]);
            }
            fprintf(stderr, "%s)", groups[g].nfiles > 3 ? ", ..." : "");
        }
        fprintf(stderr, "; %s\n", hint);
    } else if (ngroups == 1) {
        const char *now = getenv("PIANO_FNS");
        if (now && *now && strcmp(now, groups[0].spec) != 0) {
            char d[512];
            describe(d, sizeof d, &groups[0]);
            fprintf(stderr, "%s: %s links objects compiled under %s, but "
                            "PIANO_FNS is now %s: they were not rebuilt; %s\n",
                    me, out, d, now, hint);
        }
    }
    free(sec);
}

/* The output of a link: -o X, -oX, --output X, --output=X; else a.out. */
static const char *link_output(int argc, char **argv)
{
    const char *out = "a.out";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < argc)
            out = argv[++i];
        else if (strncmp(a, "--output=", 9) == 0)
            out = a + 9;
        else if (strncmp(a, "-o", 2) == 0 && a[2])
            out = a + 2;
        else if (strcmp(a, "--") == 0)
            break;
        else if (takes_separate_value(a))
            i++;
    }
    return out;
}

static const char *wrapper_name(const char *argv0)
{
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    const char *n = slash ? slash + 1 : argv0;
    return n && *n ? n : PIANO_WRAPPER_NAME;
}

/* One line naming a file by what changes when it is replaced. */
static void print_file_id(const char *what, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0)
        printf("%s %s %lld %lld.%09ld\n", what, path, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
               st.st_mtim.tv_nsec);
    else
        printf("%s %s missing\n", what, path);
}

/* --piano-cache-key: what an object built by this wrapper depends on beyond
 * its command line and sources: the clang and plugin it runs and the
 * plugin's variables, read from the environment, which a compiler cache
 * (ccache) does not hash. CCACHE_COMPILERCHECK='%compiler% --piano-cache-key'
 * hashes this instead of the wrapper's own mtime (doc/builds.md). */
static int print_cache_key(const char *clang, const char *argv0)
{
    char exe[PATH_MAX] = "", libdir[PATH_MAX] = "";
    static char pluginpath[PATH_MAX + 64];
    printf("piano-cache-key 1\n");
    print_file_id("clang", clang);   /* an absolute path (tools/cc/CMakeLists.txt) */
    if (find_plugin(exe, sizeof exe, libdir, sizeof libdir, pluginpath, sizeof pluginpath) == 0)
        print_file_id("plugin", pluginpath);
    else
        printf("plugin missing next to %s\n", exe[0] ? exe : argv0);
    static const char *const vars[] = { "PIANO_FNS", "PIANO_MIN_SIZE", "PIANO_AFTER_INLINING", "PIANO_SYSTEM_DIRS" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v)
            printf("%s=%s\n", vars[i], v);
        else
            printf("%s unset\n", vars[i]);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct scan s = {0};
    char exe[PATH_MAX] = "", libdir[PATH_MAX] = "";
    static char pluginpath[PATH_MAX + 64];
    const char *clang = PIANO_WRAPPER_CLANG;
    const char *me = wrapper_name(argv[0]);

    if (argc == 2 && strcmp(argv[1], "--piano-cache-key") == 0)
        return print_cache_key(clang, argv[0]);
    scan_args(&s, argc - 1, argv + 1, 0);
    int compile = s.sources > 0 && !s.no_compile;
    int link = s.inputs > 0 && !s.no_link;

    /* A fully static program loads no shared library: the runtime is one
     * (libpiano_rt.so: it interposes malloc and longjmp, and loads SQLite at
     * exit). Said here, not as the linker's "cannot find -lpiano_rt". */
    if (link && s.fully_static) {
        fprintf(stderr,
                "%s: %s: piano's runtime is a shared library (libpiano_rt.so), which a fully static "
                "program cannot load; link without %s (-static-libgcc and -static-libstdc++ are fine)\n",
                me, s.fully_static, s.fully_static);
        return 1;
    }
    /* The same for another ABI than the runtime's: the linker skips
     * libpiano_rt.so as incompatible and says it cannot find it. */
    if (link && s.other_abi) {
        fprintf(stderr,
                "%s: %s: piano's runtime (libpiano_rt.so) is built for this machine's 64-bit ABI, which a program "
                "built with %s cannot load; build without it\n",
                me, s.other_abi, s.other_abi);
        return 1;
    }
    char **nargv = calloc((size_t)argc + 16, sizeof *nargv);
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
    static char plugin[PATH_MAX + 96], ldir[PATH_MAX + 8], rpath[PATH_MAX + 16], incdir[PATH_MAX];
    if (compile) {
        snprintf(plugin, sizeof plugin, "-fpass-plugin=%s", pluginpath);
        nargv[k++] = plugin;
    }
    /* __attribute__((no_instrument_function)): clang marks every function
     * it emits without it as -pg -mfentry asks ("fentry-call"); the plugin
     * instruments only marked functions and removes the marks before code
     * generation (pass/PianoPass.h, "no_instrument_function"). cc1 flags
     * only: the driver's -pg would also link gcrt1.o and keep frame
     * pointers. Not over the program's own -pg (its marks are its own), for
     * LLVM IR inputs (clang generates no marks for them), nor when the
     * plugin does not run (the marks would stay). */
    if (compile && !s.own_pg && !s.ir_inputs && !s.no_passes) {
        nargv[k++] = "-Xclang";
        nargv[k++] = "-pg";
        nargv[k++] = "-Xclang";
        nargv[k++] = "-mfentry";
        setenv("PIANO_FENTRY_MARKS", "1", 1);
    } else {
        unsetenv("PIANO_FENTRY_MARKS"); /* exported for a build by hand: not these marks */
    }
    /* <piano/span.h> found with no flag, its calls made real (not its empty
     * fallback): after the program's own -I, as a system folder. */
    if (s.sources > 0 && find_include(incdir, sizeof incdir) == 0) {
        nargv[k++] = "-DPIANO_SPANS=1";
        nargv[k++] = "-idirafter";
        nargv[k++] = incdir;
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

    if (link) {
        /* Wait for the link, then look at what it made. */
        pid_t pid = fork();
        if (pid == 0) {
            execv(clang, nargv);
            int err = errno;
            fprintf(stderr, "%s: cannot run %s: %s%s\n", me, clang, strerror(err),
                    err == ENOENT ? " (Debian package clang-" PIANO_WRAPPER_LLVM_MAJOR ")" : "");
            _exit(127);
        }
        if (pid > 0) {
            int st;
            while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                    return 1;
            if (WIFSIGNALED(st)) {
                signal(WTERMSIG(st), SIG_DFL);
                raise(WTERMSIG(st));
                return 128 + WTERMSIG(st);
            }
            if (WEXITSTATUS(st) == 0)
                check_selection(me, link_output(argc, argv));
            return WEXITSTATUS(st);
        }
        /* fork failed: run clang in place, without the check */
    }
    execv(clang, nargv);
    int err = errno;
    fprintf(stderr, "%s: cannot run %s: %s%s\n", me, clang, strerror(err),
            err == ENOENT ? " (Debian package clang-" PIANO_WRAPPER_LLVM_MAJOR ")" : "");
    return 127;
}
