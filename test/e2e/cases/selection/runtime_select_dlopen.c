// PIANO_FNS: *
// PLUGIN: lib/plugin.c
// CFLAGS: -ldl
// ENV: PIANO_FNS=plugin_leaf,host_call
// A library built with piano and loaded later (dlopen) gets the run-time
// selection of the program: plugin_leaf is recorded, plugin_entry (compiled
// in, not selected) is not; after dlclose the names of what it recorded stay.
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
