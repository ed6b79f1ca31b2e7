/* SPDX-License-Identifier: MIT
 * grid_objects: arc-dsl's objects on a batch of ragged uint8 grids. Contract: grid_objects.h.
 *
 * Work split. One block per grid, grid-stride over grids. A grid of up to GRID_OBJECTS_STAGE_CELLS cells (every
 * ARC grid: 30 x 30 = 900) is labelled in shared memory; a larger one (up to 255 x 255) works in place in its
 * own output: the label map is its union-find forest and its part of the object table (one record per cell
 * is reserved) holds the per-object sums. Both go through the same code, on a generic pointer.
 *
 * Algorithm (label equivalence with a lock-free union-find, as in Playne & Hawick 2018):
 *   1. bg: a 256-bin histogram with each colour's first cell; warp 0 applies the tie rule.
 *   2. every non-bg cell starts as its own root: label[i] = i.
 *   3. every cell merges with its connected neighbours to the right and below (and both lower diagonals):
 *      the larger of the two roots is linked below the smaller with an atomic minimum, retried until both
 *      have one root. Links only ever point to smaller indices, so there are no cycles, and the root of an
 *      object ends as its smallest index: its first cell in row-major order, the canonical label, whatever
 *      order the unions ran in (so the result is deterministic). One pass converges: a merge finishes
 *      before its thread moves on, so there are no "many union passes" to repeat, whatever the shape (a
 *      spiral costs long find() walks instead, bounded by the cells of the object).
 *   4. every cell's label becomes its root, a chunk of cells at a time (all walks, a barrier, all stores).
 *   5. per object, at its root: cell count, bounding box, one colour or several (16-bit atomics).
 *   6. roots, in row-major order, get their record's index from a block-wide scan (cub::BlockScan), and the
 *      records move there in chunks of one thread per cell (a record only moves down, so reading a chunk
 *      before writing it is enough when the sums live in the output itself).
 * 16-bit atomicCAS needs sm_70 or newer, and is not a 16-bit access: the SASS clears bit 1 of the address,
 * loads the 4-byte word, splices the new half in and does a 32-bit CAS on the word (CCCL's atomic_ref on
 * 8- and 16-bit types does the same; memcheck reports a word past an allocation's end, NVIDIA/cccl issue
 * 6430). Hence the contract's padding (grid_objects.h, "Padding"): labels and objects start 4-byte aligned
 * and end on a 4-byte boundary, and so do the shared arrays below.
 *
 * Safety. Every access stays inside its grid's own cells, labels and records; the labelling re-checks each
 * grid's metadata, so metadata flagged GRID_OBJECTS_PREVALIDATED that is wrong cannot make it touch memory
 * outside [0, buf_bytes) of any array. Grids that overlap (flagged as validated, or in an order the device
 * check cannot see) share their labels: every step follows only links to smaller indices and skips any label
 * above its cell, so the results are garbage but every walk ends and stays inside the grid.
 */
#include "grid_objects.h"

#include <stdint.h>

#include <cub/block/block_scan.cuh>

enum {
    LABEL_THREADS = 128,
    LABEL_BLOCKS_PER_SM = 8,
    VALIDATE_THREADS = 256,
    VALIDATE_BLOCKS_PER_SM = 4,
    COLOURS = 256,
};

typedef cub::BlockScan<unsigned, LABEL_THREADS> root_scan;

/* The per-grid rules of grid_objects.h, in order (grid_d4's, variant in place of op). 0 when well formed. */
static __device__ __forceinline__ unsigned grid_error(uint64_t offset, unsigned height, unsigned width,
                                                      unsigned variant, uint64_t buf_bytes)
{
    if (variant > 7u) return GRID_OBJECTS_ERR_VARIANT;
    if (height == 0u || width == 0u) return GRID_OBJECTS_ERR_EMPTY;
    if (height > GRID_OBJECTS_MAX_DIM || width > GRID_OBJECTS_MAX_DIM) return GRID_OBJECTS_ERR_TOO_LARGE;
    /* written so that nothing overflows: offset may be any 64-bit value */
    if (offset > buf_bytes || (uint64_t)height * width > buf_bytes - offset) return GRID_OBJECTS_ERR_BOUNDS;
    return 0u;
}

