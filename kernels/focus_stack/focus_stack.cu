/* SPDX-License-Identifier: MIT
 * focus_stack: LoG focus measure and per-pixel best-slice selection. Contract: focus_stack.h.
 *
 * Paths. Each call launches exactly one kernel, and that kernel records the witness (items = n*y*x):
 *   focus_stack_fast_kernel        ksize 3, LOG_ABS, ZERO border, window 0 or 1 (the morphseq defaults, the
 *                                  only configuration with a speed target), focus == NULL;
 *   focus_stack_fast_focus_kernel  the same with the focus volume;
 *   focus_stack_general_kernel     every other combination, and y or x >= FAST_MAX_DIM (2^31 - 256).
 *
 * Fast path: a register pipeline with no shared-memory staging and no barrier in the main loop. Each
 * warp owns a strip of FAST_ROWS (8) output rows by 60 columns of one stack and loops over z; a block is
 * FAST_WARPS (4) strips stacked in y (a 60 x 32 tile), so the 2-row halos that neighbouring warps re-read
 * come from L1 (or L2 across blocks): every input voxel comes from DRAM once.
 *   Columns. Lane l holds two adjacent columns c = x0 - 2 + 2l and c + 1 (64 per warp). Per input row it
 *   loads its two uint16 values (coalesced along x), takes I(c-1) and I(c+2) from lanes l-1 and l+1 by
 *   shuffle, and forms the horizontal blur (1 2 1) of both columns. The vertical blur (1 2 1) runs down
 *   the rows in two pending accumulators, giving B one row behind. B of the neighbouring columns again
 *   comes by shuffle, and the Laplacian is evaluated as K3/2 = [1 0 1; 0 -4 0; 1 0 1]: E = B(c-1) +
 *   B(c+1) per row, L/2 = E(y-1) + E(y+1) - 4 B(y), with two more pending accumulators. Lane 0's left
 *   column and lane 31's right column see a wrapped shuffle; they are never stored, so lanes 1..30
 *   produce the tile's 60 columns x0 .. x0+59.
 *   Rows. Per slice a warp streams FAST_STEPS = 12 input rows (oy0-2 .. oy0+9) through a 12-slot register
 *   queue; each row is requested 10 rows before use, across the slice boundary (see fast_strip).
 *   Borders. ZERO is applied twice, as docs/focus_stack.md ("Borders") requires: inputs outside the image load as 0, and B
 *   outside the image is forced to 0 before the Laplacian (never a blur into the padding). Strips whose
 *   rows oy0-2 .. oy0+9 and 64 columns all lie inside the image run a copy of the loop without masks.
 *   Selection. Per output pixel the running best is one int key = (|L/2| << 8) | (255 - z): a strictly
 *   larger score wins, and on equal scores the earlier slice has the larger key, which is docs/focus_stack.md's
 *   first-max rule. The winner's input value is kept in a register (no second read). |L| = 2 |L/2| <=
 *   8,388,480 < 2^24, so the float outputs are exact: (float)(2 |L/2|) * (1/16).
 *
 * General path: exact for every parameter combination, written for clarity rather than speed. A block owns
 * a 32 x 32 output tile of one stack and loops over z. For each slice it walks the score region the tile
 * needs (the tile grown by r_w and clipped to the image: the border map sends every window position into
 * it) in chunks of at most GEN_CHUNK x GEN_CHUNK (40 x 40):
 *   1. s_in    = the input on the chunk + (r_G + r_K) halo, border-extended (any offset; 0 for ZERO);
 *   2. s_blur  (LOG_ABS) = B on the chunk + r_K halo: in-image cells from s_in; out-of-image cells are 0 for
 *      ZERO, else B at the mapped in-image position computed straight from global memory (that position
 *      may lie outside the chunk, so it is never looked up in s_blur);
 *   3. s_score = F = |K * B^| (int64) on the chunk;
 *   4. window: V(y,x) = sum over the chunk of cy(y,qy) cx(x,qx) F(qy,qx), where c(p,q) counts the window
 *      offsets around p that the border rule maps onto q. This is exactly the box sum of the extended F
 *      for any window up to 7567, also far larger than the image, with no memory beyond shared memory;
 *      separable, so the x pass goes through s_hsum.
 *   w <= 9 needs one chunk per tile. For larger windows the work per output and slice grows like
 *   min(w, y) * min(w, x) (a window covering a whole 2189 x 2189 image costs about a second per slice):
 *   correct, not fast.
 *
 * Integer widths: fast path int32 (B <= 1,048,560, |L/2| <= 4,194,240). General path: B int32; F, window
 * sums and V int64 (docs/focus_stack.md, "Integer widths"). No float before the final V / S.
 * Launch geometry: 1-D grids of at most (SMs x resident blocks); each block strides over tiles indexed
 * (n, tile row, tile column) in 64 bits, so y and x are limited only by their int fields. No allocation, no
 * synchronisation, no global state (the tap tables are compile-time __constant__ data).
 *
 * Resources per kernel (registers, stack frame, spills, static shared memory, blocks per SM on sm_90): the
 * table in docs/focus_stack.md, "How the kernel works", which comes from ptxas -v of the build and is checked
 * by the test doc_resource_figures. __launch_bounds__(128, 4) and (128, 3) cap the fast kernels' registers
 * (FAST_BLOCKS_PER_SM below); the fast kernel's inner loop is ~335 instructions per slice and strip (16
 * pixels per lane).
 */
