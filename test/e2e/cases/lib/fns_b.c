/* A module of its own for storage/fns_once: one function, registered by its constructor. */
static volatile unsigned sink_b;
void fns_b(int i) { sink_b += (unsigned)i; }
