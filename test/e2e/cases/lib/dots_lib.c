/* The library of the case selection/file_dots: compiled as ../lib/dots_lib.c from
 * the case's folder, and as .../cases/lib/dots_lib.c by its check. */
static volatile unsigned dots_sink;

__attribute__((noinline)) void dots_work(int i)
{
    dots_sink += (unsigned)i;
}
