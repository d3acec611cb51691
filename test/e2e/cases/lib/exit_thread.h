// Which thread runs the process's exit, and that the snapshot thread runs.
// exit_thread_watch() (once, in main): at the exit, "exit on NAME" is printed
// (stdout), NAME given by exit_thread_name() on the thread that ran the exit
// ("another thread" when none was given there: the snapshot thread's exit).
// Without piano, glibc runs exit(0) on the thread whose end leaves none
// (main's pthread_exit, a thread's return): the line says that thread.
// snaps_written() waits (up to 20 s) until a snapshot is written, so that
// the snapshot thread runs when the program's threads end.
// A header, not a case (the snapshots_end_* cases include it).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "spool_file.h"
static __thread const char *exit_thread_name_;
static FILE *exit_thread_out;   /* where the line goes: stdout unless exit_thread_to says */
static inline void exit_thread_print(void) {
    fprintf(exit_thread_out ? exit_thread_out : stdout, "exit on %s\n", exit_thread_name_ ? exit_thread_name_ : "another thread");
}
static inline void exit_thread_name(const char *n) { exit_thread_name_ = n; }
static inline void exit_thread_watch(void) { atexit(exit_thread_print); }
static inline void exit_thread_to(FILE *f) { exit_thread_out = f; }
/* Whether the main thread has ended (pthread_exit: a zombie until the
 * process ends). */
static inline int main_gone_now(void) {
    char p[64], st[512];
    snprintf(p, sizeof p, "/proc/self/task/%d/stat", (int)getpid());
    FILE *f = fopen(p, "r");
    if (!f)
        return 1;
    size_t n = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    st[n] = 0;
    const char *paren = strrchr(st, ')');
    return paren && (paren[2] == 'Z' || paren[2] == 'X');
}
/* Waits (up to 20 s) until it has: the caller's end is then the last. */
static inline int main_gone(void) {
    for (int i = 0; i < 4000 && !main_gone_now(); i++) {
        struct timespec d = { 0, 5000000 };
        nanosleep(&d, NULL);
    }
    return main_gone_now();
}
static inline int snaps_written(void) {
    for (int i = 0; i < 4000; i++) {
        if (spool_file_size("snaps") > 0)
            return 1;
        struct timespec d = { 0, 5000000 };
        nanosleep(&d, NULL);
    }
    return 0;
}
