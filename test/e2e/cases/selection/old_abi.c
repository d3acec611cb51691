// PIANO_FNS: =main
// ENV: PIANO_FNS=legacy
// A module built by an older piano (ABI 2: its sites have no `on` byte and
// no match name after the name) registers its sites by hand here, then calls
// its hooks. The runtime warns once and records it as compiled: it must not
// read past its sites (the bytes after one here would tell it the function
// is `other_fn`, not selected, and where its byte is).
#include <stdint.h>
#include <stdio.h>

struct piano_site_abi2 {
    uint32_t id, line;
    const char *name, *file;
};
static unsigned char not_a_byte = 1;
static struct {
    struct piano_site_abi2 site;
    unsigned char *after;   /* where ABI 3 has `on` */
} legacy = { { 0, 7, "legacy_fn\0other_fn\0" "0", "old.c" }, &not_a_byte };

int __piano_register(void *const *sites, uint32_t count, uint32_t abi_version);
void __piano_enter(void *site);
void __piano_exit(void *site);

__attribute__((constructor)) static void register_old_module(void)
{
    void *sites[] = { &legacy.site };
    __piano_register(sites, 1, 2);
}

static int legacy_fn(int x)
{
    __piano_enter(&legacy.site);
    int r = x * 2 + 1;
    __piano_exit(&legacy.site);
    return r;
}

int main(void)
{
    int s = 0;
    for (int i = 0; i < 3; i++)
        s += legacy_fn(i);
    printf("%d %d\n", s, not_a_byte);
    return 0;
}