#include "focus_stack.h"

#include <stdint.h>

enum {
    FAST_WARPS = 4,                       /* strips per block, stacked in y */
    FAST_THREADS = FAST_WARPS * 32,
    FAST_BLOCKS_PER_SM = 4,               /* caps registers at 128 */
    FAST_FOCUS_BLOCKS_PER_SM = 3,         /* the focus kernel: caps registers at 168 */
    FAST_ROWS = 8,                        /* output rows per warp */
    FAST_STEPS = FAST_ROWS + 4,           /* input rows per slice: r_G + r_K = 2 above and below */
    FAST_TILE_X = 60,                     /* 64 columns per warp minus the 2-column halo on each side */
    FAST_TILE_Y = FAST_WARPS * FAST_ROWS, /* 32 */
    FAST_MAX_DIM = 0x7fffff00,            /* y and x below this keep the fast path's int coordinates safe */

    GEN_THREADS = 256,
    GEN_TILE = 32,                        /* output tile edge; GEN_THREADS / GEN_TILE = 8 rows per pass */
    GEN_PIX = GEN_TILE * GEN_TILE / GEN_THREADS, /* output pixels per thread: rows ty + 8i */
    GEN_CHUNK = 40,                       /* score chunk edge: w <= 9 needs one chunk per tile */
    GEN_MAX_HALO = 6,                     /* r_G + r_K for LOG_ABS k = 7 */
    GEN_IN_PITCH = GEN_CHUNK + 2 * GEN_MAX_HALO,
    GEN_B_PITCH = GEN_CHUNK + 2 * 3,      /* r_K <= 3 */
};

#define FULL_MASK 0xffffffffu

/* OpenCV's taps (docs/focus_stack.md, "Taps"), indexed [(k - 3) / 2][i]: blur g, Laplacian smoothing s and second difference
 * d2; K[a][b] = s[a] d2[b] + d2[a] s[b]. Compile-time constants, never written. */
static __constant__ int c_gauss[3][7] = {{1, 2, 1}, {1, 4, 6, 4, 1}, {2, 7, 14, 18, 14, 7, 2}};
static __constant__ int c_smooth[3][7] = {{1, 2, 1}, {1, 4, 6, 4, 1}, {1, 6, 15, 20, 15, 6, 1}};
static __constant__ int c_diff2[3][7] = {{1, -2, 1}, {1, 0, -2, 0, 1}, {1, 2, -1, -4, -1, 2, 1}};

static __device__ __forceinline__ long long min_ll(long long a, long long b) { return a < b ? a : b; }
static __device__ __forceinline__ long long max_ll(long long a, long long b) { return a > b ? a : b; }

/* ---------------------------------------------------------------------------------------------------------
 * Fast path
 * ------------------------------------------------------------------------------------------------------- */

/* One uint16 input value, 0 unless ok (ZERO border: outside the image reads as 0). Loads and pointer steps
 * are volatile asm, which keeps one pointer register walking the rows in stream order: as plain C, the
 * compiler strength-reduces every row to its own 64-bit pointer and the loop grows by ~15% (380 against
 * 335 instructions per slice, 508 against 442 in the masked copy). */
#if defined(GW_EMU_DEVICE) /* the emulated device (docs/emu.md, "Seams"): the same load and step, as plain C */
static __device__ __forceinline__ int fast_ld(const uint16_t *p, bool ok) { return ok ? *p : 0; }
static __device__ __forceinline__ void fast_advance(const uint16_t **p, long long elements) { *p += elements; }
#else
static __device__ __forceinline__ int fast_ld(const uint16_t *p, bool ok)
{
    int v;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %2, 0;\n\tmov.b32 %0, 0;\n\t@q ld.global.nc.u16 %0, [%1];\n\t}"
                 : "=r"(v)
                 : "l"(p), "r"((int)ok));
    return v;
}

/* p += elements (the empty asm hides p's history from the compiler, see fast_ld) */
static __device__ __forceinline__ void fast_advance(const uint16_t **p, long long elements)
{
    asm volatile("" : "+l"(*p));
    *p += elements;
}
#endif

/* The lane's two values of one row; without masks (interior strips) every load is in bounds. */
static __device__ __forceinline__ void fast_load(const uint16_t *p, int *a, int *b, bool masked, bool ok_a, bool ok_b)
{
    *a = fast_ld(p, !masked || ok_a);
    *b = fast_ld(p + 1, !masked || ok_b);
}

