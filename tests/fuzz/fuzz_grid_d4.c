/* SPDX-License-Identifier: MIT
 * grid_d4_validate against an independent reading of its rules, then grid_d4_ref and grid_d4_ref_mt on the
 * batches it accepts. Decoded from the input: n_grids (0..32), batch_op, buf_bytes (small, or any 64-bit
 * value), per grid an offset, height, width and op, one pointer set to NULL or none, and where the arrays
 * live: each in its own exact-size allocation, or all carved from one arena at chosen offsets, so that
 * aliasing arrays occur. The oracle (expected_status) computes ends in 128 bits and finds overlaps by
 * comparing every pair; status and bad index must match. An accepted batch is then transformed into a
 * poisoned out: every cell must follow the op's coordinate map from grid_d4.h, every byte outside the
 * grids must keep the poison, and both references must agree to the byte.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_bytes.h"
#include "fuzz_check.h"
#include "fuzz_d4_map.h"
#include "grid_d4_ref.h"

enum { max_grids = 32, max_real_buf = 1 << 20, arena_slots = 8, poison = 0xA5 };

typedef unsigned __int128 u128;

typedef struct batch {
    grid_d4_params p;
    const grid_d4_params *pp; /* &p, or NULL */
    uint8_t *in, *out, *ops;
    uint64_t *offset;
    uint16_t *height, *width, *out_height, *out_width;
    int real_buffers; /* in and out really hold buf_bytes each */
} batch;

typedef struct span {
    u128 start, len;
} span;

static span span_of(const void *ptr, u128 len)
{
    return (span){(u128)(uintptr_t)ptr, len};
}

static int spans_meet(span a, span b)
{
    return a.len && b.len && a.start < b.start + b.len && b.start < a.start + a.len;
}

/* The rules of grid_d4_ref.h / grid_d4.h, in their order, written out naively. */
static grid_d4_status expected_status(const batch *b, size_t *index)
{
    *index = 0;
    if (!b->pp) return GRID_D4_ERR_NULL;
    const size_t n = b->p.n_grids;
    if (n == 0) return GRID_D4_OK;
    if (!b->in || !b->out || !b->offset || !b->height || !b->width || !b->out_height || !b->out_width)
        return GRID_D4_ERR_NULL;
    if (!b->ops && (b->p.batch_op < 0 || b->p.batch_op > 7)) return GRID_D4_ERR_OP;
    const span inputs[5] = {span_of(b->in, b->p.buf_bytes), span_of(b->offset, (u128)n * 8),
                            span_of(b->height, (u128)n * 2), span_of(b->width, (u128)n * 2),
                            span_of(b->ops, b->ops ? n : 0)};
    const span outputs[3] = {span_of(b->out, b->p.buf_bytes), span_of(b->out_height, (u128)n * 2),
                             span_of(b->out_width, (u128)n * 2)};
    for (int o = 0; o < 3; o++) {
        for (int i = 0; i < 5; i++)
            if (spans_meet(outputs[o], inputs[i])) return GRID_D4_ERR_ALIAS;
        for (int o2 = o + 1; o2 < 3; o2++)
            if (spans_meet(outputs[o], outputs[o2])) return GRID_D4_ERR_ALIAS;
    }
    for (size_t k = 0; k < n; k++) {
        *index = k;
        if (b->ops && b->ops[k] > 7) return GRID_D4_ERR_OP;
        if (b->height[k] == 0 || b->width[k] == 0) return GRID_D4_ERR_EMPTY;
        if (b->height[k] > GRID_D4_MAX_DIM || b->width[k] > GRID_D4_MAX_DIM) return GRID_D4_ERR_TOO_LARGE;
        if ((u128)b->offset[k] + (u128)b->height[k] * b->width[k] > b->p.buf_bytes) return GRID_D4_ERR_BOUNDS;
    }
    *index = 0;
    /* Overlap: walk the grids in (offset, index) order; the first one that meets any grid before it, and the
     * one it meets (unique, as those before it are disjoint), give the pair; the lower index is reported. */
    size_t order[max_grids];
    for (size_t k = 0; k < n; k++) order[k] = k;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && b->offset[order[j - 1]] > b->offset[order[j]]; j--) {
            const size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (size_t i = 1; i < n; i++) {
        const size_t a = order[i];
        const span sa = {b->offset[a], (u128)b->height[a] * b->width[a]};
        for (size_t j = 0; j < i; j++) {
            const size_t c = order[j];
            const span sc = {b->offset[c], (u128)b->height[c] * b->width[c]};
            if (spans_meet(sa, sc)) {
                *index = a < c ? a : c;
                return GRID_D4_ERR_OVERLAP;
            }
        }
    }
    return GRID_D4_OK;
}

