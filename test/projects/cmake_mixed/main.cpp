#include <cstdio>
#include <string>
#include "resolver.h"
#include "tokens.h"

static long frame(app::Resolver &r, int i)
{
    long acc = tok_count("a,b,c");                  /* tok_is_sep x5 */
    acc += r.resolve(("name" + std::to_string(i)).c_str());
    acc += r.resolve("other");
    return acc;
}

int main()
{
    app::Resolver r;
    long total = 0;
    for (int i = 0; i < 7; i++)
        total += frame(r, i);
    std::printf("total %ld\n", total);
    return 0;
}
