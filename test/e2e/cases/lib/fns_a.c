/* A module of its own for storage/fns_once: one function, registered by its constructor. */
static volatile unsigned sink_a;
void fns_a(int i) { sink_a += (unsigned)i; }
