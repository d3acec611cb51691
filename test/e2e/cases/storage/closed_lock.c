// PIANO_FNS: frame,leaf
// A daemon-like program closes every descriptor it did not open and dup2s
// onto fd 512 while piano-db commands run: its run stays live (piano-db
// leaves it alone) and is stored whole, once, at exit. Run with an argument
// it waits for the check's piano-db commands (ready -> go files).
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(-i); }
int main(int argc, char **argv) {
    for (int i = 0; i < 1000; i++) frame(i);
    for (int fd = 3; fd < 4096; fd++) close(fd);
    dup2(2, 512);
    dup2(2, 1023);
    if (argc > 1) {
        close(open("ready", O_WRONLY | O_CREAT, 0600));
        struct timespec t = { 0, 10000000 };
        for (int i = 0; i < 1000 && access("go", F_OK) != 0; i++) nanosleep(&t, 0);
    }
    for (int i = 0; i < 1000; i++) frame(i);
    printf("done\n");
    return 0;
}
