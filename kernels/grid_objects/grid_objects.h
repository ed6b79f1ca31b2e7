/* SPDX-License-Identifier: MIT
 * grid_objects: arc-dsl's objects(grid, univalued, diagonal, without_bg) on a batch of ragged uint8 grids:
 * the connected components of every grid, as a canonical label map, an object count and an object table.
 *
 * What it computes (exactly arc-dsl's objects; docs/grid_objects.md). Variant t in 0..7 is the ARC solvers'
 *   o_g(grid, t): univalued = t>>2 & 1, diagonal = t>>1 & 1, without_bg = t & 1.
 *     bg: with without_bg, the grid's most frequent colour (ties: bg_tie below); cells of colour bg belong
 *         to no object. Without it, every cell belongs to an object.
 *     neighbours: the 4 cells sharing an edge, or all 8 with diagonal.
 *     an object: a connected set of cells of one colour (univalued), or of cells of any non-bg colour.
 *   Ties for bg (several colours share the top count): GRID_OBJECTS_TIE_ARC_DSL (0, the default) picks what
 *   arc-dsl's mostcolor picks, the first tied colour in CPython's set order: ascending colour when 5 or more
 *   distinct colours occur; with 4 or fewer, the order of an 8-slot table that each colour, in order of first
 *   appearance (row-major), enters at slot c & 7, probing i = (5*i + 1 + (c >> 5)) & 7 and then
 *   (5*i + 1) & 7 when taken. That is CPython's order for colours 0..31 (ARC uses 0..9); above 31, with 5 or
 *   more distinct colours, it is ascending by definition. GRID_OBJECTS_TIE_SMALLEST picks the smallest.
 *
 * Layout. The input is grid_d4's: grid k has height[k] x width[k] cells (1..GRID_OBJECTS_MAX_DIM each),
 *   row-major uint8, from in + offset[k]; buf_bytes is the size of in. The outputs use the same index space:
 *     labels[offset[k] + i]   (uint16) for cell i of grid k: GRID_OBJECTS_NO_OBJECT (0xFFFF) for a bg cell,
 *                              else the row-major index of the first cell of its object (canonical: the
 *                              first cell carries its own index). Bit for bit the int16 map with -1 for
 *                              "no object" of grids up to 32768 cells; uint16 because 255 x 255 grids have
 *                              indices up to 65024.
 *     objects[offset[k] + j]  (grid_objects_object) for j < n_objects[k]: grid k's objects in order of first
 *                              cell. Sizing: a record per byte of in (padded below), the upper bound from
 *                              the cell counts (a grid has at most one object per cell), so every size is known
 *                              before the call and one pass writes everything: no count-then-fill second
 *                              launch, no scan, no scratch. Records of grid k from n_objects[k] to its cell
 *                              count are unspecified (grids above GRID_OBJECTS_STAGE_CELLS cells use them as
 *                              scratch); to pack the table, scan n_objects (cub::DeviceScan) and gather.
 *     n_objects[k], bg[k]     per grid: the object count, and the bg colour used (-1 without without_bg).
 *   Offsets need no alignment, order or contiguity; labels and objects outside all grids are never changed.
 *   No output array may overlap any other array.
 *   Padding: labels and objects each hold p->out_entries >= grid_objects_out_entries(buf_bytes) entries
 *   (buf_bytes rounded up to even) and start 4-byte aligned (cudaMalloc's are). The labelling's 16-bit
 *   atomics compile (nvcc 13.0, sm_90) to a 32-bit compare-and-swap on the aligned 4-byte word holding the
 *   entry, so with an odd buf_bytes the word of the last entry reaches 2 bytes past it. Such a CAS writes the
 *   other half of its word back as it found it: labels and records outside the grids, the pad included, may
 *   be read but are never changed.
 *
 * Stream and determinism. grid_objects_launch only enqueues work on `stream`, which must belong to the
 *   current device (a status reset, a validation pass unless GRID_OBJECTS_PREVALIDATED, the labelling); it
 *   never allocates, synchronises or reads device data on the host. Results are bit-identical to
 *   grid_objects_ref and deterministic (the labels are canonical, whatever order the unions happen in).
 * Tolerance: exact (labels of every cell, n_objects, bg, and the first n_objects[k] records of every grid).
 *
 * Errors. Arguments the host can see (NULL pointers, batch_variant out of 0..7, an unknown bg_tie or flag,
 *   overlapping arrays, out_entries too small, labels or objects not 4-byte aligned) return
 *   cudaErrorInvalidValue and enqueue nothing; grid_objects_validate
 *   (reference/grid_objects/grid_objects_ref.h) says which rule. Metadata errors are found on the device with
 *   grid_d4's rules and record (lowest offending grid index; per-grid rules before overlap; overlap checked
 *   between consecutive entries with offset[k] <= offset[k+1]) and then nothing is written. A CUDA error
 *   already pending on entry (cudaPeekAtLastError) is returned untouched before anything is enqueued;
 *   otherwise the result of the launches (cudaGetLastError) is returned.
 * Witness. d_witness (NULL: off) records one launch (the labelling) whose items are the cells labelled:
 *   sum of height*width, or 0 when the status record holds an error.
 *
 * Example (tests/grid_objects/test_grid_objects_example.c compiles and runs it; variant 3, o_g(g, 3): diagonal, without bg, several colours):
 * example-begin
 *     // host: in = {0,1,0, 1,1,0, 0,0,2}, height = 3, width = 3, offset = 0; copied to d_in, d_height, ...
 *     // d_labels and d_objects hold grid_objects_out_entries(9) = 10 entries each
 *     grid_objects_params p = {.n_grids = 1, .buf_bytes = 9, .out_entries = grid_objects_out_entries(9),
 *                              .batch_variant = 3, .bg_tie = GRID_OBJECTS_TIE_ARC_DSL, .flags = 0};
 *     cudaError_t err = grid_objects_launch(&p, d_in, d_offset, d_height, d_width, NULL, d_labels,
 *                                           d_objects, d_n_objects, d_bg, d_status, NULL, stream);
 *     // after cudaStreamSynchronize(stream): bg = 0, n_objects = 1 (1s and the 2 touch diagonally),
 *     // labels = {-1,1,-1, 1,1,-1, -1,-1,1} (0xFFFF shown as -1), objects[0] = {.first_cell = 1,
 *     // .colour = -1, .n_cells = 4, .top = 0, .left = 0, .bottom = 2, .right = 2}
 * example-end
 *
 * Build: nvcc -O3 -lineinfo -arch=sm_90 -I.. -c grid_objects.cu    (the directory above holds gw_witness.h)
 */
