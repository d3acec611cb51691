/*
 * allocator.c - names an allocator the program uses that piano's malloc
 * (alloc.c) does not see, so that a report can say its allocations were not
 * seen instead of showing 0. Two ways to miss them:
 *   - another malloc wins the symbol lookup: the executable, or a library
 *     found before libpiano_rt, defines it (jemalloc, tcmalloc, mimalloc
 *     built to replace malloc);
 *   - the program calls a prefixed allocator (redis's je_malloc, mi_malloc,
 *     tc_malloc, rpmalloc) linked into the executable, where calls are bound
 *     at link time and nothing can interpose.
 * The first shows in dlsym; the second in the executable's symbol tables
 * (.symtab holds hidden and local functions too) or among exported symbols.
 * Runs once, at exit: reading the executable's symbols costs about a
 * millisecond for a large program, too much for every start.
 */
#define _GNU_SOURCE
#include "internal.h"
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Defined by alloc.c; absent where it is left out (sanitizer builds, unit
 * tests): piano then interposes no malloc to compare. */
extern const int piano_alloc_hooked __attribute__((weak, visibility("hidden")));

static const char *const prefixed[] = { "je_malloc", "mi_malloc", "tc_malloc", "rpmalloc" };
enum { N_PREFIXED = sizeof prefixed / sizeof *prefixed };

/* The index in `prefixed` of a function the symbol table defines, or -1. */
static int find_in_symtab(const unsigned char *elf, size_t size, const Elf64_Shdr *sh, const Elf64_Shdr *str)
{
    if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_offset > size || sh->sh_size > size - sh->sh_offset ||
        str->sh_offset > size || str->sh_size > size - str->sh_offset)
        return -1;
    const Elf64_Sym *sym = (const Elf64_Sym *)(elf + sh->sh_offset);
    const char *names = (const char *)elf + str->sh_offset;
    size_t n = sh->sh_size / sizeof *sym;
    /* A name's first byte rules most out: a large program (bash: 6,000
     * functions) compared each with the four names took ~0.4 ms a run. */
    unsigned char first[256] = { 0 };
    size_t len[N_PREFIXED];
    for (int k = 0; k < N_PREFIXED; k++) {
        first[(unsigned char)prefixed[k][0]] = 1;
        len[k] = strlen(prefixed[k]);
    }
    for (size_t i = 0; i < n; i++) {
        if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF ||
            sym[i].st_name >= str->sh_size || !first[(unsigned char)names[sym[i].st_name]])
            continue;
        const char *name = names + sym[i].st_name;
        size_t room = str->sh_size - sym[i].st_name;
        for (int k = 0; k < N_PREFIXED; k++)
            if (len[k] < room && memcmp(name, prefixed[k], len[k] + 1) == 0)   /* its NUL included: within the table */
                return k;
    }
    return -1;
}

/* The index of a prefixed allocator the executable defines, or -1. Every
 * offset is checked against the file's size: the file is only read. */
static int find_in_executable(void)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    int found = -1;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(Elf64_Ehdr))
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return -1;
    const unsigned char *elf = map;
    size_t size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = map;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
        eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shoff <= size &&
        (size - eh->e_shoff) / sizeof(Elf64_Shdr) >= eh->e_shnum) {
        const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
        /* .symtab holds every symbol .dynsym does: read one, the first if there */
        int has_symtab = 0;
        for (unsigned i = 0; i < eh->e_shnum; i++)
            has_symtab |= sh[i].sh_type == SHT_SYMTAB && sh[i].sh_link < eh->e_shnum;
        for (unsigned i = 0; i < eh->e_shnum && found < 0; i++)
            if (sh[i].sh_type == (has_symtab ? SHT_SYMTAB : SHT_DYNSYM) && sh[i].sh_link < eh->e_shnum)
                found = find_in_symtab(elf, size, &sh[i], &sh[sh[i].sh_link]);
    }
    munmap(map, size);
    return found;
}

void allocator_detect(char *out, size_t n)
{
    out[0] = 0;
    /* The malloc the program's lookups find, and whether it is in this library. */
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info info, own;
    if (&piano_alloc_hooked && m && dladdr(m, &info) && dladdr((void *)allocator_detect, &own) &&
        info.dli_fbase != own.dli_fbase) {
        const char *where = info.dli_fname && info.dli_fname[0] ? info.dli_fname : "";
        const char *base = strrchr(where, '/');
        snprintf(out, n, "malloc in %s", base ? base + 1 : where[0] ? where : "the program");
        return;
    }
    int k = find_in_executable();
    for (int i = 0; k < 0 && i < N_PREFIXED; i++)
        if (dlsym(RTLD_DEFAULT, prefixed[i]))
            k = i;
    if (k >= 0)
        snprintf(out, n, "%s", prefixed[k]);
}
