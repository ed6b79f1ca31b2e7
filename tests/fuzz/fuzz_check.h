/* SPDX-License-Identifier: MIT
 * FUZZ_REQUIRE: a harness's own invariant. A broken one aborts, which libFuzzer records as a crash and
 * saves the input, exactly like a sanitizer report.
 */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_REQUIRE(cond, ...)                                              \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz invariant broken (%s): ", #cond);          \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            abort();                                                         \
        }                                                                    \
    } while (0)

#endif /* FUZZ_CHECK_H */
