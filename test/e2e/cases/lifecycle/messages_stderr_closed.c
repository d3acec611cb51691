// A daemon closes its standard descriptors and opens its data file, which
// gets number 0, 1 or 2. piano's messages must never go there (a failed
// store at exit used to append "piano: ..." to the data file): only to the
// standard error open when piano started, checked by identity, else to the
// spool's log, <db>.spool/log. The store is made to fail: the program puts a
// folder where the database would be.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
int main(void) {
    for (int i = 0; i < 100; i++)
        work(i);
    close(0);
    close(1);
    close(2);
    for (int i = 0; i < 3; i++)
        if (open("data.txt", O_WRONLY | O_CREAT | O_APPEND, 0600) != i)
            return 3;
    for (int i = 0; i < 3; i++)
        if (write(i, "data\n", 5) != 5)
            return 4;
    unlink("piano.db");
    if (mkdir("piano.db", 0700) != 0)
        return 5;
    return 0;
}
