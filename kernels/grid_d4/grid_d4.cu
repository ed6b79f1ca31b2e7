/* SPDX-License-Identifier: MIT
 * grid_d4: the eight D4 transforms on a batch of ragged uint8 grids. Contract: grid_d4.h.
 *
 * Work split. One warp per grid, grid-stride over grids, so the ~130-cell grids of ARC keep 32 lanes busy
 * and no block waits on its largest grid. A grid of up to STAGE_MAX_CELLS (1040) cells is staged whole in the warp's
 * shared buffer with 16-byte loads and written back with 16-byte stores (the cost of this kernel is in
 * instructions per byte, not in DRAM traffic: every cell is read once and written once). Larger grids
 * (up to 255 x 255) go through 32 x 32 tiles padded to 33 columns, as in the CUDA transpose sample;
 * speed there is secondary.
 *
 * Safety. Every load stays inside the grid's own input bytes and every store inside its own output
 * bytes, and the transform re-checks each grid's metadata, so even metadata flagged
 * GRID_D4_PREVALIDATED that is wrong cannot make it touch memory outside [0, buf_bytes).
 */
#include "grid_d4.h"

#include <stdint.h>

enum {
    WARPS_PER_BLOCK = 4,
    TRANSFORM_THREADS = WARPS_PER_BLOCK * 32,
    TRANSFORM_BLOCKS_PER_SM = 8,
    VALIDATE_THREADS = 256,
    VALIDATE_BLOCKS_PER_SM = 4,
    TILE = 32,
    TILE_PITCH = TILE + 1,              /* the padding column spreads a tile column over banks */
    STAGE_BYTES = TILE * TILE_PITCH,    /* 1056 = 66 * 16: one staged grid or one tile per warp */
    STAGE_MAX_CELLS = STAGE_BYTES - 16, /* a staged grid starts at its 16-byte phase (0..15) */
};

/* The source cell of output (i, j): (r,c) = swap ? (j,i) : (i,j), then flip rows / columns. */
static __device__ __forceinline__ unsigned source_index(unsigned i, unsigned j, unsigned op, unsigned height,
                                                        unsigned width)
{
    const unsigned swap = op & 4u, flip_rows = op & 2u, flip_cols = op & 1u;
    unsigned r = swap ? j : i, c = swap ? i : j;
    if (flip_rows) r = height - 1u - r;
    if (flip_cols) c = width - 1u - c;
    return r * width + c;
}

/* The per-grid rules of grid_d4.h, in order. 0 when the grid is well formed. */
static __device__ __forceinline__ unsigned grid_error(uint64_t offset, unsigned height, unsigned width,
                                                      unsigned op, uint64_t buf_bytes)
{
    if (op > 7u) return GRID_D4_ERR_OP;
    if (height == 0u || width == 0u) return GRID_D4_ERR_EMPTY;
    if (height > GRID_D4_MAX_DIM || width > GRID_D4_MAX_DIM) return GRID_D4_ERR_TOO_LARGE;
    /* written so that nothing overflows: offset may be any 64-bit value */
    if (offset > buf_bytes || (uint64_t)height * width > buf_bytes - offset) return GRID_D4_ERR_BOUNDS;
    return 0u;
}

/* One thread per grid. The record keeps the lowest (index << 8 | code); per-grid errors carry bit 63
 * clear and so win over overlaps, matching grid_d4_validate, which checks overlap last. */
