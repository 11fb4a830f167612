#include "secmem.h"

#include <openssl/crypto.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t secmem_span(size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (len + page - 1) / page * page;
}

void *secmem_alloc(size_t len)
{
    size_t span = secmem_span(len);
    void *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (mlock(p, span) < 0 || madvise(p, span, MADV_DONTDUMP) < 0) {
        munmap(p, span);
        return NULL;
    }
    return p;
}

void secmem_free(void *p, size_t len)
{
    if (!p)
        return;
    size_t span = secmem_span(len);
    OPENSSL_cleanse(p, span);
    munlock(p, span);
    munmap(p, span);
}