/* One thread per grid. The record keeps the lowest (index << 8 | code); per-grid errors carry bit 63 clear
 * and so win over overlaps, matching grid_objects_validate, which checks overlap last. */
__global__ void __launch_bounds__(VALIDATE_THREADS)
    grid_objects_validate_kernel(size_t n_grids, uint64_t buf_bytes, int batch_variant,
                                 const uint64_t *__restrict__ offset, const uint16_t *__restrict__ height,
                                 const uint16_t *__restrict__ width, const uint8_t *__restrict__ variants,
                                 grid_objects_status_record *__restrict__ status)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < n_grids; k += stride) {
        const uint64_t off = offset[k];
        const unsigned h = height[k], w = width[k];
        const unsigned code = grid_error(off, h, w, variants ? variants[k] : (unsigned)batch_variant, buf_bytes);
        unsigned long long packed;
        if (code) {
            packed = ((unsigned long long)k << 8) | code;
        } else if (k + 1 < n_grids && offset[k + 1] >= off && offset[k + 1] - off < (uint64_t)h * w) {
            /* only consecutive ascending entries: the full check needs a sort, grid_objects_validate does it */
            packed = GRID_OBJECTS_STATUS_OVERLAP_BIT | ((unsigned long long)k << 8) | GRID_OBJECTS_ERR_OVERLAP;
        } else {
            continue;
        }
        atomicMin(&status->packed, packed);
    }
}

/* 16-bit atomics on shared or global memory, built on atomicCAS; each returns the value it replaced. */
static __device__ __forceinline__ unsigned atomic_min_u16(uint16_t *address, unsigned value)
{
    unsigned short *a = (unsigned short *)address;
    unsigned short old = *(volatile unsigned short *)a, assumed;
    do {
        assumed = old;
        if (assumed <= value) break;
        old = atomicCAS(a, assumed, (unsigned short)value);
    } while (old != assumed);
    return old;
}

static __device__ __forceinline__ void atomic_max_u16(uint16_t *address, unsigned value)
{
    unsigned short *a = (unsigned short *)address;
    unsigned short old = *(volatile unsigned short *)a, assumed;
    do {
        assumed = old;
        if (assumed >= value) break;
        old = atomicCAS(a, assumed, (unsigned short)value);
    } while (old != assumed);
}

static __device__ __forceinline__ void atomic_add_u16(uint16_t *address, unsigned value)
{
    unsigned short *a = (unsigned short *)address;
    unsigned short old = *(volatile unsigned short *)a, assumed;
    do {
        assumed = old;
        old = atomicCAS(a, assumed, (unsigned short)(assumed + value));
    } while (old != assumed);
}

/* The root of i: follow the links (each to a smaller index) until a cell is its own label. Volatile:
 * other threads lower the links while this one walks. Only links down are followed, so even labels garbled
 * by grids that overlap (metadata wrongly flagged GRID_OBJECTS_PREVALIDATED, or an overlap the device check
 * cannot see) keep every walk inside the grid and finite. */
static __device__ __forceinline__ unsigned find_root(const uint16_t *label, unsigned i)
{
    const volatile uint16_t *l = label;
    unsigned parent = l[i];
    while (parent < i) {
        i = parent;
        parent = l[i];
    }
    return i;
}

/* Puts a and b under one root: the larger root is linked below the smaller. When the link finds that its
 * root was linked elsewhere meanwhile (old != root), that other parent is merged next. */
static __device__ void merge(uint16_t *label, unsigned a, unsigned b)
{
    for (;;) {
        a = find_root(label, a);
        b = find_root(label, b);
        if (a == b) return;
        if (a > b) {
            const unsigned t = a;
            a = b;
            b = t;
        }
        const unsigned old = atomic_min_u16(&label[b], a);
        if (old >= b) return; /* b was a root (or, garbled, above it): linked */
        b = old;
    }
}

/* Merges non-bg cell i with its neighbour j when the variant connects them. */
static __device__ __forceinline__ void connect(uint16_t *label, const uint8_t *colour, unsigned i, unsigned j, int bg,
                                               bool univalued)
{
    if ((int)colour[j] == bg || (univalued && colour[j] != colour[i])) return;
    merge(label, i, j);
}