__global__ void __launch_bounds__(VALIDATE_THREADS)
    grid_d4_validate_kernel(size_t n_grids, uint64_t buf_bytes, int batch_op, const uint64_t *__restrict__ offset,
                            const uint16_t *__restrict__ height, const uint16_t *__restrict__ width,
                            const uint8_t *__restrict__ ops, grid_d4_status_record *__restrict__ status)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < n_grids; k += stride) {
        const uint64_t off = offset[k];
        const unsigned h = height[k], w = width[k];
        const unsigned code = grid_error(off, h, w, ops ? ops[k] : (unsigned)batch_op, buf_bytes);
        unsigned long long packed;
        if (code) {
            packed = ((unsigned long long)k << 8) | code;
        } else if (k + 1 < n_grids && offset[k + 1] >= off && offset[k + 1] - off < (uint64_t)h * w) {
            /* only consecutive ascending entries: the full check needs a sort, grid_d4_validate does it */
            packed = GRID_D4_STATUS_OVERLAP_BIT | ((unsigned long long)k << 8) | GRID_D4_ERR_OVERLAP;
        } else {
            continue;
        }
        atomicMin(&status->packed, packed);
    }
}

/* A grid of n <= STAGE_MAX_CELLS cells, by one warp. stage is the warp's 16-byte aligned buffer. */
static __device__ void transform_staged(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst, unsigned height,
                                        unsigned width, unsigned op, uint8_t *stage, unsigned lane)
{
    const unsigned n = height * width;

    /* s[i] = src[i]. s starts at src's 16-byte phase, so the aligned middle of src lands on aligned
     * shared addresses; the head and tail bytes outside it are copied one by one. */
    const unsigned src_phase = (unsigned)((uintptr_t)src & 15u);
    uint8_t *s = stage + src_phase;
    const unsigned src_head = min(n, (16u - src_phase) & 15u);
    const unsigned src_vecs = (n - src_head) / 16u;
    const unsigned src_tail = src_head + src_vecs * 16u;
    if (lane < src_head) s[lane] = src[lane];
    const uint4 *src_vec = (const uint4 *)(src + src_head);
    uint4 *s_vec = (uint4 *)(s + src_head);
    for (unsigned v = lane; v < src_vecs; v += 32u) s_vec[v] = __ldg(src_vec + v);
    if (src_tail + lane < n) s[src_tail + lane] = src[src_tail + lane]; /* fewer than 16 bytes remain */
    __syncwarp();

    /* dst[o] = s[source of o], o = i*out_width + j. Aligned 16-byte output chunks are assembled in
     * registers (little-endian: byte b of the chunk is bits 8*(b%4) of word b/4) and stored at once. */
    const unsigned out_width = (op & 4u) ? height : width;
    const unsigned dst_phase = (unsigned)((uintptr_t)dst & 15u);
    const unsigned dst_head = min(n, (16u - dst_phase) & 15u);
    const unsigned dst_vecs = (n - dst_head) / 16u;
    const unsigned dst_tail = dst_head + dst_vecs * 16u;
    if (lane < dst_head) dst[lane] = s[source_index(lane / out_width, lane % out_width, op, height, width)];
    uint4 *dst_vec = (uint4 *)(dst + dst_head);
    for (unsigned v = lane; v < dst_vecs; v += 32u) {
        const unsigned o = dst_head + v * 16u;
        unsigned i = o / out_width, j = o - i * out_width;
        unsigned word[4] = {0u, 0u, 0u, 0u};
#pragma unroll
        for (unsigned b = 0; b < 16u; b++) {
            word[b / 4u] |= (unsigned)s[source_index(i, j, op, height, width)] << (8u * (b % 4u));
            if (++j == out_width) j = 0, i++;
        }
        dst_vec[v] = make_uint4(word[0], word[1], word[2], word[3]);
    }
    const unsigned o = dst_tail + lane;
    if (o < n) dst[o] = s[source_index(o / out_width, o % out_width, op, height, width)];
    __syncwarp(); /* the next grid of this warp overwrites stage */
}

/* A grid too large to stage, by one warp, in 32 x 32 output tiles. For each output tile the source cells
 * form one rectangle of the input (rows and columns map to contiguous ranges under every op): it is
 * loaded along input rows into tile, then written along output rows. */
