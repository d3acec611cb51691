/*
 * import_linked.c - the import at exit linked directly (store/ and SQLite in
 * the same program): the unit tests that link the recorder's objects.
 * libpiano_rt.so loads it instead (rt/import_load.c).
 */
#include "internal.h"
#include "exit_import.h"

void import_locate(void) {}

int rt_exit_import(const char *db_path, const char *dir, const struct piano_import_mem *mem, char *err, size_t errn)
{
    return piano_store_exit_import(db_path, dir, mem, err, errn);
}
