// PIANO_FNS: work
// A daemon's chain as nginx makes it (with PIANO_FNS=ngx_http_process_request_line
// at run time): the program (P) forks a master (M) and exits; M forks a worker (W)
// and exits too, before W is done; only W records. P and M, which recorded
// nothing, are stored all the same, so W's run links to its master and the
// master to P: at their exits W's run was still in the spool (live; nginx's
// workers run as nobody and leave their runs there for root's piano-db).
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }

static void touch(const char *name, long value)
{
    FILE *f = fopen(name, "w");
    if (f) {
        fprintf(f, "%ld\n", value);
        fclose(f);
    }
}

static void wait_for(const char *name)
{
    time_t start = time(NULL);
    while (access(name, F_OK) != 0 && time(NULL) - start < 20)
        usleep(5000);
}

int main(void)
{
    pid_t m = fork();
    if (m < 0)
        return 1;
    if (m > 0) {   /* P: exits once M has forked W */
        wait_for("m.forked");
        return 0;
    }
    pid_t w = fork();
    if (w < 0)
        return 1;
    if (w > 0) {   /* M: exits at once, W still running */
        touch("m.pid", (long)getpid());
        touch("m.forked", (long)w);
        return 0;
    }
    touch("w.pid", (long)getpid());   /* W: works once told to */
    wait_for("go");
    work(1);
    return 0;
}
