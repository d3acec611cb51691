// PIANO_FNS: first,later
// A daemon-style program closes every descriptor it did not open, then opens
// its own file: piano must never write into it (later() registers after).
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int first(int x) { return x + 1; }
int later(int x) { return x * 2; }
int main(void) {
    int s = first(1);
    for (int fd = 3; fd < 1024; fd++) close(fd);
    int fds[8];
    for (int i = 0; i < 8; i++) fds[i] = open(i ? "/dev/null" : "mine.txt", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    s += later(s);
    const char msg[] = "only my bytes\n";
    if (write(fds[0], msg, strlen(msg)) < 0) return 1;
    for (int i = 0; i < 8; i++) close(fds[i]);
    printf("%d\n", s);
    return 0;
}