/* arc-dsl's mostcolor tie among at most 4 colours: the first of the tied colours in the slot order of
 * CPython's 8-slot set table, the colours entering in order of first appearance (grid_objects.h). */
static __device__ unsigned cpython_set_first(const unsigned *count, const unsigned *first, unsigned top_count)
{
    unsigned colours[4], n = 0;
    for (unsigned c = 0; c < COLOURS; c++)
        if (count[c] && n < 4u) colours[n++] = c;
    for (unsigned a = 1; a < n; a++) /* insertion sort by first appearance */
        for (unsigned b = a; b > 0 && first[colours[b]] < first[colours[b - 1]]; b--) {
            const unsigned t = colours[b];
            colours[b] = colours[b - 1];
            colours[b - 1] = t;
        }
    int slot[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    for (unsigned a = 0; a < n; a++) {
        const unsigned c = colours[a];
        unsigned i = c & 7u, perturb = c;
        while (slot[i] >= 0) {
            perturb >>= 5;
            i = (i * 5u + 1u + perturb) & 7u;
        }
        slot[i] = (int)c;
    }
    for (unsigned i = 0; i < 8u; i++)
        if (slot[i] >= 0 && count[slot[i]] == top_count) return (unsigned)slot[i];
    return 0u; /* unreachable: the top colour is in the table */
}

static __device__ __forceinline__ unsigned warp_max(unsigned v)
{
    for (unsigned o = 16; o; o >>= 1) v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    return v;
}

static __device__ __forceinline__ unsigned warp_min(unsigned v)
{
    for (unsigned o = 16; o; o >>= 1) v = min(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    return v;
}

static __device__ __forceinline__ unsigned warp_sum(unsigned v)
{
    for (unsigned o = 16; o; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

/* The grid's bg colour under bg_tie, by the whole block; returned to every thread. */
static __device__ int background(const uint8_t *colour, unsigned n, int bg_tie, unsigned *count, unsigned *first,
                                 int *bg_shared)
{
    for (unsigned c = threadIdx.x; c < COLOURS; c += LABEL_THREADS) count[c] = 0u, first[c] = 0xFFFFFFFFu;
    __syncthreads();
    for (unsigned i = threadIdx.x; i < n; i += LABEL_THREADS) {
        atomicAdd(&count[colour[i]], 1u);
        atomicMin(&first[colour[i]], i);
    }
    __syncthreads();
    if (threadIdx.x < 32u) {
        const unsigned lane = threadIdx.x;
        unsigned top = 0;
        for (unsigned c = lane; c < COLOURS; c += 32u) top = max(top, count[c]);
        top = warp_max(top);
        unsigned distinct = 0, tied = 0, smallest_tied = COLOURS;
        for (unsigned c = lane; c < COLOURS; c += 32u) {
            distinct += count[c] != 0u;
            if (count[c] == top) tied++, smallest_tied = min(smallest_tied, c);
        }
        distinct = warp_sum(distinct);
        tied = warp_sum(tied);
        smallest_tied = warp_min(smallest_tied);
        if (lane == 0) {
            /* CPython's set order is ascending for 5 or more small colours: the smallest tied one */
            const bool smallest = tied == 1u || bg_tie == GRID_OBJECTS_TIE_SMALLEST || distinct >= 5u;
            *bg_shared = (int)(smallest ? smallest_tied : cpython_set_first(count, first, top));
        }
    }
    __syncthreads();
    const int bg = *bg_shared;
    __syncthreads(); /* the next grid may overwrite bg_shared */
    return bg;
}

/* Labels one grid of height x width cells (n = height * width) by the whole block. colour, label and acc
 * (one record per cell, indexed by root) are shared memory or the grid's own output; out is where its
 * records go. Returns the object count to every thread. */
static __device__ unsigned label_grid(const uint8_t *colour, uint16_t *label, grid_objects_object *acc,
                                      grid_objects_object *out, unsigned height, unsigned width, int variant, int bg,
                                      root_scan::TempStorage &scan_storage)
{
    const unsigned n = height * width;
    const bool univalued = variant & GRID_OBJECTS_UNIVALUED, diagonal = variant & GRID_OBJECTS_DIAGONAL;

    for (unsigned i = threadIdx.x; i < n; i += LABEL_THREADS)
        label[i] = (int)colour[i] == bg ? (uint16_t)GRID_OBJECTS_NO_OBJECT : (uint16_t)i;
    __syncthreads();

    /* Each connected pair once: from its upper (or, in one row, its left) cell. */
    for (unsigned i = threadIdx.x; i < n; i += LABEL_THREADS) {
        if ((int)colour[i] == bg) continue;
        const unsigned r = i / width, c = i - r * width;
        if (c + 1 < width) connect(label, colour, i, i + 1, bg, univalued);
        if (r + 1 < height) {
            connect(label, colour, i, i + width, bg, univalued);
            if (diagonal && c + 1 < width) connect(label, colour, i, i + width + 1, bg, univalued);
            if (diagonal && c > 0) connect(label, colour, i, i + width - 1, bg, univalued);
        }
    }
    __syncthreads();

    /* Every label becomes its root, a chunk at a time: all of a chunk's walks end before any of its
     * labels change, so no thread reads a label another is writing (compute-sanitizer's racecheck). */
    for (unsigned base = 0; base < n; base += LABEL_THREADS) {
        const unsigned i = base + threadIdx.x;
        const bool mine = i < n && (int)colour[i] != bg;
        const unsigned root = mine ? find_root(label, i) : 0u;
        __syncthreads();
        if (mine) label[i] = (uint16_t)root;
        __syncthreads();
    }

    /* The record of each object, at its root: the root is its first cell, so its row is the top row. */
    for (unsigned i = threadIdx.x; i < n; i += LABEL_THREADS) {
        if (label[i] != i) continue;
        const unsigned r = i / width, c = i - r * width;
        grid_objects_object rec;
        rec.first_cell = (uint16_t)i;
        rec.colour = (int16_t)colour[i];
        rec.n_cells = 0;
        rec.top = rec.bottom = (uint16_t)r;
        rec.left = rec.right = (uint16_t)c;
        acc[i] = rec;
    }
    __syncthreads();
    for (unsigned i = threadIdx.x; i < n; i += LABEL_THREADS) {
        const unsigned root = label[i];
        if (root > i) continue; /* bg (GRID_OBJECTS_NO_OBJECT), or a label garbled by overlapping grids */
        const unsigned r = i / width, c = i - r * width;
        grid_objects_object *rec = &acc[root];
        atomic_add_u16(&rec->n_cells, 1u);
        atomic_max_u16(&rec->bottom, r);
        atomic_min_u16(&rec->left, c);
        atomic_max_u16(&rec->right, c);
        if (colour[i] != colour[root]) /* -1: an atomic store, as several threads may make it at once */
            atomic_max_u16((uint16_t *)&rec->colour, (uint16_t)GRID_OBJECTS_SEVERAL_COLOURS);
    }
    __syncthreads();

    /* Records in order of first cell. A root's record goes to index (roots before it) <= its own index, so
     * when acc is out itself a chunk's destinations never reach a later chunk, and every record of this
     * chunk is read before any is written. */
    unsigned n_objects = 0;
    for (unsigned base = 0; base < n; base += LABEL_THREADS) {
        const unsigned i = base + threadIdx.x;
        const unsigned is_root = i < n && label[i] == i;
        unsigned before, chunk_roots;
        root_scan(scan_storage).ExclusiveSum(is_root, before, chunk_roots);
        grid_objects_object rec;
        if (is_root) rec = acc[i];
        __syncthreads();
        if (is_root) out[n_objects + before] = rec;
        n_objects += chunk_roots;
        __syncthreads(); /* the writes land, and scan_storage is free again */
    }
    return n_objects;
}

__global__ void __launch_bounds__(LABEL_THREADS, LABEL_BLOCKS_PER_SM)
    grid_objects_label_kernel(size_t n_grids, uint64_t buf_bytes, int batch_variant, int bg_tie,
                              const uint8_t *__restrict__ in, const uint64_t *__restrict__ offset,
                              const uint16_t *__restrict__ height, const uint16_t *__restrict__ width,
                              const uint8_t *__restrict__ variants, uint16_t *labels, grid_objects_object *objects,
                              uint32_t *__restrict__ n_objects, int16_t *__restrict__ bg_out,
                              const grid_objects_status_record *__restrict__ status, gw_witness *witness)
{
    __shared__ uint8_t s_colour[GRID_OBJECTS_STAGE_CELLS];
    /* 4-byte aligned (and a multiple of 4 bytes long): a 16-bit atomic's 4-byte word stays in its array */
    __shared__ __align__(4) uint16_t s_label[GRID_OBJECTS_STAGE_CELLS];
    __shared__ __align__(4) grid_objects_object s_acc[GRID_OBJECTS_STAGE_CELLS];
    __shared__ unsigned s_count[COLOURS], s_first[COLOURS];
    __shared__ int s_bg;
    __shared__ root_scan::TempStorage scan_storage;
    const unsigned long long t_start = gw_witness_clock(witness);

    unsigned long long block_cells = 0; /* the same in every thread: the loop below is uniform */
    if (status->packed == GRID_OBJECTS_STATUS_NONE) { /* rejected input: write nothing */
        for (size_t k = blockIdx.x; k < n_grids; k += gridDim.x) {
            const uint64_t off = offset[k];
            const unsigned h = height[k], w = width[k];
            const unsigned variant = variants ? variants[k] : (unsigned)batch_variant;
            if (grid_error(off, h, w, variant, buf_bytes)) continue; /* only reachable with PREVALIDATED */
            const unsigned n = h * w;
            const bool staged = n <= GRID_OBJECTS_STAGE_CELLS;
            const uint8_t *colour = in + off;
            if (staged) {
                for (unsigned i = threadIdx.x; i < n; i += LABEL_THREADS) s_colour[i] = colour[i];
                colour = s_colour;
                __syncthreads();
            }
            const int bg = (variant & GRID_OBJECTS_WITHOUT_BG) ? background(colour, n, bg_tie, s_count, s_first, &s_bg)
                                                                : -1;
            uint16_t *label = staged ? s_label : labels + off;
            grid_objects_object *acc = staged ? s_acc : objects + off;
            const unsigned count = label_grid(colour, label, acc, objects + off, h, w, (int)variant, bg, scan_storage);
            if (staged)
                for (unsigned i = threadIdx.x; i < n; i += LABEL_THREADS) labels[off + i] = s_label[i];
            if (threadIdx.x == 0) {
                n_objects[k] = count;
                bg_out[k] = (int16_t)bg;
            }
            block_cells += n;
            __syncthreads(); /* the next grid overwrites the shared buffers */
        }
    }
    gw_witness_block_done(witness, block_cells, t_start);
}

/* [a, a+a_len) and [b, b+b_len) intersect; empty ranges intersect nothing. No sum, so nothing wraps. */
static bool ranges_overlap(const void *a, uint64_t a_len, const void *b, uint64_t b_len)
{
    const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    if (!a_len || !b_len) return false;
    return a0 <= b0 ? b0 - a0 < a_len : a0 - b0 < b_len;
}

extern "C" cudaError_t grid_objects_launch(const grid_objects_params *p, const uint8_t *d_in,
                                           const uint64_t *d_offset, const uint16_t *d_height,
                                           const uint16_t *d_width, const uint8_t *d_variants, uint16_t *d_labels,
                                           grid_objects_object *d_objects, uint32_t *d_n_objects, int16_t *d_bg,
                                           grid_objects_status_record *d_status, gw_witness *d_witness,
                                           cudaStream_t stream)
{
    if (!p) return cudaErrorInvalidValue;
    const size_t n = p->n_grids;
    if (n == 0) return cudaSuccess;
    if (!d_in || !d_offset || !d_height || !d_width || !d_labels || !d_objects || !d_n_objects || !d_bg || !d_status)
        return cudaErrorInvalidValue;
    if (!d_variants && (p->batch_variant < 0 || p->batch_variant > 7)) return cudaErrorInvalidValue;
    if (p->bg_tie != GRID_OBJECTS_TIE_ARC_DSL && p->bg_tie != GRID_OBJECTS_TIE_SMALLEST) return cudaErrorInvalidValue;
    if (p->flags & ~GRID_OBJECTS_PREVALIDATED) return cudaErrorInvalidValue;

    /* Aliasing, on address ranges only (no device reads): every output against every other array, labels and
     * objects over the padded entries the atomics may touch. */
    if (n > UINT64_MAX / 8u || p->buf_bytes > UINT64_MAX / sizeof(grid_objects_object) - 1u)
        return cudaErrorInvalidValue;
    const uint64_t buf = p->buf_bytes, out = grid_objects_out_entries(buf);
    const struct {
        const void *ptr;
        uint64_t bytes;
        bool is_output;
    } arrays[] = {{d_labels, 2u * out, true},
                  {d_objects, sizeof(grid_objects_object) * out, true},
                  {d_n_objects, 4u * n, true},
                  {d_bg, 2u * n, true},
                  {d_status, sizeof *d_status, true},
                  {d_in, buf, false},
                  {d_offset, 8u * n, false},
                  {d_height, 2u * n, false},
                  {d_width, 2u * n, false},
                  {d_variants, d_variants ? n : 0, false}};
    const size_t n_arrays = sizeof arrays / sizeof arrays[0];
    for (size_t a = 0; a < n_arrays; a++)
        for (size_t b = a + 1; b < n_arrays; b++)
            if ((arrays[a].is_output || arrays[b].is_output) &&
                ranges_overlap(arrays[a].ptr, arrays[a].bytes, arrays[b].ptr, arrays[b].bytes))
                return cudaErrorInvalidValue;
    /* The padding the 16-bit atomics need. The allocations are out of sight: out_entries is the caller's word
     * for their size, and a caller that never set it (0) is refused rather than overrun. */
    if (p->out_entries < out || ((uintptr_t)d_labels | (uintptr_t)d_objects) % 4u) return cudaErrorInvalidValue;

    /* An error already pending belongs to an earlier call: return it untouched, before enqueuing anything,
     * so that it is never taken for this launch's and no launch is left half-done. */
    cudaError_t err = cudaPeekAtLastError();
    if (err != cudaSuccess) return err;
    int device = 0, sms = 0, resident = 0; /* the current device's: the stream must belong to it */
    err = cudaGetDevice(&device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    /* Blocks take grids in a fixed stride, so a block that is not resident from the start leaves a tail:
     * launch exactly as many as fit (docs/grid_objects.md, "Resources", has the figure for sm_90). */
    if (err == cudaSuccess)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, grid_objects_label_kernel, LABEL_THREADS, 0);
    if (err != cudaSuccess) return err;

    err = cudaMemsetAsync(d_status, 0xFF, sizeof *d_status, stream); /* GRID_OBJECTS_STATUS_NONE */
    if (err != cudaSuccess) return err;
    if (!(p->flags & GRID_OBJECTS_PREVALIDATED)) {
        const size_t want = (n + VALIDATE_THREADS - 1) / VALIDATE_THREADS;
        const size_t cap = (size_t)sms * VALIDATE_BLOCKS_PER_SM;
        grid_objects_validate_kernel<<<(unsigned)(want < cap ? want : cap), VALIDATE_THREADS, 0, stream>>>(
            n, p->buf_bytes, p->batch_variant, d_offset, d_height, d_width, d_variants, d_status);
        err = cudaGetLastError();
        if (err != cudaSuccess) return err;
    }
    /* One block per grid at a time, as many resident blocks as fit, each striding over grids. */
    const size_t cap = (size_t)sms * (size_t)(resident > 0 ? resident : 1);
    grid_objects_label_kernel<<<(unsigned)(n < cap ? n : cap), LABEL_THREADS, 0, stream>>>(
        n, p->buf_bytes, p->batch_variant, p->bg_tie, d_in, d_offset, d_height, d_width, d_variants, d_labels,
        d_objects, d_n_objects, d_bg, d_status, d_witness);
    return cudaGetLastError();
}