static __device__ void transform_tiled(const uint8_t *__restrict__ src, uint8_t *__restrict__ dst, unsigned height,
                                       unsigned width, unsigned op, uint8_t *tile, unsigned lane)
{
    const unsigned swap = op & 4u, flip_rows = op & 2u, flip_cols = op & 1u;
    const unsigned out_height = swap ? width : height, out_width = swap ? height : width;
    for (unsigned i0 = 0; i0 < out_height; i0 += TILE) {
        for (unsigned j0 = 0; j0 < out_width; j0 += TILE) {
            const unsigned tile_h = min((unsigned)TILE, out_height - i0), tile_w = min((unsigned)TILE, out_width - j0);
            /* source rows come from output rows (or columns, under swap); flipping reverses the range */
            const unsigned row_first = swap ? j0 : i0, row_count = swap ? tile_w : tile_h;
            const unsigned col_first = swap ? i0 : j0, col_count = swap ? tile_h : tile_w;
            const unsigned r_lo = flip_rows ? height - row_first - row_count : row_first;
            const unsigned c_lo = flip_cols ? width - col_first - col_count : col_first;
            if (lane < col_count)
                for (unsigned a = 0; a < row_count; a++)
                    tile[a * TILE_PITCH + lane] = src[(r_lo + a) * width + c_lo + lane];
            __syncwarp();
            if (lane < tile_w) {
                for (unsigned x = 0; x < tile_h; x++) {
                    const unsigned s = source_index(i0 + x, j0 + lane, op, height, width);
                    const unsigned r = s / width - r_lo, c = s % width - c_lo;
                    dst[(i0 + x) * out_width + j0 + lane] = tile[r * TILE_PITCH + c];
                }
            }
            __syncwarp(); /* the next tile overwrites this one */
        }
    }
}

