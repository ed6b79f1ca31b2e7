/* SPDX-License-Identifier: MIT
 * Canary for the Valgrind gate: a test that passes while leaking. Plain Criterion cannot see the leak and
 * Valgrind's exit code from the test's child process never reaches CTest; the gate must still fail. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

static char *kept;

Test(canary_host_leak, passes_but_leaks_a_buffer)
{
    char *buf = malloc(64);
    cr_assert_not_null(buf);
    memset(buf, 1, 64);
    kept = buf + 1; /* an interior pointer, then dropped: definitely lost at exit */
    kept = NULL;
    cr_assert(buf[0] == 1);
}
