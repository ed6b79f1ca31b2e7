/* SPDX-License-Identifier: MIT
 * gw_tiff_read_u16 on arbitrary bytes as a file (through fuzz_memfile: the reader takes only a path, opens
 * it with gw_infile_open and hands libtiff that descriptor), with the CLI's page limit. An accepted stack has
 * 1..255 pages of a non-empty size and its pixels, and exactly as many pages as the chain of directories
 * in the bytes, walked here without libtiff: every directory, its entries and its next-page pointer inside
 * the file, the last pointer 0 (a stack that came back shorter than its file is a finding). A rejected one
 * is zeroed with a message naming the file. libtiff itself is not instrumented: ASan sees our reads and
 * writes of its buffers, not its internals.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_memfile.h"
#include "gw_tiff.h"

/* The reader allocates a compressed page at its declared size (only decoding shows whether the data is
 * there), so a small file may ask for many GB. Untouched, that costs nothing outside ASan, but ASan writes
 * the shadow of a freed block (1/8 of its size) and libFuzzer's RSS limit would count that. So this
 * harness runs on a machine where one allocation over 1 GB fails: malloc returns NULL, as it does where
 * memory is limited, and the reader's out-of-memory path is what gets fuzzed. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1:max_allocation_size_mb=1024";
}

enum { max_pages = 255 }; /* FOCUS_STACK_MAX_Z, as gpuwitness run focus-stack passes it */

static volatile uint16_t pixel_sink; /* keeps the read of every pixel */

static uint64_t get_uint(const uint8_t *b, unsigned n, int big_endian)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)b[big_endian ? n - 1 - i : i] << (8 * i);
    return v;
}

/* The pages of the chain of directories in the file, or -1 when a directory, its entries or its next-page
 * pointer lie outside the file, or the chain is longer than limit. */
static long chain_pages(const uint8_t *d, size_t size, long limit)
{
    if (size < 8) return -1;
    const int be = d[0] == 'M', big = get_uint(d + 2, 2, be) == 43;
    if (big && size < 16) return -1;
    const uint64_t count_bytes = big ? 8 : 2, entry = big ? 20 : 12, ptr = big ? 8 : 4;
    uint64_t at = big ? get_uint(d + 8, 8, be) : get_uint(d + 4, 4, be);
    long pages = 0;
    while (at != 0) {
        if (pages++ > limit || at > size || count_bytes > size - at) return -1;
        const uint64_t n = get_uint(d + at, (unsigned)count_bytes, be), room = size - at - count_bytes;
        if (n > room / entry || ptr > room - n * entry) return -1;
        at = get_uint(d + at + count_bytes + n * entry, (unsigned)ptr, be);
    }
    return pages;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    char err[512] = "";
    gw_tiff_stack s;
    if (gw_tiff_read_u16(path, max_pages, &s, err, sizeof err) == 0) {
        FUZZ_REQUIRE(s.pages >= 1 && s.pages <= max_pages && s.height >= 1 && s.width >= 1 && s.data,
                     "%d pages of %ux%u", s.pages, s.height, s.width);
        const long chain = chain_pages(data, size, max_pages);
        FUZZ_REQUIRE(chain == s.pages, "%d pages read, the chain of directories in the file holds %ld (-1: it "
                     "runs out of the file or past %d pages)", s.pages, chain, max_pages);
        /* Read every pixel: an allocation shorter than the stated shape is an ASan report. */
        const size_t count = (size_t)s.pages * s.height * s.width;
        for (size_t i = 0; i < count; i++) pixel_sink = s.data[i];
        gw_tiff_free(&s);
        return 0;
    }
    FUZZ_REQUIRE(s.pages == 0 && s.height == 0 && s.width == 0 && !s.data, "stack not zeroed on error");
    FUZZ_REQUIRE(strncmp(err, path, strlen(path)) == 0, "the message does not name the file: '%s'", err);
    return 0;
}
