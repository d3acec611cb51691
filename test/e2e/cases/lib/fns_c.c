/* A module of its own for storage/fns_once: one function, registered by its constructor. */
static volatile unsigned sink_c;
void fns_c(int i) { sink_c += (unsigned)i; }
