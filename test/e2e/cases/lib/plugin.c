// A plugin for dlopen.c: instrumented functions in a library that is unloaded.
static volatile int sink;
void plugin_leaf(int i) { sink += i; }
int plugin_entry(int n) { for (int i = 0; i < n; i++) plugin_leaf(i); return sink; }
