// PIANO_FNS: =main,serve,query,try_level,fail,recover
// A server's error path, as PostgreSQL's: main sets its buffer once
// (sigsetjmp, as PostgresMain), then each query sets many buffers of its own
// (PG_TRY, here 40 at different depths, so 40 addresses) before an error
// jumps back to main's. The jump must still close the calls it leaves there
// and then: recover, called after it (its frame bigger than the calls left,
// so their stack positions cannot tell it is not their callee), is main's
// child, never nested under the query the jump left.
#include <setjmp.h>
#include <stdio.h>
static sigjmp_buf top;
static volatile int sink;
int try_level(int n) {
    sigjmp_buf local;
    if (sigsetjmp(local, 0) == 0) {
        if (n > 1)
            return try_level(n - 1) + 1;
        return 1;
    }
    return 0;
}
void fail(void) { siglongjmp(top, 1); }
void query(int i) {
    sink += try_level(40);
    if (i % 2)
        fail();
    sink++;
}
void recover(void) {
    volatile char scratch[4096];
    scratch[0] = 1;
    scratch[4095] = 2;
    sink += scratch[0] + scratch[4095];
}
int main(void) {
    volatile int i = 0, errors = 0;
    if (sigsetjmp(top, 1) != 0) {
        errors++;
        recover();
        i++;
    }
    for (; i < 10; i++)
        query(i);
    printf("%d\n", errors);
    return 0;
}