#ifndef GRID_OBJECTS_H
#define GRID_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#include "gw_witness.h" /* the witness record, and the CUDA runtime headers where they exist */

#ifdef __cplusplus
extern "C" {
#endif

#define GRID_OBJECTS_MAX_DIM 255          /* the largest height or width */
#define GRID_OBJECTS_STAGE_CELLS 1024     /* grids up to this many cells are labelled in shared memory */
#define GRID_OBJECTS_PREVALIDATED 1u      /* flags: metadata passed grid_objects_validate, skip the device check */
#define GRID_OBJECTS_NO_OBJECT 0xFFFFu    /* the label of a cell in no object (int16 -1) */
#define GRID_OBJECTS_SEVERAL_COLOURS (-1) /* an object's colour when its cells have several */

/* Variant bits, o_g numbering. */
#define GRID_OBJECTS_WITHOUT_BG 1
#define GRID_OBJECTS_DIAGONAL 2
#define GRID_OBJECTS_UNIVALUED 4

/* How a tie for the most frequent colour is broken. */
typedef enum grid_objects_bg_tie {
    GRID_OBJECTS_TIE_ARC_DSL = 0, /* arc-dsl's mostcolor: CPython's set order (above) */
    GRID_OBJECTS_TIE_SMALLEST = 1 /* the smallest tied colour */
} grid_objects_bg_tie;

/* The rules a batch can break, in the order they are checked; grid_objects_status_str says each in words.
 * Codes 1..7 are grid_d4's (variant in place of op). */
typedef enum grid_objects_status {
    GRID_OBJECTS_OK = 0,
    GRID_OBJECTS_ERR_NULL = 1,      /* a required pointer is NULL */
    GRID_OBJECTS_ERR_VARIANT = 2,   /* a variant outside 0..7 */
    GRID_OBJECTS_ERR_ALIAS = 3,     /* arrays overlap */
    GRID_OBJECTS_ERR_EMPTY = 4,     /* a grid with height or width 0 */
    GRID_OBJECTS_ERR_TOO_LARGE = 5, /* a grid with height or width above GRID_OBJECTS_MAX_DIM */
    GRID_OBJECTS_ERR_BOUNDS = 6,    /* a grid past buf_bytes */
    GRID_OBJECTS_ERR_OVERLAP = 7,   /* two grids share bytes */
    GRID_OBJECTS_ERR_BG_TIE = 8,    /* bg_tie is not a grid_objects_bg_tie; checked with batch_variant */
    GRID_OBJECTS_ERR_FLAGS = 9,     /* flags holds a bit other than GRID_OBJECTS_PREVALIDATED */
    GRID_OBJECTS_ERR_PADDING = 10   /* out_entries too small, or labels or objects not 4-byte aligned */
} grid_objects_status;

/* One call's batch. */
typedef struct grid_objects_params {
    size_t n_grids;       /* 0 enqueues nothing and returns success */
    uint64_t buf_bytes;   /* bytes of in */
    uint64_t out_entries; /* entries labels and objects each hold: at least grid_objects_out_entries(buf_bytes) */
    int batch_variant;    /* variant of every grid when variants is NULL */
    int bg_tie;           /* a grid_objects_bg_tie */
    uint32_t flags;       /* 0 or GRID_OBJECTS_PREVALIDATED */
} grid_objects_params;

/* The entries labels and objects must each hold for buf_bytes cells: buf_bytes rounded up to even, so that
 * with 4-byte aligned arrays every 4-byte word a 16-bit atomic touches lies inside them (Layout, above).
 * Saturates at UINT64_MAX, which no array holds. */
static inline uint64_t grid_objects_out_entries(uint64_t buf_bytes)
{
    return buf_bytes < UINT64_MAX ? (buf_bytes + 1u) & ~(uint64_t)1u : UINT64_MAX;
}

/* One object. 14 bytes, 2-byte aligned. */
typedef struct grid_objects_object {
    uint16_t first_cell; /* row-major index of its first cell: the label of its cells */
    int16_t colour;      /* its cells' colour, or GRID_OBJECTS_SEVERAL_COLOURS */
    uint16_t n_cells;    /* 1..65025 */
    uint16_t top, left, bottom, right; /* bounding box: rows top..bottom, columns left..right, inclusive */
} grid_objects_object;

/* Device status record, grid_d4's: all-ones = no error; otherwise (index << 8 | code), lowest index wins,
 * and a per-grid error wins over an overlap (bit 63 marks overlap). The launcher resets it. */
typedef struct grid_objects_status_record {
    unsigned long long packed;
} grid_objects_status_record;

#define GRID_OBJECTS_STATUS_NONE 0xFFFFFFFFFFFFFFFFull /* the record's value when no grid broke a rule */
#define GRID_OBJECTS_STATUS_OVERLAP_BIT (1ull << 63)   /* set in the record for GRID_OBJECTS_ERR_OVERLAP */

/* The code a status record holds (GRID_OBJECTS_OK when none). */
static inline grid_objects_status grid_objects_status_record_code(const grid_objects_status_record *r)
{
    return r->packed == GRID_OBJECTS_STATUS_NONE ? GRID_OBJECTS_OK : (grid_objects_status)(r->packed & 0xFFu);
}

/* The grid index a status record holds (0 when none). */
static inline size_t grid_objects_status_record_index(const grid_objects_status_record *r)
{
    return r->packed == GRID_OBJECTS_STATUS_NONE ? 0
                                                 : (size_t)((r->packed & ~GRID_OBJECTS_STATUS_OVERLAP_BIT) >> 8);
}

/* A status in words, naming the argument and the rule. */
static inline const char *grid_objects_status_str(grid_objects_status s)
{
    switch (s) {
    case GRID_OBJECTS_OK: return "ok";
    case GRID_OBJECTS_ERR_NULL: return "a required pointer is NULL: p, and while n_grids > 0 also in, offset, height, width, labels, objects, n_objects, bg, status (only variants may be NULL)";
    case GRID_OBJECTS_ERR_VARIANT: return "variant out of range: batch_variant (when variants is NULL) and every variants[k] must be 0..7";
    case GRID_OBJECTS_ERR_ALIAS: return "buffers overlap: no output array (labels, objects, n_objects, bg, status) may overlap another array";
    case GRID_OBJECTS_ERR_EMPTY: return "empty grid: height[k] and width[k] must be at least 1";
    case GRID_OBJECTS_ERR_TOO_LARGE: return "grid too large: height[k] and width[k] must be at most GRID_OBJECTS_MAX_DIM (255)";
    case GRID_OBJECTS_ERR_BOUNDS: return "grid out of bounds: offset[k] + height[k]*width[k] must not exceed buf_bytes";
    case GRID_OBJECTS_ERR_OVERLAP: return "grids overlap: the byte ranges of two grids intersect";
    case GRID_OBJECTS_ERR_BG_TIE: return "unknown bg_tie: must be GRID_OBJECTS_TIE_ARC_DSL (0) or GRID_OBJECTS_TIE_SMALLEST (1)";
    case GRID_OBJECTS_ERR_FLAGS: return "unknown flags: only GRID_OBJECTS_PREVALIDATED (1) may be set";
    case GRID_OBJECTS_ERR_PADDING: return "outputs unpadded: out_entries must be at least grid_objects_out_entries(buf_bytes) (buf_bytes rounded up to even) and labels and objects 4-byte aligned, as the 16-bit atomics work on whole 4-byte words";
    }
    return "unknown grid_objects status";
}

#ifdef GW_HAVE_CUDA_RUNTIME
/* Enqueues the batch p on stream: all device pointers; d_variants and d_witness may be NULL.
 * cudaErrorInvalidValue for what the host can see (grid_objects_validate says which rule), a pending error as
 * it was, else the launches'. */
cudaError_t grid_objects_launch(const grid_objects_params *p, const uint8_t *d_in, const uint64_t *d_offset,
                                const uint16_t *d_height, const uint16_t *d_width, const uint8_t *d_variants,
                                uint16_t *d_labels, grid_objects_object *d_objects, uint32_t *d_n_objects,
                                int16_t *d_bg, grid_objects_status_record *d_status, gw_witness *d_witness,
                                cudaStream_t stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GRID_OBJECTS_H */
