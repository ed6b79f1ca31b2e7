/* SPDX-License-Identifier: MIT
 * Canaries for the sanitizer suite (the asan preset), registered by tests/sanitizers/CMakeLists.txt in ASan builds
 * only: each test makes one fault that a plain build runs through without a word. AddressSanitizer must
 * stop the out-of-bounds read, UndefinedBehaviorSanitizer the signed overflow (the preset makes it fatal
 * with -fno-sanitize-recover=undefined). The leak canary is canary_host_leak (tests/sanitizers/CMakeLists.txt). */
#include <limits.h>
#include <stdlib.h>

#include <criterion/criterion.h>

static volatile int sink;

/* Called through a volatile pointer: the compiler cannot see the size, so UBSan's object-size check stays
 * quiet and the read is left to ASan, the guard under test. */
static void *(*volatile allocate)(size_t) = malloc;

Test(canary_sanitizer, reads_one_byte_past_a_heap_buffer)
{
    char *buf = allocate(8);
    cr_assert_not_null(buf);
    for (int i = 0; i < 8; i++) buf[i] = (char)i;
    volatile int at = 8;
    sink = buf[at];
    free(buf);
}

Test(canary_sanitizer, overflows_a_signed_int)
{
    volatile int big = INT_MAX;
    sink = big + 1;
}
