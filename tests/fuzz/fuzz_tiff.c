/* SPDX-License-Identifier: MIT
 * gw_tiff_read_u16 on arbitrary bytes as a file (through fuzz_memfile: the reader takes only a path, and
 * libtiff reads through its own file client), with the CLI's page limit. An accepted stack has 1..255
 * pages of a non-empty size and its pixels; a rejected one is zeroed with a message naming the file.
 * libtiff itself is not instrumented: ASan sees our reads and writes of its buffers, not its internals.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    char err[512] = "";
    gw_tiff_stack s;
    if (gw_tiff_read_u16(path, max_pages, &s, err, sizeof err) == 0) {
        FUZZ_REQUIRE(s.pages >= 1 && s.pages <= max_pages && s.height >= 1 && s.width >= 1 && s.data,
                     "%d pages of %ux%u", s.pages, s.height, s.width);
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
