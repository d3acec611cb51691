/*
 * import_load.c - the import at exit, as libpiano_rt.so makes it: store/ and
 * SQLite are in libpiano_import.so, next to the runtime, loaded only when a
 * run is stored. A program started with PIANO_DISABLE=1, or one that records
 * nothing to store, never maps them (the loader's work and page faults for
 * libsqlite3 were ~4 ms of every short run: bench/README.md, issue 23). It
 * holds its own SQLite, unless the process has the system's loaded already.
 * (rt/import_linked.c: the same call linked directly, for the unit tests
 * that link the recorder's objects.)
 */
#define _GNU_SOURCE
#include "internal.h"
#include "exit_import.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define IMPORT_LIB "libpiano_import.so"
/* The same with the system's libsqlite3.so (rt/CMakeLists.txt): for a process
 * that has loaded that already, whose SQLite must be the only one to open and
 * lock a database file here (SQLite keeps a process's POSIX locks in a table
 * of its own: a second copy closing the file would drop the first's). */
#define IMPORT_LIB_SHARED "libpiano_import_shared.so"

/* dl_iterate_phdr's callback: stops at a loaded libsqlite3.so (by its file
 * name; not dlopen's RTLD_NOLOAD, which looks for the file on disk). */
static int is_system_sqlite(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    const char *base = slash ? slash + 1 : info->dlpi_name;
    return base && !strncmp(base, "libsqlite3.so", sizeof "libsqlite3.so" - 1);
}

/* The runtime's own path when the loader named it relatively (a relative
 * LD_LIBRARY_PATH): made absolute at start, before the program can chdir.
 * Untouched (no page) in the usual case of an absolute name. */
static char rel_resolved[PIANO_PATH_MAX];

static const char *runtime_path(void)
{
    Dl_info info;
    if (!dladdr((void *)&runtime_path, &info) || !info.dli_fname || !info.dli_fname[0])
        return NULL;
    return info.dli_fname;
}

void import_locate(void)
{
    const char *p = runtime_path();
    if (p && p[0] != '/' && !realpath(p, rel_resolved))
        rel_resolved[0] = '\0';
}

int rt_exit_import(const char *db_path, const char *dir, const struct piano_import_mem *mem, char *err, size_t errn)
{
    const char *self = rel_resolved[0] ? rel_resolved : runtime_path();
    const char *slash = self ? strrchr(self, '/') : NULL;
    char lib[PIANO_PATH_MAX];
    if (!slash || (size_t)(slash - self) + sizeof "/" IMPORT_LIB > sizeof lib) {
        snprintf(err, errn, "cannot find %s: the runtime's own path is unknown", IMPORT_LIB);
        return PIANO_EXIT_NOT_OPENED;
    }
    memcpy(lib, self, (size_t)(slash - self) + 1);
    void *h = NULL;
    if (dl_iterate_phdr(is_system_sqlite, NULL)) {
        strcpy(lib + (slash - self) + 1, IMPORT_LIB_SHARED);
        h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);   /* none (a build without its own SQLite): the one library */
    }
    if (!h) {
        strcpy(lib + (slash - self) + 1, IMPORT_LIB);
        /* Lazy: only the functions the import calls are bound. */
        h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
    }
    if (!h) {
        const char *why = dlerror();
        snprintf(err, errn, "cannot load %s: %s", lib, why ? why : "unknown error");
        return PIANO_EXIT_NOT_OPENED;
    }
    int (*fn)(const char *, const char *, const struct piano_import_mem *, char *, size_t);
    *(void **)&fn = dlsym(h, "piano_store_exit_import");
    if (!fn) {
        snprintf(err, errn, "%s has no piano_store_exit_import (from another version of piano?)", lib);
        return PIANO_EXIT_NOT_OPENED;
    }
    return fn(db_path, dir, mem, err, errn);
}
