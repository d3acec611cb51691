// ENV: PIANO_HEAP=1
// heap in use through C++ new[] / delete[] and new / delete: the owner is the
// function innermost at new, whoever deletes.
#include <cstdio>

struct Node {
    long v[16];   // 128 bytes
};

static Node *kept_nodes;
static char *scratch;
static Node *single;

__attribute__((noinline)) void make_nodes() { kept_nodes = new Node[10]; }           // 1280 bytes, kept
__attribute__((noinline)) void make_scratch() { scratch = new char[4096]; }           // deleted below
__attribute__((noinline)) void drop_scratch() { delete[] scratch; }
__attribute__((noinline)) void make_single() { single = new Node; }                   // 128 bytes, kept

int main()
{
    make_nodes();
    make_scratch();
    drop_scratch();
    make_single();
    std::printf("%ld\n", kept_nodes[0].v[0] + single->v[0] * 0);
    return 0;
}