/* One warp's strip: output rows oy0 .. oy0+FAST_ROWS-1, columns x_lane and x_lane+1 of this lane, every
 * slice of stack n. masked = false only when rows oy0-2 .. oy0+9 and the warp's 64 columns lie inside the
 * image; with_focus: write the focus volume. The array pointers are the kernel's own arguments, which
 * stay in the constant bank instead of occupying registers through the slice loop.
 *
 * Input queue: slot j holds input row j (oy0 - 2 + j) of the current slice. At step j the slot of row
 * j - 2, whose value was last needed as this step's ff candidate, is refilled with the row FAST_STEPS - 2
 * ahead in the stream: row j - 2 of the next slice for j >= 2, rows 10 and 11 of this slice at j = 0, 1.
 * So every row is requested 10 steps before use and the loads walk the stream in order. */
static __device__ __forceinline__ void fast_strip(const uint16_t *__restrict__ in, uint8_t *__restrict__ idx,
                                                  uint16_t *__restrict__ ff, float *__restrict__ best,
                                                  float *__restrict__ focus, int n_slices, int height, int width,
                                                  int n, int oy0, int x_lane, bool masked, bool with_focus,
                                                  volatile int *s_where)
{
    const unsigned lane = threadIdx.x & 31u;
    /* Where the strip's outputs go is needed again only after the slice loop: it waits in shared memory
     * (volatile, so it really is read back) instead of in registers the loop needs. The first barrier
     * keeps lane 0 from overwriting the previous strip's copy before every lane has read it. */
    __syncwarp();
    if (lane == 0) s_where[0] = n, s_where[1] = oy0, s_where[2] = x_lane;
    __syncwarp();
    const long long X = width, plane = (long long)height * X;
    const unsigned row_stride = (unsigned)width;
    const bool col_a = x_lane >= 0 && x_lane < width, col_b = x_lane + 1 >= 0 && x_lane + 1 < width;
    const int rows_left = height - oy0 < FAST_ROWS ? height - oy0 : FAST_ROWS; /* output rows inside the image */
    unsigned rowmask = 0; /* bit j: input row oy0 - 2 + j lies inside the image (no overflow: FAST_MAX_DIM) */
#pragma unroll
    for (int j = 0; j < FAST_STEPS; j++)
        if (oy0 - 2 + j >= 0 && oy0 - 2 + j < height) rowmask |= 1u << j;
    /* bit j: input row oy0 - 2 + j and the lane's column a (b) lie inside the image */
    const unsigned ok_a = col_a ? rowmask : 0u, ok_b = col_b ? rowmask : 0u;
    const bool store_focus = with_focus && lane - 1u < 30u;

    /* Formed for every lane, dereferenced only where the row and column lie in the image. */
    const uint16_t *p = in + (((long long)n * n_slices * height + oy0 - 2) * X + x_lane);
    int qa[FAST_STEPS], qb[FAST_STEPS];
#pragma unroll
    for (int s = 0; s < FAST_STEPS - 2; s++) {
        fast_load(p, &qa[s], &qb[s], masked, (ok_a >> s) & 1u, (ok_b >> s) & 1u);
        fast_advance(&p, row_stride);
    }

    /* key: (|L/2| << 8) | (255 - z) of the best slice so far; ffv: its input values, column a in the low
     * and column b in the high half (a winner replaces its half with one byte permute) */
    int key[FAST_ROWS][2];
    unsigned ffv[FAST_ROWS];
#pragma unroll
    for (int r = 0; r < FAST_ROWS; r++) key[r][0] = key[r][1] = -1, ffv[r] = 0;

    for (int z = 0; z < n_slices; z++) {
        const int zc = 255 - z;
        const bool more = z + 1 < n_slices;
        int acc0a, acc0b, acc1a, acc1b; /* vertical blur, pending rows (each set before use) */
        int l0a, l0b, l1a, l1b;         /* Laplacian / 2, pending rows */
#pragma unroll
        for (int j = 0; j < FAST_STEPS; j++) {
            /* input row oy0 - 2 + j of slice z */
            const int ia = qa[j], ib = qb[j];

            /* horizontal blur of both columns: I(c-1) + 2 I(c) + I(c+1) */
            const int left = __shfl_up_sync(FULL_MASK, ib, 1);
            const int right = __shfl_down_sync(FULL_MASK, ia, 1);
            const int sum = ia + ib;
            const int ha = left + sum + ia, hb = sum + ib + right;

            if (j >= 2) {
                /* B row oy0 - 3 + j = input row index j - 1 */
                int ba = acc1a + ha, bb = acc1b + hb;
                if (masked) {
                    if (!((ok_a >> (j - 1)) & 1u)) ba = 0;
                    if (!((ok_b >> (j - 1)) & 1u)) bb = 0;
                }
                const int bl = __shfl_up_sync(FULL_MASK, bb, 1);
                const int br = __shfl_down_sync(FULL_MASK, ba, 1);
                const int ea = bl + bb, eb = ba + br; /* B(c-1) + B(c+1) */
                const int k = j - 2;                  /* B row oy0 - 1 + k */
                if (k >= 2) {
                    /* output row oy0 + r: L/2 = E(r-1) + E(r+1) - 4 B(r); its input is row j - 2 */
                    const int r = k - 2;
                    const int fa = abs(l1a + ea), fb = abs(l1b + eb);
                    const int ka = fa * 256 + zc, kb = fb * 256 + zc; /* zc < 256: the same as (f << 8) | zc */
                    if (ka > key[r][0]) key[r][0] = ka, ffv[r] = __byte_perm(qa[j - 2], ffv[r], 0x7610);
                    if (kb > key[r][1]) key[r][1] = kb, ffv[r] = __byte_perm(qb[j - 2], ffv[r], 0x1054);
                    if (store_focus && r < rows_left) {
                        float *f = focus + (((long long)n * n_slices + z) * plane + (long long)(oy0 + r) * X + x_lane);
                        if (col_a) f[0] = __int2float_rn(2 * fa) * 0.0625f; /* exact: 2|L/2| < 2^24 */
                        if (col_b) f[1] = __int2float_rn(2 * fb) * 0.0625f;
                    }
                }
                if (k >= 1) l1a = l0a - 4 * ba, l1b = l0b - 4 * bb;
                l0a = ea, l0b = eb;
            }
            if (j >= 1) acc1a = acc0a + 2 * ha, acc1b = acc0b + 2 * hb;
            acc0a = ha, acc0b = hb;

            /* refill the slot of row j - 2 (see above) */
            const int slot = (j + FAST_STEPS - 2) % FAST_STEPS;
            /* j < 2: rows 10 and 11 of this slice; j >= 2: row j - 2 of the next slice, or after the last
             * slice of this one again (in bounds, never used), so that no load needs a branch */
            if (j == 2) fast_advance(&p, more ? plane - (long long)FAST_STEPS * X : -(long long)FAST_STEPS * X);
            fast_load(p, &qa[slot], &qb[slot], masked, (ok_a >> slot) & 1u, (ok_b >> slot) & 1u);
            fast_advance(&p, row_stride);
        }
    }

    n = s_where[0], oy0 = s_where[1], x_lane = s_where[2] + 2 * (int)lane;
    if (lane - 1u >= 30u) return; /* lanes 0 and 31 hold halo columns only */
    const bool out_a = x_lane < width, out_b = x_lane + 1 < width; /* lanes 1..30: x_lane >= 0 */
    const int out_rows = height - oy0 < FAST_ROWS ? height - oy0 : FAST_ROWS;
#pragma unroll
    for (int r = 0; r < FAST_ROWS; r++) {
        if (r >= out_rows) break;
        const long long pix = ((long long)n * height + oy0 + r) * X + x_lane;
#pragma unroll
        for (int c = 0; c < 2; c++) {
            if (!(c ? out_b : out_a)) continue;
            idx[pix + c] = (uint8_t)(255 - (key[r][c] & 255));
            ff[pix + c] = (uint16_t)(ffv[r] >> (16 * c));
            if (best) best[pix + c] = __int2float_rn(2 * (key[r][c] >> 8)) * 0.0625f;
        }
    }
}

