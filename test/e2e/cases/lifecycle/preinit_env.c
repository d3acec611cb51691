// ENV: PIANO_FNS=alpha
// A .preinit_array function runs before libc has set environ: getenv finds
// nothing there. Its call of an instrumented function starts piano, which
// read no PIANO_* variable and stored the run in ~/.piano/piano.db, whatever
// PIANO_DB said. The initial environment is read from the initial stack:
// the run goes to PIANO_DB, and the run-time PIANO_FNS (alpha) is applied.
#include <stdio.h>
#include <stdlib.h>

void alpha(void) { printf("alpha\n"); }
void beta(void) { printf("beta\n"); }

static const char *seen = "unset";

static void early(int argc, char **argv, char **envp)
{
    (void)argc, (void)argv, (void)envp;
    alpha();
    beta();
    seen = getenv("PIANO_FNS") ? "set" : "unset";   /* the program's own view: unchanged */
}

__attribute__((section(".preinit_array"), used)) static void (*early_ptr)(int, char **, char **) = early;

int main(void)
{
    alpha();
    beta();
    printf("preinit getenv: %s, main getenv: %s\n", seen, getenv("PIANO_FNS") ? "set" : "unset");
    return 0;
}
