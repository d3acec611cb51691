// PIANO_FNS: main,work
// CFLAGS: -fno-builtin -ldl -pthread
// An allocator shim as tracers make them (issue 25, item 2): its malloc, free,
// calloc and realloc forward to the next ones through dlsym(RTLD_NEXT, ...),
// looked up in a .preinit_array function; it keeps a thread-specific record
// (a key with a destructor); main forks, and both processes free(malloc(1)).
// Its directory functions are its own too, and after main has returned (its
// destructor ran) they end the process with status 97: piano's store at exit
// must read the spool's folders without them (raw getdents64 into memory of
// its own), as it must not depend on what the program's libc functions and
// allocator do by then. The check runs it several times.
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void *(*next_malloc)(size_t);
static void (*next_free)(void *);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static pthread_key_t key;
static volatile int ended;
static void record_free(void *p) { next_free(p); }
static void shim_init(void)
{
    next_malloc = dlsym(RTLD_NEXT, "malloc");
    next_free = dlsym(RTLD_NEXT, "free");
    next_calloc = dlsym(RTLD_NEXT, "calloc");
    next_realloc = dlsym(RTLD_NEXT, "realloc");
    pthread_key_create(&key, record_free);
}
__attribute__((section(".preinit_array"), used)) static void (*preinit)(void) = shim_init;
static void note(void)
{
    if (next_malloc && !pthread_getspecific(key))
        pthread_setspecific(key, next_malloc(64));
}
void *malloc(size_t n) { note(); return next_malloc(n); }
void free(void *p) { next_free(p); }
void *calloc(size_t a, size_t b) { note(); return next_calloc(a, b); }
void *realloc(void *p, size_t n) { note(); return next_realloc(p, n); }

/* The program's directory functions: unusable once main has returned. */
static void gone(void) { if (ended) _exit(97); }
#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))
DIR *opendir(const char *path) { gone(); return NEXT(opendir)(path); }
DIR *fdopendir(int fd) { gone(); return NEXT(fdopendir)(fd); }
struct dirent *readdir(DIR *d) { gone(); return NEXT(readdir)(d); }
void rewinddir(DIR *d) { gone(); NEXT(rewinddir)(d); }
int closedir(DIR *d) { gone(); return NEXT(closedir)(d); }
__attribute__((destructor)) static void program_done(void) { ended = 1; }

static void *thread(void *arg) { free(malloc(10)); return arg; }
__attribute__((noinline)) void work(void) { free(malloc(1)); }
int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, thread, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    pid_t c = fork();
    if (c < 0)
        return 1;
    work();
    if (c == 0)
        return 0;
    int st;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("child: status %d\n", st);
        return 1;
    }
    printf("done\n");
    return 0;
}
