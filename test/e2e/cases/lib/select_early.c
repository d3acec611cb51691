// For runtime_select.c: a library's constructor runs before the program's, so
// the program's alpha and beta, called from here, register their sites
// lazily, before the program's module constructor registers them.
void alpha(void);
void beta(void);
__attribute__((constructor)) static void early_ctor(void) { alpha(); beta(); }
