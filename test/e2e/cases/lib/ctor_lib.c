// A library for ctors.c: its own instrumented constructor and destructor.
static volatile int sink;
void lib_work(int i) { sink += i; }
__attribute__((constructor)) static void lib_ctor(void) { lib_work(1); }
__attribute__((destructor)) static void lib_dtor(void) { lib_work(2); }