/* Tile t -> (column tx, row ty, stack n), x fastest; 32-bit division when it suffices. */
static __device__ __forceinline__ void fast_tile(unsigned long long t, unsigned long long tiles_x,
                                                 unsigned long long tiles_y, unsigned long long n_tiles,
                                                 unsigned long long *tx, unsigned long long *ty, unsigned long long *n)
{
    if (n_tiles <= 0xffffffffull) {
        const unsigned t32 = (unsigned)t, rest = t32 / (unsigned)tiles_x;
        *tx = t32 - rest * (unsigned)tiles_x, *ty = rest % (unsigned)tiles_y, *n = rest / (unsigned)tiles_y;
    } else {
        const unsigned long long rest = t / tiles_x;
        *tx = t - rest * tiles_x, *ty = rest % tiles_y, *n = rest / tiles_y;
    }
}

/* The body of both fast kernels: the block strides over 60 x 32 tiles, each warp takes its strip. */
static __device__ __forceinline__ void fast_tiles(const uint16_t *__restrict__ in, uint8_t *__restrict__ idx,
                                                  uint16_t *__restrict__ ff, float *__restrict__ best,
                                                  float *__restrict__ focus, int n_slices, int height, int width,
                                                  unsigned long long tiles_x, unsigned long long tiles_y,
                                                  unsigned long long n_tiles, gw_witness *witness, bool with_focus)
{
    /* The start time waits in shared memory rather than in two registers held through the whole kernel
     * (only thread 0's copy is read by the witness). */
    __shared__ unsigned long long s_t_start;
    __shared__ int s_where[FAST_WARPS][3];
    if (threadIdx.x == 0) s_t_start = gw_witness_clock(witness);
    const unsigned warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;

    for (unsigned long long t = blockIdx.x; t < n_tiles; t += gridDim.x) {
        unsigned long long tx, ty, n;
        fast_tile(t, tiles_x, tiles_y, n_tiles, &tx, &ty, &n);
        /* The launcher keeps y and x below FAST_MAX_DIM, so these ints cannot overflow. */
        const int x0 = (int)tx * FAST_TILE_X, oy0 = (int)ty * FAST_TILE_Y + (int)warp * FAST_ROWS;
        if (oy0 >= height) continue; /* warp-uniform; the kernel has no barrier before the witness */
        const int x_lane = x0 - 2 + 2 * (int)lane;
        /* Interior strips (every input row and column they touch inside the image) skip the ZERO masks. */
        if (oy0 - 2 >= 0 && oy0 + FAST_ROWS + 1 < height && x0 - 2 >= 0 && x0 + 61 < width)
            fast_strip(in, idx, ff, best, focus, n_slices, height, width, (int)n, oy0, x_lane, false, with_focus,
                       s_where[warp]);
        else
            fast_strip(in, idx, ff, best, focus, n_slices, height, width, (int)n, oy0, x_lane, true, with_focus,
                       s_where[warp]);
    }

    /* Pixels this block finalised, counted after the work so that nothing is held through it. */
    unsigned long long items = 0;
    if (witness && threadIdx.x == 0) {
        for (unsigned long long t = blockIdx.x; t < n_tiles; t += gridDim.x) {
            unsigned long long tx, ty, n;
            fast_tile(t, tiles_x, tiles_y, n_tiles, &tx, &ty, &n);
            const long long x0 = (long long)tx * FAST_TILE_X, y0 = (long long)ty * FAST_TILE_Y;
            items += (unsigned long long)(min_ll(FAST_TILE_Y, height - y0) * min_ll(FAST_TILE_X, width - x0));
        }
    }
    gw_witness_block_done(witness, items, threadIdx.x == 0 ? s_t_start : 0ull);
}

