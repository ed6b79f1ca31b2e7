/* SPDX-License-Identifier: MIT
 * grid_d4: the eight symmetries of the square (dihedral group D4) on a batch of ragged uint8 grids.
 *
 * What it computes (exactly arc-dsl's rot90, rot180, rot270, hmirror, vmirror, dmirror, cmirror, plus
 * identity). Op code = 4*swap + 2*fr + fc. For an H x W input, (r,c) = swap ? (j,i) : (i,j), then
 *     out[i][j] = in[fr ? H-1-r : r][fc ? W-1-c : c]        out is W x H for swap ops, H x W otherwise.
 *     0 identity   1 vmirror (left-right)   2 hmirror (upside down)   3 rot180
 *     4 dmirror (transpose)   5 rot270 (anticlockwise)   6 rot90 (clockwise)   7 cmirror (anti-transpose)
 *   numpy/cupy/torch rot90(k=1) turn anticlockwise: that is rot270 here.
 *
 * Layout. in and out are buf_bytes each. Grid k has height[k] x width[k] cells (1..GRID_D4_MAX_DIM),
 *   row-major, from byte offset[k]; its result goes to out + offset[k] with shape out_height[k] x
 *   out_width[k]. Offsets need no alignment, order or contiguity; bytes of out outside all grids are
 *   never written. in/out must not overlap, and no output array may overlap any other array.
 *
 * Stream and determinism. grid_d4_launch only enqueues work on `stream`, which must belong to the current
 *   device (a status reset, a validation pass unless GRID_D4_PREVALIDATED, the transform); it never
 *   allocates, synchronises or reads device data on the host. Results are bit-identical to grid_d4_ref and
 *   deterministic.
 * Tolerance: exact (memcmp of out, gaps included, and of both shape arrays).
 *
 * Errors. Arguments the host can see (NULL pointers, batch_op out of 0..7, unknown flags, overlapping
 *   arrays) return cudaErrorInvalidValue and enqueue nothing; grid_d4_validate() says which rule.
 *   Metadata errors are found on the device: the status record gets the code and the lowest offending
 *   grid index (per-grid rules before overlap; overlap checked between consecutive entries with
 *   offset[k] <= offset[k+1]) and then nothing is written. Read it after your own synchronisation. A CUDA
 *   error already pending on entry (cudaPeekAtLastError) is returned untouched before anything is enqueued;
 *   otherwise the result of the launches (cudaGetLastError) is returned.
 * Witness. d_witness (NULL: off) records one launch (the transform) whose items are the cells written:
 *   sum of height*width, or 0 when the status record holds an error.
 *
 * Example (tests/grid_d4/test_grid_d4_example.c compiles and runs it; a 2x3 grid turned clockwise):
 * example-begin
 *     // host: in = {1,2,3, 4,5,6}, height = 2, width = 3, offset = 0; copied to d_in, d_height, ...
 *     grid_d4_params p = {.n_grids = 1, .buf_bytes = 6, .batch_op = GRID_D4_ROT90, .flags = 0};
 *     cudaError_t err = grid_d4_launch(&p, d_in, d_out, d_offset, d_height, d_width,
 *                                      d_out_height, d_out_width, NULL, d_status, NULL, stream);
 *     // after cudaStreamSynchronize(stream): out = {4,1, 5,2, 6,3}, out_height = 3, out_width = 2,
 *     // grid_d4_status_record_code(&status) == GRID_D4_OK
 * example-end
 *
 * Build: nvcc -O3 -lineinfo -arch=sm_90 -I.. -c grid_d4.cu    (the directory above holds gw_witness.h)
 */
#ifndef GRID_D4_H
#define GRID_D4_H

#include <stddef.h>
#include <stdint.h>

#include "gw_witness.h" /* the witness record, and the CUDA runtime headers where they exist */

