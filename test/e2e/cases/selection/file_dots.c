// PIANO_FNS: dots_work,=main
// SO: ../lib/dots_lib.c
// A source reached through `..` (found on lz4 and zstd: their tests and their
// CLI compile ../lib/lz4.c from two folders): the file piano records has no
// dots, so the runs of two programs built from the two paths sum to one row
// per function. 3 calls of dots_work, from the library.
void dots_work(int i);

int main(void)
{
    for (int i = 0; i < 3; i++)
        dots_work(i);
    return 0;
}