/* The default outputs (idx, ff, optional best). */
__global__ void __launch_bounds__(FAST_THREADS, FAST_BLOCKS_PER_SM)
    focus_stack_fast_kernel(const uint16_t *__restrict__ in, uint8_t *__restrict__ idx, uint16_t *__restrict__ ff,
                            float *__restrict__ best, int n_slices, int height, int width, unsigned long long tiles_x,
                            unsigned long long tiles_y, unsigned long long n_tiles, gw_witness *witness)
{
    fast_tiles(in, idx, ff, best, NULL, n_slices, height, width, tiles_x, tiles_y, n_tiles, witness, false);
}

/* The same with the per-slice focus volume (not performance critical). */
__global__ void __launch_bounds__(FAST_THREADS, FAST_FOCUS_BLOCKS_PER_SM)
    focus_stack_fast_focus_kernel(const uint16_t *__restrict__ in, uint8_t *__restrict__ idx,
                                  uint16_t *__restrict__ ff, float *__restrict__ best, float *__restrict__ focus,
                                  int n_slices, int height, int width, unsigned long long tiles_x,
                                  unsigned long long tiles_y, unsigned long long n_tiles, gw_witness *witness)
{
    fast_tiles(in, idx, ff, best, focus, n_slices, height, width, tiles_x, tiles_y, n_tiles, witness, true);
}

/* ---------------------------------------------------------------------------------------------------------
 * General path
 * ------------------------------------------------------------------------------------------------------- */

/* The border rule of docs/focus_stack.md ("Borders") for any offset: the in-image coordinate p stands for, or -1 (ZERO, outside). */
static __device__ __forceinline__ long long map_coord(long long p, long long n, int border)
{
    if (p >= 0 && p < n) return p;
    if (border == FOCUS_STACK_BORDER_ZERO) return -1;
    if (border == FOCUS_STACK_BORDER_REPLICATE) return p < 0 ? 0 : n - 1;
    if (n == 1) return 0;
    const long long m = 2 * (n - 1);
    long long q = p % m;
    if (q < 0) q += m;
    return q < n ? q : m - q;
}

/* floor(a / m) for m > 0 */
static __device__ __forceinline__ long long floor_div(long long a, long long m)
{
    const long long q = a / m;
    return (a % m != 0 && a < 0) ? q - 1 : q;
}

/* How many p in [c - hw, c + hw] the border rule maps onto q (c and q inside [0, n)). For ZERO, and for any
 * window that stays inside the image, this is 1 when |q - c| <= hw and 0 otherwise. */
static __device__ long long window_count(long long c, long long q, int hw, long long n, int border)
{
    const long long lo = c - hw, hi = c + hw;
    if (border == FOCUS_STACK_BORDER_ZERO || (lo >= 0 && hi < n)) return (q >= lo && q <= hi) ? 1 : 0;
    if (border == FOCUS_STACK_BORDER_REPLICATE) {
        long long cnt = (q >= lo && q <= hi) ? 1 : 0;
        if (q == 0 && lo < 0) cnt += -lo;              /* p in [lo, -1] -> 0 */
        if (q == n - 1 && hi > n - 1) cnt += hi - (n - 1); /* p in [n, hi] -> n - 1 */
        return cnt;
    }
    if (n == 1) return 2 * (long long)hw + 1;
    /* REFLECT101 maps p to q iff p = q or p = -q (mod m); for q = 0 and q = n - 1 these coincide */
    const long long m = 2 * (n - 1);
    long long cnt = floor_div(hi - q, m) - floor_div(lo - 1 - q, m);
    if (q > 0 && q < n - 1) cnt += floor_div(hi - (m - q), m) - floor_div(lo - 1 - (m - q), m);
    return cnt;
}

