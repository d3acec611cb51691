#include "resolver.h"

namespace app {
int Resolver::hash(const char *name)
{
    int h = 0;
    for (; *name; name++)
        h = h * 31 + *name;
    return h;
}

int Resolver::resolve(const char *name) { return hash(name) & 0xffff; }
}
