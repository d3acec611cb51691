// PIANO_FNS: tick
// EXIT: 134
// The first run against a new database dies: its spool waits, but no database
// file exists yet.
#include <stdlib.h>
static volatile unsigned sink;
void tick(int i) { sink += (unsigned)i; }
int main(void) { for (int i = 0; i < 3; i++) tick(i); abort(); }
