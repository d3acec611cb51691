// PIANO_FNS: work,release,release_rest
// CFLAGS: -pthread
// ENV: PIANO_HEAP=1
// Heap in use with 5,000 short threads whose reply main frees after the join
// (issue 25, item 10): each thread allocates its reply in work(); main frees
// it in release(), but keeps every 50th (100 replies) and frees half of those
// at the end in release_rest(). An ended thread's live blocks go to the heir
// ("ended threads") so that its slot is reused: the spool stays small (the
// program measures its spool's blocks before it ends: it printed ~120 MB
// before, 24 KB a thread), and every figure is exact.
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define THREADS 5000
static void *replies[THREADS];
__attribute__((noinline)) void work(int i) { replies[i] = malloc(64 + (size_t)(i % 8) * 8); }
__attribute__((noinline)) void release(int i) { free(replies[i]); }
__attribute__((noinline)) void release_rest(void)
{
    for (int i = 0; i < THREADS; i += 100)
        free(replies[i]);
}
static void *run(void *arg) { work((int)(long)arg); return NULL; }

/* The blocks of the files in the run folders of the spool, in KiB. */
static long long spool_kb(void)
{
    char root[4096];
    snprintf(root, sizeof root, "%s.spool", getenv("PIANO_DB"));
    long long kb = 0;
    DIR *d = opendir(root);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char dir[8192];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        DIR *r = opendir(dir);
        struct dirent *f;
        while (r && (f = readdir(r)) != NULL) {
            struct stat st;
            if (f->d_name[0] != '.' && fstatat(dirfd(r), f->d_name, &st, 0) == 0)
                kb += st.st_blocks / 2;
        }
        if (r)
            closedir(r);
    }
    if (d)
        closedir(d);
    return kb;
}

int main(void)
{
    for (long i = 0; i < THREADS; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, run, (void *)i) != 0 || pthread_join(t, NULL) != 0)
            return 1;
        if (i % 50)
            release((int)i);
    }
    release_rest();
    fprintf(stderr, "spool %lld KiB\n", spool_kb());
    printf("done\n");
    return 0;
}