/* B at the in-image position (qy, qx), read straight from the slice (REPLICATE / REFLECT101 only: the
 * value of an out-of-image B cell, whose mapped position may lie outside the staged chunk). */
static __device__ int blur_direct(const uint16_t *__restrict__ slice, long long Y, long long X, long long qy,
                                  long long qx, int kt, int border)
{
    const int ks = 3 + 2 * kt, hg = ks / 2;
    int sum = 0;
    for (int a = 0; a < ks; a++) {
        const long long yy = map_coord(qy - hg + a, Y, border);
        int row = 0;
        for (int b = 0; b < ks; b++) row += c_gauss[kt][b] * (int)slice[yy * X + map_coord(qx - hg + b, X, border)];
        sum += c_gauss[kt][a] * row;
    }
    return sum;
}

__global__ void __launch_bounds__(GEN_THREADS)
    focus_stack_general_kernel(focus_stack_params prm, const uint16_t *__restrict__ in, uint8_t *__restrict__ idx,
                               uint16_t *__restrict__ ff, float *__restrict__ best, float *__restrict__ focus,
                               unsigned long long tiles_x, unsigned long long tiles_y, unsigned long long n_tiles,
                               gw_witness *witness)
{
    __shared__ uint16_t s_in[(GEN_CHUNK + 2 * GEN_MAX_HALO) * GEN_IN_PITCH];
    __shared__ int s_blur[(GEN_CHUNK + 6) * GEN_B_PITCH];
    __shared__ long long s_score[GEN_CHUNK * GEN_CHUNK];
    __shared__ long long s_hsum[GEN_CHUNK * GEN_TILE];

    const unsigned long long t_start = gw_witness_clock(witness);
    const int tid = (int)threadIdx.x, tx = tid % GEN_TILE, ty = tid / GEN_TILE;
    const long long Y = prm.y, X = prm.x, plane = Y * X;
    const int Z = prm.z, ks = prm.ksize, kt = (ks - 3) / 2, hk = ks / 2;
    const bool log_abs = prm.measure == FOCUS_STACK_LOG_ABS;
    const int hg = log_abs ? hk : 0, hh = hg + hk;
    const int hw = prm.window > 1 ? prm.window / 2 : 0;
    const int border = prm.border;
    const float inv_s = log_abs ? 1.0f / (float)(1 << (4 * kt + 4)) : 1.0f; /* 1 / 4^(k-1), exact */
    unsigned long long items = 0;

    for (unsigned long long t = blockIdx.x; t < n_tiles; t += gridDim.x) {
        const unsigned long long rest = t / tiles_x, tile_x = t - rest * tiles_x;
        const unsigned long long tile_y = rest % tiles_y, n = rest / tiles_y;
        const long long y0 = (long long)tile_y * GEN_TILE, x0 = (long long)tile_x * GEN_TILE;
        const long long y_end = min_ll(y0 + GEN_TILE - 1, Y - 1), x_end = min_ll(x0 + GEN_TILE - 1, X - 1);
        if (tid == 0) items += (unsigned long long)((y_end - y0 + 1) * (x_end - x0 + 1));
        /* Scores the tile's windows need; the border map sends every window position into this range. */
        const long long fy_lo = max_ll(0, y0 - hw), fy_hi = min_ll(Y - 1, y_end + hw);
        const long long fx_lo = max_ll(0, x0 - hw), fx_hi = min_ll(X - 1, x_end + hw);
        const uint16_t *stack = in + (long long)n * Z * plane;
        const long long px = x0 + tx;

        long long best_v[GEN_PIX];
        int best_z[GEN_PIX], best_in[GEN_PIX];
#pragma unroll
        for (int i = 0; i < GEN_PIX; i++) best_v[i] = -1, best_z[i] = 0, best_in[i] = 0;

        for (int z = 0; z < Z; z++) {
            const uint16_t *slice = stack + (long long)z * plane;
            long long v[GEN_PIX];
            int in_val[GEN_PIX];
#pragma unroll
            for (int i = 0; i < GEN_PIX; i++) v[i] = 0, in_val[i] = 0;

            for (long long cy0 = fy_lo; cy0 <= fy_hi; cy0 += GEN_CHUNK) {
                const int ch = (int)min_ll(GEN_CHUNK, fy_hi - cy0 + 1);
                for (long long cx0 = fx_lo; cx0 <= fx_hi; cx0 += GEN_CHUNK) {
                    const int cw = (int)min_ll(GEN_CHUNK, fx_hi - cx0 + 1);

                    /* 1. input on the chunk + hh halo; s_in[r][c] = I^(cy0 - hh + r, cx0 - hh + c) */
                    const int in_h = ch + 2 * hh, in_w = cw + 2 * hh;
                    for (int e = tid; e < in_h * in_w; e += GEN_THREADS) {
                        const int r = e / in_w, c = e - r * in_w;
                        const long long my = map_coord(cy0 - hh + r, Y, border);
                        const long long mx = map_coord(cx0 - hh + c, X, border);
                        s_in[r * GEN_IN_PITCH + c] = (my < 0 || mx < 0) ? (uint16_t)0 : slice[my * X + mx];
                    }
                    __syncthreads();
                    /* the input of each own pixel, from the one chunk whose core holds it (for ff) */
#pragma unroll
                    for (int i = 0; i < GEN_PIX; i++) {
                        const long long py = y0 + ty + 8 * i;
                        if (py >= cy0 && py < cy0 + ch && px >= cx0 && px < cx0 + cw)
                            in_val[i] = s_in[(int)(py - cy0 + hh) * GEN_IN_PITCH + (int)(px - cx0 + hh)];
                    }

                    /* 2. blur on the chunk + hk halo; s_blur[r][c] = B^(cy0 - hk + r, cx0 - hk + c) */
                    if (log_abs) {
                        const int b_h = ch + 2 * hk, b_w = cw + 2 * hk;
                        for (int e = tid; e < b_h * b_w; e += GEN_THREADS) {
                            const int r = e / b_w, c = e - r * b_w;
                            const long long by = cy0 - hk + r, bx = cx0 - hk + c;
                            int b = 0;
                            if (by >= 0 && by < Y && bx >= 0 && bx < X) {
                                /* I^(by - hg + a, bx - hg + b) = s_in[r + a][c + b], since hh - hk = hg */
                                for (int a = 0; a < ks; a++) {
                                    int row = 0;
                                    for (int bb = 0; bb < ks; bb++)
                                        row += c_gauss[kt][bb] * (int)s_in[(r + a) * GEN_IN_PITCH + c + bb];
                                    b += c_gauss[kt][a] * row;
                                }
                            } else if (border != FOCUS_STACK_BORDER_ZERO) {
                                b = blur_direct(slice, Y, X, map_coord(by, Y, border), map_coord(bx, X, border), kt,
                                                border);
                            }
                            s_blur[r * GEN_B_PITCH + c] = b;
                        }
                        __syncthreads();
                    }

                    /* 3. score F = |K * B^| on the chunk; the source cell (r + a, c + b) is offset
                     * (a - hk, b - hk) from chunk cell (r, c) in both s_blur and (LAP_ABS, hh = hk) s_in */
                    for (int e = tid; e < ch * cw; e += GEN_THREADS) {
                        const int r = e / cw, c = e - r * cw;
                        long long acc = 0;
                        for (int a = 0; a < ks; a++) {
                            const int sa = c_smooth[kt][a], da = c_diff2[kt][a];
                            for (int b = 0; b < ks; b++) {
                                const int tap = sa * c_diff2[kt][b] + da * c_smooth[kt][b];
                                const int src = log_abs ? s_blur[(r + a) * GEN_B_PITCH + c + b]
                                                        : (int)s_in[(r + a) * GEN_IN_PITCH + c + b];
                                acc += (long long)tap * src;
                            }
                        }
                        s_score[r * GEN_CHUNK + c] = acc < 0 ? -acc : acc;
                    }
                    __syncthreads();

                    /* 4. window */
                    if (hw == 0) { /* the score region is the tile itself: one chunk */
#pragma unroll
                        for (int i = 0; i < GEN_PIX; i++) {
                            const long long py = y0 + ty + 8 * i;
                            if (py >= cy0 && py < cy0 + ch && px >= cx0 && px < cx0 + cw)
                                v[i] = s_score[(int)(py - cy0) * GEN_CHUNK + (int)(px - cx0)];
                        }
                    } else {
                        /* s_hsum[r][t] = sum over the chunk's columns of cx(x0 + t, qx) F(cy0 + r, qx) */
                        for (int e = tid; e < ch * GEN_TILE; e += GEN_THREADS) {
                            const int r = e / GEN_TILE, t = e - r * GEN_TILE;
                            const long long x = x0 + t;
                            if (x > x_end) continue;
                            const long long lo = max_ll(cx0, x - hw), hi = min_ll(cx0 + cw - 1, x + hw);
                            long long sum = 0;
                            for (long long qx = lo; qx <= hi; qx++)
                                sum += window_count(x, qx, hw, X, border) * s_score[r * GEN_CHUNK + (int)(qx - cx0)];
                            s_hsum[r * GEN_TILE + t] = sum;
                        }
                        __syncthreads();
#pragma unroll
                        for (int i = 0; i < GEN_PIX; i++) {
                            const long long py = y0 + ty + 8 * i;
                            if (py > y_end || px > x_end) continue;
                            const long long lo = max_ll(cy0, py - hw), hi = min_ll(cy0 + ch - 1, py + hw);
                            for (long long qy = lo; qy <= hi; qy++)
                                v[i] += window_count(py, qy, hw, Y, border) * s_hsum[(int)(qy - cy0) * GEN_TILE + tx];
                        }
                        /* No barrier needed here: s_hsum is next written after the next chunk's first
                         * barrier; s_score was last read by this chunk's x pass, which ended at the barrier
                         * above, and is next written after at least one barrier of the next chunk (one for
                         * LAP_ABS, two for LOG_ABS). */
                    }
                }
            }

            /* 5. select: strict > over increasing z keeps the first maximum */
#pragma unroll
            for (int i = 0; i < GEN_PIX; i++) {
                const long long py = y0 + ty + 8 * i;
                if (py > y_end || px > x_end) continue;
                if (v[i] > best_v[i]) best_v[i] = v[i], best_z[i] = z, best_in[i] = in_val[i];
                if (focus) focus[(long long)(n * Z + z) * plane + py * X + px] = __ll2float_rn(v[i]) * inv_s;
            }
        }

#pragma unroll
        for (int i = 0; i < GEN_PIX; i++) {
            const long long py = y0 + ty + 8 * i;
            if (py > y_end || px > x_end) continue;
            const long long pix = (long long)n * plane + py * X + px;
            idx[pix] = (uint8_t)best_z[i];
            ff[pix] = (uint16_t)best_in[i];
            if (best) best[pix] = __ll2float_rn(best_v[i]) * inv_s;
        }
    }
    gw_witness_block_done(witness, items, t_start);
}

