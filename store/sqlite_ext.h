/*
 * sqlite_ext.h - forced first (-include) into the store's files that the
 * loadable extension libpiano_sqlite.so compiles again (sqlite_ext.c): their
 * sqlite3_* calls then go through the table of the SQLite that loads it.
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