__global__ void __launch_bounds__(TRANSFORM_THREADS, TRANSFORM_BLOCKS_PER_SM)
    grid_d4_transform_kernel(size_t n_grids, uint64_t buf_bytes, int batch_op, const uint8_t *__restrict__ in,
                             uint8_t *__restrict__ out, const uint64_t *__restrict__ offset,
                             const uint16_t *__restrict__ height, const uint16_t *__restrict__ width,
                             uint16_t *__restrict__ out_height, uint16_t *__restrict__ out_width,
                             const uint8_t *__restrict__ ops, const grid_d4_status_record *__restrict__ status,
                             gw_witness *witness)
{
    __shared__ __align__(16) uint8_t stage[WARPS_PER_BLOCK][STAGE_BYTES];
    __shared__ unsigned long long block_cells;
    const unsigned long long t_start = gw_witness_clock(witness);
    const unsigned lane = threadIdx.x % 32u, warp = threadIdx.x / 32u;
    if (threadIdx.x == 0) block_cells = 0;
    __syncthreads();

    unsigned long long warp_cells = 0;
    if (status->packed == GRID_D4_STATUS_NONE) { /* rejected input: write nothing */
        const size_t stride = (size_t)gridDim.x * WARPS_PER_BLOCK;
        for (size_t k = (size_t)blockIdx.x * WARPS_PER_BLOCK + warp; k < n_grids; k += stride) {
            const uint64_t off = offset[k];
            const unsigned h = height[k], w = width[k], op = ops ? ops[k] : (unsigned)batch_op;
            if (grid_error(off, h, w, op, buf_bytes)) continue; /* only reachable with GRID_D4_PREVALIDATED */
            if (lane == 0) {
                out_height[k] = (uint16_t)((op & 4u) ? w : h);
                out_width[k] = (uint16_t)((op & 4u) ? h : w);
            }
            if (h * w <= STAGE_MAX_CELLS)
                transform_staged(in + off, out + off, h, w, op, stage[warp], lane);
            else
                transform_tiled(in + off, out + off, h, w, op, stage[warp], lane);
            warp_cells += (unsigned long long)h * w;
        }
    }
    if (witness) { /* uniform: a kernel argument */
        if (lane == 0 && warp_cells) atomicAdd(&block_cells, warp_cells);
        __syncthreads(); /* block_cells is final before thread 0 records it */
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

extern "C" cudaError_t grid_d4_launch(const grid_d4_params *p, const uint8_t *d_in, uint8_t *d_out,
                                      const uint64_t *d_offset, const uint16_t *d_height, const uint16_t *d_width,
                                      uint16_t *d_out_height, uint16_t *d_out_width, const uint8_t *d_ops,
                                      grid_d4_status_record *d_status, gw_witness *d_witness, cudaStream_t stream)
{
    if (!p) return cudaErrorInvalidValue;
    const size_t n = p->n_grids;
    if (n == 0) return cudaSuccess;
    if (!d_in || !d_out || !d_offset || !d_height || !d_width || !d_out_height || !d_out_width || !d_status)
        return cudaErrorInvalidValue;
    if (!d_ops && (p->batch_op < 0 || p->batch_op > 7)) return cudaErrorInvalidValue;
    if (p->flags & ~GRID_D4_PREVALIDATED) return cudaErrorInvalidValue;

    /* Aliasing, on address ranges only (no device reads): every output against every other array. */
    if (n > UINT64_MAX / 8u) return cudaErrorInvalidValue;
    const struct {
        const void *ptr;
        uint64_t bytes;
        bool is_output;
    } arrays[] = {{d_out, p->buf_bytes, true},     {d_out_height, 2u * n, true}, {d_out_width, 2u * n, true},
                  {d_status, sizeof *d_status, true}, {d_in, p->buf_bytes, false}, {d_offset, 8u * n, false},
                  {d_height, 2u * n, false},          {d_width, 2u * n, false},    {d_ops, d_ops ? n : 0, false}};
    const size_t n_arrays = sizeof arrays / sizeof arrays[0];
    for (size_t a = 0; a < n_arrays; a++)
        for (size_t b = a + 1; b < n_arrays; b++)
            if ((arrays[a].is_output || arrays[b].is_output) &&
                ranges_overlap(arrays[a].ptr, arrays[a].bytes, arrays[b].ptr, arrays[b].bytes))
                return cudaErrorInvalidValue;

    /* An error already pending belongs to an earlier call: return it untouched, before enqueuing anything,
     * so that it is never taken for this launch's and no launch is left half-done. */
    cudaError_t err = cudaPeekAtLastError();
    if (err != cudaSuccess) return err;
    int device = 0, sms = 0; /* the current device's: the stream must belong to it */
    err = cudaGetDevice(&device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err != cudaSuccess) return err;

    err = cudaMemsetAsync(d_status, 0xFF, sizeof *d_status, stream); /* GRID_D4_STATUS_NONE */
    if (err != cudaSuccess) return err;
    if (!(p->flags & GRID_D4_PREVALIDATED)) {
        const size_t want = (n + VALIDATE_THREADS - 1) / VALIDATE_THREADS;
        const unsigned blocks = (unsigned)(want < (size_t)sms * VALIDATE_BLOCKS_PER_SM ? want : (size_t)sms * VALIDATE_BLOCKS_PER_SM);
        grid_d4_validate_kernel<<<blocks, VALIDATE_THREADS, 0, stream>>>(n, p->buf_bytes, p->batch_op, d_offset,
                                                                         d_height, d_width, d_ops, d_status);
        err = cudaGetLastError();
        if (err != cudaSuccess) return err;
    }
    /* A few resident blocks per SM, each warp striding over grids: enough warps to hide latency, and
     * few enough blocks that the witness atomics stay negligible. */
    const size_t want = (n + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    const size_t cap = (size_t)sms * TRANSFORM_BLOCKS_PER_SM;
    grid_d4_transform_kernel<<<(unsigned)(want < cap ? want : cap), TRANSFORM_THREADS, 0, stream>>>(
        n, p->buf_bytes, p->batch_op, d_in, d_out, d_offset, d_height, d_width, d_out_height, d_out_width, d_ops,
        d_status, d_witness);
    return cudaGetLastError();
}
