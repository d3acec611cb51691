// A process title set as nginx's and Redis's setproctitle do: over argv[0],
// the environment moved away to make room (proc_title.c, exit_title.c include
// it; a header, not a case).
#include <stdlib.h>
#include <string.h>
extern char **environ;
static char *title_start, *title_end;
static void title_init(int argc, char **argv) {
    title_start = argv[0];
    title_end = argv[argc - 1] + strlen(argv[argc - 1]) + 1;
    for (int i = 0; environ[i]; i++)
        if (environ[i] == title_end) title_end += strlen(environ[i]) + 1;
    for (int i = 0; environ[i]; i++) environ[i] = strdup(environ[i]);
}
static void title_set(const char *t) {
    memset(title_start, 0, (size_t)(title_end - title_start));
    strncpy(title_start, t, (size_t)(title_end - title_start) - 1);
}