static void check_results(const batch *b)
{
    const size_t n = b->p.n_grids, bytes = (size_t)b->p.buf_bytes;
    uint8_t *covered = calloc(bytes ? bytes : 1, 1);
    FUZZ_REQUIRE(covered != NULL, "out of memory");
    for (size_t k = 0; k < n; k++) {
        const int op = b->ops ? b->ops[k] : b->p.batch_op, swap = op >= 4;
        const unsigned h = b->height[k], w = b->width[k], oh = swap ? w : h, ow = swap ? h : w;
        FUZZ_REQUIRE(b->out_height[k] == oh && b->out_width[k] == ow, "grid %zu: out shape %ux%u, expected %ux%u",
                     k, (unsigned)b->out_height[k], (unsigned)b->out_width[k], oh, ow);
        const uint8_t *src = b->in + b->offset[k];
        const uint8_t *dst = b->out + b->offset[k];
        for (unsigned i = 0; i < oh; i++)
            for (unsigned j = 0; j < ow; j++)
                FUZZ_REQUIRE(dst[(size_t)i * ow + j] == src[fuzz_d4_source_cell(op, h, w, i, j)],
                             "grid %zu (op %d, %ux%u): cell (%u,%u) is wrong", k, op, h, w, i, j);
        memset(covered + b->offset[k], 1, (size_t)h * w);
    }
    for (size_t i = 0; i < bytes; i++)
        FUZZ_REQUIRE(covered[i] || b->out[i] == poison, "out byte %zu lies outside every grid but was written", i);
    free(covered);
}

