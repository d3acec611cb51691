// PIANO_FNS: serve
// A daemon (memcached -d, daemon(3)): the launcher forks, records nothing of
// its own and ends; its child is the server. The launcher's run is kept as
// the child's parent, empty. `piano-db report` without a run shows the child
// and says nothing of the parent: naming an empty run as the one the user
// most likely meant would send them to nothing.
#include <stdio.h>
#include <unistd.h>
static volatile unsigned sink;
void serve(int i) { sink += (unsigned)i; }
int main(void)
{
    int done[2];
    if (pipe(done) != 0)
        return 1;
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        close(done[0]);
        setsid();
        for (int i = 0; i < 50; i++)
            serve(i);
        return 0;   /* its run is stored at exit, then the pipe's end closes */
    }
    close(done[1]);
    char c;
    while (read(done[0], &c, 1) > 0)   /* the server's end, so the check finds both runs */
        ;
    printf("launched %d\n", p > 0);
    fflush(stdout);
    _exit(0);   /* as daemon(3) ends the launcher */
}
