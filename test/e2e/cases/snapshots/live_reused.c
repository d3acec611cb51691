// PIANO_FNS: task,leaf
// CFLAGS: -pthread
// Short threads, two at a time, while piano-db reads the live run: their
// slots are reused (rt/slots.c slot_reuse) under the reader, which finds
// each thread in its slot or in the ended file. With an argument, the program
// runs until that file exists (at most 20 s), about 3,000 threads a second, and
// prints how many threads it made.
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void task(int i) { for (int k = 0; k < 3; k++) leaf(i + k); }
static void *run(void *arg) { task((int)(long)arg); return NULL; }
int main(int argc, char **argv) {
    long made = 0;
    time_t start = time(NULL);
    do {
        pthread_t a, b;
        if (pthread_create(&a, NULL, run, (void *)made) != 0 || pthread_create(&b, NULL, run, (void *)(made + 1)) != 0)
            return 1;
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        made += 2;
        if (argc > 1)
            usleep(500);   /* a few thousand threads a second: the live run stays small */
    } while (argc > 1 ? access(argv[1], F_OK) != 0 && time(NULL) - start < 20 : made < 100);
    printf("%ld\n", made);
    return 0;
}