static void run_references(batch *b)
{
    const size_t n = b->p.n_grids, bytes = (size_t)b->p.buf_bytes;
    memset(b->out, poison, bytes);
    int rc = grid_d4_ref(b->pp, b->in, b->out, b->offset, b->height, b->width, b->out_height, b->out_width, b->ops);
    FUZZ_REQUIRE(rc == GRID_D4_OK, "grid_d4_ref refused a validated batch: %d", rc);
    check_results(b);
    uint8_t *first = malloc(bytes ? bytes : 1);
    FUZZ_REQUIRE(first != NULL, "out of memory");
    memcpy(first, b->out, bytes);
    memset(b->out, poison, bytes);
    memset(b->out_height, 0, n * 2);
    memset(b->out_width, 0, n * 2);
    rc = grid_d4_ref_mt(b->pp, b->in, b->out, b->offset, b->height, b->width, b->out_height, b->out_width, b->ops);
    FUZZ_REQUIRE(rc == GRID_D4_OK, "grid_d4_ref_mt refused a validated batch: %d", rc);
    FUZZ_REQUIRE(memcmp(first, b->out, bytes) == 0, "grid_d4_ref and grid_d4_ref_mt differ");
    check_results(b);
    free(first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_bytes in = {data, size};
    const unsigned control = (unsigned)fuzz_take(&in, 1);
    const int has_ops = control & 1, use_arena = (control >> 1) & 1;
    const unsigned null_choice = (unsigned)fuzz_take(&in, 1); /* 0..8 name a pointer to set NULL */
    batch b = {0};
    b.pp = &b.p;
    b.p.n_grids = fuzz_take(&in, 1) % (max_grids + 1);
    b.p.batch_op = (int8_t)fuzz_take(&in, 1);
    b.p.buf_bytes = fuzz_take(&in, 1) < 0xF0 ? fuzz_take(&in, 2) : fuzz_take(&in, 8);
    const size_t n = b.p.n_grids;

    /* The metadata, decoded before anything is placed. */
    uint64_t offset[max_grids];
    uint16_t height[max_grids], width[max_grids];
    uint8_t ops[max_grids];
    for (size_t k = 0; k < n; k++) {
        offset[k] = fuzz_take(&in, 1) < 0xF8 ? fuzz_take(&in, 2) : fuzz_take(&in, 8);
        const unsigned hb = (unsigned)fuzz_take(&in, 1), wb = (unsigned)fuzz_take(&in, 1);
        height[k] = (uint16_t)(hb == 0xFF ? fuzz_take(&in, 2) : hb);
        width[k] = (uint16_t)(wb == 0xFF ? fuzz_take(&in, 2) : wb);
        ops[k] = (uint8_t)fuzz_take(&in, 1);
    }

    /* Where the arrays live: in, out, offset, height, width, out_height, out_width, ops. */
    const size_t len[arena_slots] = {b.p.buf_bytes <= max_real_buf ? (size_t)b.p.buf_bytes : 1,
                                     b.p.buf_bytes <= max_real_buf ? (size_t)b.p.buf_bytes : 1,
                                     n * 8, n * 2, n * 2, n * 2, n * 2, n};
    void *slot[arena_slots] = {0};
    uint8_t *arena = NULL;
    void *own[arena_slots] = {0};
    if (use_arena && b.p.buf_bytes <= max_real_buf) {
        size_t at[arena_slots], total = 1;
        for (int s = 0; s < arena_slots; s++) {
            at[s] = (size_t)fuzz_take(&in, 2) & ~(size_t)7; /* aligned for uint64_t */
            if (at[s] + len[s] > total) total = at[s] + len[s];
        }
        arena = calloc(total, 1);
        FUZZ_REQUIRE(arena != NULL, "out of memory");
        for (int s = 0; s < arena_slots; s++) slot[s] = arena + at[s];
    } else {
        for (int s = 0; s < arena_slots; s++) {
            own[s] = calloc(len[s] ? len[s] : 1, 1);
            FUZZ_REQUIRE(own[s] != NULL, "out of memory");
            slot[s] = own[s];
        }
    }
    b.real_buffers = b.p.buf_bytes <= max_real_buf;
    b.in = slot[0], b.out = slot[1], b.offset = slot[2], b.height = slot[3], b.width = slot[4];
    b.out_height = slot[5], b.out_width = slot[6], b.ops = has_ops ? slot[7] : NULL;
    /* Inputs may share memory with each other: the cells first, then the metadata over them, and the oracle
     * reads everything back through the pointers, as the callee sees it. */
    for (size_t i = 0; i < len[0]; i++) b.in[i] = (uint8_t)(i * 131u + 17u);
    if (n) {
        memcpy(b.offset, offset, n * 8);
        memcpy(b.height, height, n * 2);
        memcpy(b.width, width, n * 2);
        if (b.ops) memcpy(b.ops, ops, n);
    }
    switch (null_choice) {
    case 0: b.in = NULL; break;
    case 1: b.out = NULL; break;
    case 2: b.offset = NULL; break;
    case 3: b.height = NULL; break;
    case 4: b.width = NULL; break;
    case 5: b.out_height = NULL; break;
    case 6: b.out_width = NULL; break;
    case 7: b.pp = NULL; break;
    }

    size_t want_index = 0, got_index = 99;
    const grid_d4_status want = expected_status(&b, &want_index);
    const grid_d4_status got = grid_d4_validate(b.pp, b.in, b.out, b.offset, b.height, b.width, b.out_height,
                                                b.out_width, b.ops, &got_index);
    FUZZ_REQUIRE(got == want && got_index == want_index, "grid_d4_validate: status %d index %zu, expected %d index %zu",
                 (int)got, got_index, (int)want, want_index);
    if (got == GRID_D4_OK && b.real_buffers && n > 0) run_references(&b);

    free(arena);
    for (int s = 0; s < arena_slots; s++) free(own[s]);
    return 0;
}
