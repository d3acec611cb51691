// CFLAGS: -fsanitize=memory -pthread
// A program built with a sanitizer, under piano: its own output and exit
// status as without piano, nothing on its stderr, every call counted. Under
// MemorySanitizer the exit's import (uninstrumented SQLite) handed memory the
// sanitizer never saw written to its interceptors: it reported it and ended
// the program with status 1, its buffered output lost. sanitized_address and
// sanitized_thread include this program.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i * 3 % 7;
    return s;
}

static char *copy(const char *s)
{
    char *p = malloc(strlen(s) + 1);
    strcpy(p, s);
    return p;
}

static void *worker(void *arg)
{
    int t = 0;
    for (int i = 0; i < 50; i++)
        t += work(i);
    free(copy((const char *)arg));
    return (void *)(long)t;
}

int main(void)
{
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, worker, "worker");
    int t = 0;
    for (int i = 0; i < 100; i++)
        t += work(i);
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(th[i], &r);
        t += (int)(long)r;
    }
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        printf("child %d\n", work(4));
        exit(0);   /* stores the child's run at its exit too */
    }
    int status;
    waitpid(child, &status, 0);
    char *name = copy("main");
    printf("%s %d %d\n", name, t, WEXITSTATUS(status));   /* buffered: written at exit, after piano's */
    free(name);
    return 0;
}