/* ---------------------------------------------------------------------------------------------------------
 * Launcher
 * ------------------------------------------------------------------------------------------------------- */

extern "C" cudaError_t focus_stack_launch(const focus_stack_params *p, const uint16_t *d_in, uint8_t *d_idx,
                                          uint16_t *d_ff, float *d_best, float *d_focus, gw_witness *d_witness,
                                          cudaStream_t stream)
{
    if (focus_stack_check(p, d_in, d_idx, d_ff) != FOCUS_STACK_OK) return cudaErrorInvalidValue;
    /* An error already pending belongs to an earlier call: return it untouched, before enqueuing anything,
     * so that it is never taken for this launch's and no launch is left half-done. */
    cudaError_t err = cudaPeekAtLastError();
    if (err != cudaSuccess) return err;

    const bool fast = p->ksize == 3 && p->measure == FOCUS_STACK_LOG_ABS && p->border == FOCUS_STACK_BORDER_ZERO &&
                      p->window <= 1 && p->y < FAST_MAX_DIM && p->x < FAST_MAX_DIM;
    const void *kernel = !fast ? (const void *)focus_stack_general_kernel
                         : d_focus ? (const void *)focus_stack_fast_focus_kernel
                                   : (const void *)focus_stack_fast_kernel;
    const int threads = fast ? FAST_THREADS : GEN_THREADS;
    const unsigned long long tile_x = fast ? FAST_TILE_X : GEN_TILE, tile_y = fast ? FAST_TILE_Y : GEN_TILE;
    const unsigned long long tiles_x = ((unsigned long long)p->x + tile_x - 1) / tile_x;
    const unsigned long long tiles_y = ((unsigned long long)p->y + tile_y - 1) / tile_y;
    const unsigned long long n_tiles = (unsigned long long)p->n * tiles_y * tiles_x; /* <= n*y*x < 2^62 */

    /* Enough blocks to fill the (current) device once; each block strides over tiles. */
    int device = 0, sms = 0, per_sm = 0;
    if ((err = cudaGetDevice(&device)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess ||
        (err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0)) != cudaSuccess)
        return err;
    if (sms < 1) sms = 1;
    if (per_sm < 1) per_sm = 1;
    const unsigned long long cap = (unsigned long long)sms * (unsigned long long)per_sm;
    const unsigned blocks = (unsigned)(n_tiles < cap ? n_tiles : cap);

    if (!fast)
        focus_stack_general_kernel<<<blocks, GEN_THREADS, 0, stream>>>(*p, d_in, d_idx, d_ff, d_best, d_focus,
                                                                       tiles_x, tiles_y, n_tiles, d_witness);
    else if (d_focus)
        focus_stack_fast_focus_kernel<<<blocks, FAST_THREADS, 0, stream>>>(
            d_in, d_idx, d_ff, d_best, d_focus, p->z, p->y, p->x, tiles_x, tiles_y, n_tiles, d_witness);
    else
        focus_stack_fast_kernel<<<blocks, FAST_THREADS, 0, stream>>>(d_in, d_idx, d_ff, d_best, p->z, p->y, p->x,
                                                                     tiles_x, tiles_y, n_tiles, d_witness);
    return cudaGetLastError(); /* this launch's error only: nothing was pending on entry */
}