#ifdef __cplusplus
extern "C" {
#endif

#define GRID_D4_MAX_DIM 255     /* the largest height or width */
#define GRID_D4_PREVALIDATED 1u /* flags: metadata passed grid_d4_validate, skip the device check */

/* The eight ops, numbered 4*swap + 2*fr + fc (the table above). */
typedef enum grid_d4_op {
    GRID_D4_IDENTITY = 0,
    GRID_D4_VMIRROR = 1,
    GRID_D4_HMIRROR = 2,
    GRID_D4_ROT180 = 3,
    GRID_D4_DMIRROR = 4,
    GRID_D4_ROT270 = 5,
    GRID_D4_ROT90 = 6,
    GRID_D4_CMIRROR = 7
} grid_d4_op;

/* The rules a batch can break, in the order they are checked; grid_d4_status_str says each in words. */
typedef enum grid_d4_status {
    GRID_D4_OK = 0,
    GRID_D4_ERR_NULL = 1,      /* a required pointer is NULL */
    GRID_D4_ERR_OP = 2,        /* an op outside 0..7 */
    GRID_D4_ERR_ALIAS = 3,     /* arrays overlap */
    GRID_D4_ERR_EMPTY = 4,     /* a grid with height or width 0 */
    GRID_D4_ERR_TOO_LARGE = 5, /* a grid with height or width above GRID_D4_MAX_DIM */
    GRID_D4_ERR_BOUNDS = 6,    /* a grid past buf_bytes */
    GRID_D4_ERR_OVERLAP = 7    /* two grids share bytes */
} grid_d4_status;

/* One call's batch: how many grids, the buffers' size, the op when there is no per-grid ops array. */
typedef struct grid_d4_params {
    size_t n_grids;     /* 0 enqueues nothing and returns success */
    uint64_t buf_bytes; /* size of each cell buffer, in and out */
    int batch_op;       /* op for every grid when ops is NULL */
    uint32_t flags;     /* 0 or GRID_D4_PREVALIDATED */
} grid_d4_params;

/* Device status record: all-ones = no error; otherwise (index << 8 | code), lowest index wins, and a
 * per-grid error wins over an overlap (bit 63 marks overlap). The launcher resets it. */
typedef struct grid_d4_status_record {
    unsigned long long packed;
} grid_d4_status_record;

#define GRID_D4_STATUS_NONE 0xFFFFFFFFFFFFFFFFull /* the record's value when no grid broke a rule */
#define GRID_D4_STATUS_OVERLAP_BIT (1ull << 63)   /* set in the record for GRID_D4_ERR_OVERLAP */

/* The code a status record holds (GRID_D4_OK when none). */
static inline grid_d4_status grid_d4_status_record_code(const grid_d4_status_record *r)
{
    return r->packed == GRID_D4_STATUS_NONE ? GRID_D4_OK : (grid_d4_status)(r->packed & 0xFFu);
}

/* The grid index a status record holds (0 when none). */
static inline size_t grid_d4_status_record_index(const grid_d4_status_record *r)
{
    return r->packed == GRID_D4_STATUS_NONE ? 0 : (size_t)((r->packed & ~GRID_D4_STATUS_OVERLAP_BIT) >> 8);
}

/* arc-dsl's name of an op ("rot90"), or "invalid". */
static inline const char *grid_d4_op_name(int op)
{
    static const char *const names[8] = {"identity", "vmirror", "hmirror", "rot180",
                                         "dmirror",  "rot270",  "rot90",   "cmirror"};
    return op >= 0 && op < 8 ? names[op] : "invalid";
}

/* A status in words, naming the argument and the rule. */
static inline const char *grid_d4_status_str(grid_d4_status s)
{
    switch (s) {
    case GRID_D4_OK: return "ok";
    case GRID_D4_ERR_NULL: return "a required pointer is NULL: p, and while n_grids > 0 also in, out, offset, height, width, out_height, out_width, status (only ops may be NULL)";
    case GRID_D4_ERR_OP: return "op out of range: batch_op (when ops is NULL) and every ops[k] must be 0..7";
    case GRID_D4_ERR_ALIAS: return "buffers overlap: in and out must be disjoint and no output array may overlap another array";
    case GRID_D4_ERR_EMPTY: return "empty grid: height[k] and width[k] must be at least 1";
    case GRID_D4_ERR_TOO_LARGE: return "grid too large: height[k] and width[k] must be at most GRID_D4_MAX_DIM (255)";
    case GRID_D4_ERR_BOUNDS: return "grid out of bounds: offset[k] + height[k]*width[k] must not exceed buf_bytes";
    case GRID_D4_ERR_OVERLAP: return "grids overlap: the byte ranges of two grids intersect";
    }
    return "unknown grid_d4 status";
}

#ifdef GW_HAVE_CUDA_RUNTIME
/* Enqueues the batch p on stream: all device pointers; d_ops and d_witness may be NULL. cudaErrorInvalidValue
 * for what the host can see (grid_d4_validate says which rule), a pending error as it was, else the launches'. */
cudaError_t grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out, const uint64_t *d_offset,
                           const uint16_t *d_height, const uint16_t *d_width, uint16_t *d_out_height,
                           uint16_t *d_out_width, const uint8_t *d_ops, grid_d4_status_record *d_status,
                           gw_witness *d_witness, cudaStream_t stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GRID_D4_H */
