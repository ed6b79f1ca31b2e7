/* SPDX-License-Identifier: MIT
 * The fuzz harnesses' own oracle of the D4 ops: the source cell of output (i, j) for an h x w input, spelled
 * out per op as grid_d4.h's table describes it (independent of the reference's index arithmetic).
 */
#ifndef FUZZ_D4_MAP_H
#define FUZZ_D4_MAP_H

#include <stddef.h>

#include "grid_d4.h"

static inline size_t fuzz_d4_source_cell(int op, unsigned h, unsigned w, unsigned i, unsigned j)
{
    unsigned r = 0, c = 0;
    switch (op) {
    case GRID_D4_IDENTITY: r = i, c = j; break;
    case GRID_D4_VMIRROR: r = i, c = w - 1 - j; break;
    case GRID_D4_HMIRROR: r = h - 1 - i, c = j; break;
    case GRID_D4_ROT180: r = h - 1 - i, c = w - 1 - j; break;
    case GRID_D4_DMIRROR: r = j, c = i; break;
    case GRID_D4_ROT270: r = j, c = w - 1 - i; break;
    case GRID_D4_ROT90: r = h - 1 - j, c = i; break;
    case GRID_D4_CMIRROR: r = h - 1 - j, c = w - 1 - i; break;
    }
    return (size_t)r * w + c;
}

#endif /* FUZZ_D4_MAP_H */
