// PIANO_FNS: plugin_entry,plugin_leaf,host_call
// PLUGIN: lib/plugin.c
// CFLAGS: -ldl
// dlopen/dlclose of an instrumented library, twice: every call counted and the
// library's function names still in the report after dlclose.
#include <dlfcn.h>
#include <stdio.h>
static volatile int sink;
void host_call(int i) { sink += i; }
static int use_plugin(int n) {
    void *h = dlopen("./libplugin.so", RTLD_NOW);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return -1; }
    int (*entry)(int) = (int (*)(int))dlsym(h, "plugin_entry");
    int r = entry(n);
    dlclose(h);
    return r;
}
int main(void) {
    host_call(1);
    use_plugin(3);
    host_call(2);
    use_plugin(4);
    host_call(3);
    printf("ok\n");
    return 0;
}
