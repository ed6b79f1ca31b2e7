/* SPDX-License-Identifier: MIT
 * The fuzz runs' canary (fuzz_canary, label canary): a planted out-of-bounds read behind the input "FUZZ",
 * compared byte by byte so only coverage feedback leads libFuzzer there (the seed is "AAAA"). The test
 * passes only when the run fails through ASan's report, which shows that fuzzing finds new paths, that
 * a crash fails the test (libFuzzer's default crash exit code is 77, CTest's skip) and that the harnesses
 * are built with ASan.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static volatile uint8_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 4 && data[0] == 'F' && data[1] == 'U' && data[2] == 'Z' && data[3] == 'Z') {
        uint8_t *buf = malloc(4);
        if (!buf) return 0;
        volatile size_t at = 4;
        buf[0] = 0;
        sink = buf[at];
        free(buf);
    }
    return 0;
}
