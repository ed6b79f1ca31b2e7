/* SPDX-License-Identifier: MIT
 * Decoding a fuzzer input into structured arguments: each take consumes bytes from the front and gives 0
 * once the input is used up, so every input decodes to something and short inputs mean small values.
 */
#ifndef FUZZ_BYTES_H
#define FUZZ_BYTES_H

#include <stddef.h>
#include <stdint.h>

typedef struct fuzz_bytes {
    const uint8_t *p;
    size_t left;
} fuzz_bytes;

static inline uint64_t fuzz_take(fuzz_bytes *b, int n_bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < n_bytes && b->left; i++, b->left--) v |= (uint64_t)*b->p++ << (8 * i);
    return v;
}

#endif /* FUZZ_BYTES_H */
