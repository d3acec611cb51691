// PIANO_FNS: =outer,work
// The import reads a thread's slot of the states file through a mapping: a
// slot is mostly holes, and read-ahead there (8 MiB around a fault on a disk
// whose read_ahead_kb is 8192) filled the page cache with pages of zeros,
// thousands a run, which the folder's next taker then paid to truncate. A
// forked child that ends inside the call that forked it (a shell's subshell)
// closed no frame: the import's read of its frame buffer's first word was
// such a fault.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
int outer(void) {
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 3; i++) work(i);
        exit(0);   /* in outer, the frame it forked in: never closed */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    for (int i = 0; i < 5; i++) work(i);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
int main(void) {
    printf("%d\n", outer());
    return 0;
}
