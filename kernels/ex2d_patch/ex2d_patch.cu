/* SPDX-License-Identifier: MIT
 * ex2d_patch: spectroperfectionism patch extraction, FP64, batched over patches. Contract: ex2d_patch.h;
 * definition: specs/ex2d_patch.md section 5.
 *
 * Shapes (one launch per stage and batch; every block records the witness once, items in brackets):
 *   validate  one 256-thread block per patch: the descriptor rules, then every bin's footprint and every box
 *             pixel (__syncthreads_or); thread 0 atomicMin's (patch << 32 | code) into the check word
 *             [1 per patch checked].
 *   K1        one 128-thread block per table entry: edge terms (erf, He_g G) by one thread per edge, the
 *             Px / Py tables in shared memory, a thread per pixel (<= 8 each), cub::BlockReduce sum [1 per spot].
 *   K3        one 256-thread block per patch. Pass 1: a thread per bin sums y and fluxweight over the bin's
 *             footprint; cub::BlockReduce max gives minweight. Pass 2: a thread per pair a <= b of the n x n
 *             square: overlapping pairs sum (S_a w) S_b over the shared footprint in raster order with
 *             __dmul_rn / __dadd_rn (never contracted into an FMA: bit-identical to the CPU reference built
 *             with -ffp-contract=off), the others write +0.0; the diagonal adds (alpha^2 + 1e-15); [a][b] and
 *             [b][a] get the same bits [overlapping pairs a <= b].
 *   K4        one 256-thread block per patch, L in place in the icov slot. The envelope (first non-zero column
 *             per row, one warp ballot scan per row) bounds all work; the fill of a Cholesky factor stays
 *             inside it, so skipping what lies outside is exact. Left-looking by columns: a warp per row
 *             forms the dot product with the pivot row (staged in shared memory, shuffle reduction), then the
 *             pivot is tested and the column divided. Then L z = y and L^T x = z, a column per step, in
 *             shared memory [1 per patch processed, whatever its status].
 *   K5        one 256-thread block per (patch, core block c), b = core_first + c: X = L^-1 E_b from row b*m
 *             into the xscr slot, one thread per column (independent triangular systems, so no barrier; all
 *             lanes walk the same k range, so L's row is a broadcast and X's rows are coalesced); then
 *             C_bb = X^T X over 32-row chunks staged in shared memory, a thread per upper-triangle entry
 *             (<= 25 accumulators), mirrored [1 per C block of a patch whose status is OK].
 *   K6        one 256-thread block per (patch, c): cyclic Jacobi with the round-robin (circle) ordering, m/2
 *             disjoint rotations per step: parameters, row rotations, column rotations (A and V), the 2 x 2
 *             blocks set exactly (a_pq = 0), four barriers per step. A pair rotates when |a_pq| >
 *             tol sqrt(a_pp a_qq); after each sweep every pair is tested (__syncthreads_or). Eigenvalues below
 *             1e-14 max are raised to it and counted (__syncthreads_count), Q = V diag(u^-1/2) V^T, upper
 *             triangle mirrored. A and V live in 16 m^2 B of opt-in dynamic shared memory [1 per block
 *             diagonalised; none for NOT_POSDEF patches].
 *   K7        one 256-thread block per patch: row sums of each core Q, the model gathered per box pixel (bins
 *             of spectra whose corner range can reach the pixel), then a thread per core bin: flux, ivar,
 *             Rdiags, chi2pix and pixmask_fraction over its footprint [ncore * ncore_wave per patch].
 * Every stage after validation reads the check word first and writes nothing when it is set (its blocks
 * still record, with 0 items). info: K4 writes {status, 0, 0, 0}; K6 blocks of one patch combine theirs with
 * atomics (clipped: add; sweeps_min: CAS, 0 meaning unset; sweeps_max and NOT_CONVERGED: max), so the result
 * does not depend on block order. No other atomics touch results: every output element has one writer, and
 * every sum has a fixed order, so two runs give the same bits.
 *
 * Sizes: n <= 1024 and m <= 112 (ex2d_check_args) bound every shared array; all global offsets are size_t.
 * Memory: the K6 launcher opts in to 16 m^2 B of dynamic shared memory and returns
 * cudaErrorInvalidConfiguration, before launching anything, where the device cannot give it (sm_75: 64 KB
 * for 16 m^2 B plus 4,048 B static, so m <= 61 there; the header lists the limits). A global-memory path
 * would need two more m x m scratch blocks per (patch, block) in the workspace, for the one architecture that
 * lacks the shared memory.
 *
 * Resources (nvcc 13.0 -O3 -lineinfo -Xptxas -v, sm_90; no stack frame and no spills, also on sm_75):
 *   validate 32 registers; K1 42 registers, 9,776 B static shared; K3 64, 24,672 B; K4 40, 25,776 B;
 *   K5 80, 32,768 B; K6 56, 4,048 B static + 16 m^2 B dynamic (87,616 B at m = 74); K7 78, 40,960 B.
 *   (K6 computes cos with rsqrt: 1/sqrt's slow path cost 48 B of spills.)
 */
#include "ex2d_patch.h"

#include <float.h>
#include <limits.h>
#include <stdint.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/functional>

enum {
    VALIDATE_THREADS = 256,
    SPOT_THREADS = 128,
    SPOT_MAX_SIDE = 2 * EX2D_MAX_HALF_SIZE + 1, /* 31 pixels */
    SPOT_PER_THREAD = (SPOT_MAX_SIDE * SPOT_MAX_SIDE + SPOT_THREADS - 1) / SPOT_THREADS, /* 8 */
    SPOT_Y_EDGE_THREAD = 64, /* y edges by the third warp, x edges by the first: both at once */
    NORMAL_THREADS = 256,
    CHOL_THREADS = 256,
    CHOL_WARPS = CHOL_THREADS / 32,
    CHOL_SCAN_ITEMS = EX2D_MAX_N / CHOL_THREADS,
    CBLK_THREADS = 256,
    CBLK_CHUNK = 32, /* rows of X per staged chunk: 32 x 112 doubles = 28 KB */
    CBLK_PAIRS = (EX2D_MAX_M * (EX2D_MAX_M + 1) / 2 + CBLK_THREADS - 1) / CBLK_THREADS, /* 25 */
    JACOBI_THREADS = 256,
    JACOBI_MAX_PAIRS = (EX2D_MAX_M + 1) / 2,
    OUTPUT_THREADS = 256,
};

static_assert(EX2D_MAX_N % CHOL_THREADS == 0, "the envelope scan holds EX2D_MAX_N / CHOL_THREADS items per thread");
static_assert(CBLK_THREADS >= EX2D_MAX_M, "K5 solves one column of X per thread");
static_assert(JACOBI_THREADS >= EX2D_MAX_M, "K6 clips one eigenvalue per thread");
static_assert(2 * EX2D_MAX_HALF_SIZE + 2 <= 32 && SPOT_Y_EDGE_THREAD + 32 <= SPOT_THREADS,
              "K1 computes the nx + 1 x edges and the ny + 1 y edges in two separate warps");

#define FULL_MASK 0xffffffffu

/* ---------------------------------------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------------------------------------- */

/* Set by the validation pass when any patch of the range failed: every later stage then writes nothing. */
static __device__ __forceinline__ bool check_failed(const ex2d_check_word *check) { return check->code != 0; }

/* Table entry of bin k = s*m + w of patch d (the validation pass proved it inside the table). */
static __device__ __forceinline__ long long bin_entry(const ex2d_params *p, const ex2d_patch_desc *d, int k)
{
    const int s = k / p->m, w = k - s * p->m;
    return (long long)(d->spec_first + s) * p->nwave_tab + d->wave_first + w;
}

/* Butterfly sum: every lane ends with the same bits, in a fixed order. */
static __device__ __forceinline__ double warp_sum(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

/* The first column holding a non-zero in row i of the lower triangle, or i when there is none; called by a
 * whole warp. A Cholesky factor has no fill left of it, so it bounds all work on the row. */
static __device__ int row_first_nonzero(const double *row, int i, int lane)
{
    for (int j0 = 0; j0 < i; j0 += 32) {
        const int j = j0 + lane;
        const unsigned nonzero = __ballot_sync(FULL_MASK, j < i && row[j] != 0.0);
        if (nonzero) return j0 + __ffs((int)nonzero) - 1;
    }
    return i;
}

/* ---------------------------------------------------------------------------------------------------------
 * Validation
 * ------------------------------------------------------------------------------------------------------- */

/* The descriptor's own rules, EX2D_ERR_PATCH_TABLE then EX2D_ERR_BOX (the same rules as ex2d_ref_validate),
 * in 64 bits: the fields are arbitrary int32 values. */
static __device__ int patch_desc_error(const ex2d_params *p, const ex2d_patch_desc *d)
{
    const long long spec_first = d->spec_first, nspecpad = d->nspecpad, core_first = d->core_first;
    const long long ncore = d->ncore, wave_first = d->wave_first, ncore_wave = d->ncore_wave;
    const long long out_spec = d->out_spec_first, out_wave = d->out_wave_first;
    const bool table_ok = nspecpad >= 1 && nspecpad <= p->max_nspecpad && spec_first >= 0 &&
                          spec_first + nspecpad <= p->nspec_tab && wave_first >= 0 &&
                          wave_first + p->m <= p->nwave_tab && ncore >= 1 && ncore <= p->max_ncore &&
                          core_first >= 0 && core_first + ncore <= nspecpad && ncore_wave >= 1 &&
                          ncore_wave <= (long long)p->m - 2LL * p->wavepad && out_spec >= 0 &&
                          out_spec + ncore <= p->nspec_out && out_wave >= 0 && out_wave + ncore_wave <= p->nwave_out;
    if (!table_ok) return EX2D_ERR_PATCH_TABLE;
    const bool box_ok = d->xmin >= 0 && d->xmin < d->xmax && d->xmax <= p->npix_x && d->ymin >= 0 &&
                        d->ymin < d->ymax && d->ymax <= p->npix_y &&
                        (long long)(d->xmax - d->xmin) * (d->ymax - d->ymin) <= p->max_box_pixels;
    return box_ok ? 0 : EX2D_ERR_BOX;
}

__global__ void __launch_bounds__(VALIDATE_THREADS)
    ex2d_validate_kernel(ex2d_params p, ex2d_inputs in, int patch_first, ex2d_check_word *check, gw_witness *witness)
{
    const unsigned long long t_start = gw_witness_clock(witness);
    const int tid = (int)threadIdx.x, patch = patch_first + (int)blockIdx.x;
    const ex2d_patch_desc d = in.patches[patch];
    /* Every thread evaluates the same rules on the same descriptor, so code is uniform across the block and
     * the barriers below are reached by all threads or by none. Rules run in enum order and stop at the first
     * failure, so an out-of-table descriptor is never used to index the table or the image. */
    int code = patch_desc_error(&p, &d);
    if (!code) {
        const int n = d.nspecpad * p.m, nx = 2 * p.hsizex + 1, ny = 2 * p.hsizey + 1;
        int outside = 0;
        for (int k = tid; k < n; k += VALIDATE_THREADS) {
            const long long e = bin_entry(&p, &d, k);
            const int xc = in.psf_xc[e], yc = in.psf_yc[e];
            /* xc + nx <= xmax, written so that nothing overflows for any int32 corner */
            if (xc < d.xmin || xc > d.xmax - nx || yc < d.ymin || yc > d.ymax - ny) outside = 1;
        }
        if (__syncthreads_or(outside)) code = EX2D_ERR_FOOTPRINT;
    }
    if (!code) {
        const int box_x = d.xmax - d.xmin, box_pixels = box_x * (d.ymax - d.ymin);
        int bad_ivar = 0, bad_image = 0;
        for (int q = tid; q < box_pixels; q += VALIDATE_THREADS) {
            const size_t at = (size_t)(d.ymin + q / box_x) * (size_t)p.npix_x + (size_t)(d.xmin + q % box_x);
            const double iv = in.ivar[at], im = in.image[at];
            if (!(iv >= 0.0 && iv <= DBL_MAX)) bad_ivar = 1; /* negative, NaN or +inf */
            if (!(im >= -DBL_MAX && im <= DBL_MAX)) bad_image = 1;
        }
        bad_ivar = __syncthreads_or(bad_ivar);
        bad_image = __syncthreads_or(bad_image);
        code = bad_ivar ? EX2D_ERR_IVAR : bad_image ? EX2D_ERR_IMAGE : 0;
    }
    /* The check word as one 64-bit value: patch in the high half, code in the low half (the struct's
     * {code, patch} on a little-endian device). "None" = {0, -1} is above every failure, so the minimum is
     * the lowest failing patch and, within it, its first rule. */
    if (code && tid == 0)
        atomicMin((unsigned long long *)check, ((unsigned long long)(unsigned)patch << 32) | (unsigned)code);
    gw_witness_block_done(witness, 1, t_start);
}

/* ---------------------------------------------------------------------------------------------------------
 * K1 spots
 * ------------------------------------------------------------------------------------------------------- */

__global__ void __launch_bounds__(SPOT_THREADS)
    ex2d_spots_kernel(ex2d_params p, ex2d_inputs in, int entry_first, double *spots, gw_witness *witness)
{
    typedef cub::BlockReduce<double, SPOT_THREADS> block_sum_t;
    __shared__ typename block_sum_t::TempStorage sum_storage;
    __shared__ double s_erf_x[SPOT_MAX_SIDE + 1], s_erf_y[SPOT_MAX_SIDE + 1]; /* erf(u/sqrt 2) per edge */
    __shared__ double s_hg_x[EX2D_MAX_DEGREE][SPOT_MAX_SIDE + 1];             /* He_g(u) G(u) per edge, g < gx */
    __shared__ double s_hg_y[EX2D_MAX_DEGREE][SPOT_MAX_SIDE + 1];
    __shared__ double s_px[EX2D_MAX_DEGREE + 1][SPOT_MAX_SIDE], s_py[EX2D_MAX_DEGREE + 1][SPOT_MAX_SIDE];
    __shared__ double s_c[(EX2D_MAX_DEGREE + 1) * (EX2D_MAX_DEGREE + 1)];
    __shared__ double s_total;

    const unsigned long long t_start = gw_witness_clock(witness);
    const int tid = (int)threadIdx.x;
    const long long e = (long long)entry_first + blockIdx.x;
    const int nx = 2 * p.hsizex + 1, ny = 2 * p.hsizey + 1, ncoef = (p.gx + 1) * (p.gy + 1);

    /* Edge e of the pixel grid, u_e = (e - hsize - 0.5 - offset) / sigma: pixel q lies between edges q and
     * q + 1. Hermite polynomials run forward: He_0 = 1, He_1 = u, He_k = u He_(k-1) - (k-1) He_(k-2). */
    const bool x_edge = tid < nx + 1;
    const bool y_edge = tid >= SPOT_Y_EDGE_THREAD && tid < SPOT_Y_EDGE_THREAD + ny + 1;
    if (x_edge || y_edge) {
        const int edge = x_edge ? tid : tid - SPOT_Y_EDGE_THREAD;
        const int hsize = x_edge ? p.hsizex : p.hsizey, degree = x_edge ? p.gx : p.gy;
        const double offset = x_edge ? in.psf_dx[e] : in.psf_dy[e];
        const double sigma = x_edge ? in.psf_sigx[e] : in.psf_sigy[e];
        const double u = ((double)(edge - hsize) - 0.5 - offset) / sigma;
        const double gauss = exp(-0.5 * u * u) * 0.398942280401432677939946059934; /* 1/sqrt(2 pi) */
        (x_edge ? s_erf_x : s_erf_y)[edge] = erf(u * 0.707106781186547524400844362105);
        double he_prev = 0.0, he = 1.0;
        for (int g = 0; g < degree; g++) {
            (x_edge ? s_hg_x : s_hg_y)[g][edge] = he * gauss;
            const double he_next = u * he - (double)g * he_prev;
            he_prev = he;
            he = he_next;
        }
    }
    if (tid < ncoef) s_c[tid] = in.psf_c[e * ncoef + tid];
    __syncthreads();

    /* P_0[q] = (erf(u_(q+1)) - erf(u_q)) / 2; P_g[q] = He_(g-1) G at u_q minus the same at u_(q+1). */
    for (int t = tid; t < (p.gx + 1) * nx; t += SPOT_THREADS) {
        const int g = t / nx, q = t - g * nx;
        s_px[g][q] = g == 0 ? 0.5 * (s_erf_x[q + 1] - s_erf_x[q]) : s_hg_x[g - 1][q] - s_hg_x[g - 1][q + 1];
    }
    for (int t = tid; t < (p.gy + 1) * ny; t += SPOT_THREADS) {
        const int g = t / ny, q = t - g * ny;
        s_py[g][q] = g == 0 ? 0.5 * (s_erf_y[q + 1] - s_erf_y[q]) : s_hg_y[g - 1][q] - s_hg_y[g - 1][q + 1];
    }
    __syncthreads();

    /* spot[iy][ix] = sum_i Px_i[ix] (sum_j c_ij Py_j[iy]); negatives become +0.0; then divided by the sum. */
    double value[SPOT_PER_THREAD];
    double local = 0.0;
#pragma unroll
    for (int r = 0; r < SPOT_PER_THREAD; r++) {
        const int q = tid + r * SPOT_THREADS;
        value[r] = 0.0;
        if (q < nx * ny) {
            const int iy = q / nx, ix = q - iy * nx;
            double v = 0.0;
            for (int i = 0; i <= p.gx; i++) {
                double inner = 0.0;
                for (int j = 0; j <= p.gy; j++) inner += s_c[i * (p.gy + 1) + j] * s_py[j][iy];
                v += s_px[i][ix] * inner;
            }
            value[r] = v <= 0.0 ? 0.0 : v;
            local += value[r];
        }
    }
    const double total = block_sum_t(sum_storage).Sum(local);
    if (tid == 0) s_total = total;
    __syncthreads();
    double *spot = spots + (size_t)e * (size_t)(nx * ny);
#pragma unroll
    for (int r = 0; r < SPOT_PER_THREAD; r++) {
        const int q = tid + r * SPOT_THREADS;
        if (q < nx * ny) spot[q] = value[r] / s_total;
    }
    gw_witness_block_done(witness, 1, t_start);
}

/* ---------------------------------------------------------------------------------------------------------
 * K3 normal equations
 * ------------------------------------------------------------------------------------------------------- */

__global__ void __launch_bounds__(NORMAL_THREADS)
    ex2d_normal_kernel(ex2d_params p, ex2d_inputs in, const double *spots, int patch_first, ex2d_workspace ws,
                       gw_witness *witness)
{
    typedef cub::BlockReduce<double, NORMAL_THREADS> block_max_t;
    typedef cub::BlockReduce<unsigned long long, NORMAL_THREADS> block_count_t;
    __shared__ union {
        typename block_max_t::TempStorage max;
        typename block_count_t::TempStorage count;
    } reduce_storage;
    __shared__ int s_xc[EX2D_MAX_N], s_yc[EX2D_MAX_N];
    __shared__ long long s_entry[EX2D_MAX_N];
    __shared__ double s_fluxweight[EX2D_MAX_N];
    __shared__ double s_minweight;

    const unsigned long long t_start = gw_witness_clock(witness);
    unsigned long long block_pairs = 0;
    if (!check_failed(ws.check)) { /* uniform: one word for the whole range */
        const int tid = (int)threadIdx.x, slot = (int)blockIdx.x;
        const ex2d_patch_desc d = in.patches[patch_first + slot];
        const int n = d.nspecpad * p.m, nx = 2 * p.hsizex + 1, ny = 2 * p.hsizey + 1;
        const size_t ld = (size_t)p.max_nspecpad * (size_t)p.m, spot_pixels = (size_t)(nx * ny);
        double *icov = ws.icov + (size_t)slot * ws.icov_stride;
        double *y = ws.y + (size_t)slot * ws.vec_stride, *fluxweight = ws.fluxweight + (size_t)slot * ws.vec_stride;

        for (int k = tid; k < n; k += NORMAL_THREADS) {
            const long long e = bin_entry(&p, &d, k);
            s_entry[k] = e;
            s_xc[k] = in.psf_xc[e];
            s_yc[k] = in.psf_yc[e];
        }
        __syncthreads();

        /* Pass 1, a thread per bin: y_a = sum (S_a w) img, fluxweight_a = sum S_a w over the footprint in
         * raster order (rows of the spot are image rows), one rounding per operation. */
        double max_fluxweight = 0.0; /* every fluxweight is >= +0.0 (spots and ivar are) */
        for (int a = tid; a < n; a += NORMAL_THREADS) {
            const double *spot = spots + (size_t)s_entry[a] * spot_pixels;
            double fw = 0.0, ya = 0.0;
            for (int iy = 0; iy < ny; iy++) {
                const size_t row = (size_t)(s_yc[a] + iy) * (size_t)p.npix_x + (size_t)s_xc[a];
                for (int ix = 0; ix < nx; ix++) {
                    const double sw = __dmul_rn(spot[iy * nx + ix], in.ivar[row + ix]);
                    fw = __dadd_rn(fw, sw);
                    ya = __dadd_rn(ya, __dmul_rn(sw, in.image[row + ix]));
                }
            }
            y[a] = ya;
            fluxweight[a] = fw;
            s_fluxweight[a] = fw;
            max_fluxweight = fmax(max_fluxweight, fw);
        }
        /* a maximum is exact in any order */
        const double block_max = block_max_t(reduce_storage.max).Reduce(max_fluxweight, cuda::maximum<>{});
        if (tid == 0) s_minweight = __dmul_rn(1e-4, block_max);
        __syncthreads(); /* s_fluxweight and s_minweight complete; reduce_storage free again */
        const double minweight = s_minweight;

        /* Pass 2, a thread per element of the upper triangle (a <= b), n <= 1024 so n*n fits an int. */
        unsigned long long pairs = 0;
        for (int e = tid; e < n * n; e += NORMAL_THREADS) {
            const int a = e / n, b = e - a * n;
            if (a > b) continue; /* the mirror of (b, a) */
            const int xa = s_xc[a], ya = s_yc[a], xb = s_xc[b], yb = s_yc[b];
            double v = 0.0;
            if (abs(xa - xb) < nx && abs(ya - yb) < ny) {
                pairs++;
                const double *sa = spots + (size_t)s_entry[a] * spot_pixels;
                const double *sb = spots + (size_t)s_entry[b] * spot_pixels;
                const int x0 = max(xa, xb), x1 = min(xa, xb) + nx, y0 = max(ya, yb), y1 = min(ya, yb) + ny;
                for (int py = y0; py < y1; py++) {
                    const double *w_row = in.ivar + (size_t)py * (size_t)p.npix_x;
                    const int ra = (py - ya) * nx - xa, rb = (py - yb) * nx - xb; /* + px: in-spot index */
                    for (int px = x0; px < x1; px++)
                        v = __dadd_rn(v, __dmul_rn(__dmul_rn(sa[ra + px], w_row[px]), sb[rb + px]));
                }
            }
            if (a == b) {
                const double fw = s_fluxweight[a];
                const double alpha = fw < minweight ? __dsub_rn(minweight, fw) : p.regularize;
                v = __dadd_rn(v, __dadd_rn(__dmul_rn(alpha, alpha), 1e-15));
            }
            icov[(size_t)a * ld + (size_t)b] = v;
            icov[(size_t)b * ld + (size_t)a] = v;
        }
        block_pairs = block_count_t(reduce_storage.count).Sum(pairs); /* valid in thread 0, which records */
    }
    gw_witness_block_done(witness, block_pairs, t_start);
}

/* ---------------------------------------------------------------------------------------------------------
 * K4 Cholesky and the two triangular solves
 * ------------------------------------------------------------------------------------------------------- */

__global__ void __launch_bounds__(CHOL_THREADS)
    ex2d_cholesky_kernel(ex2d_params p, const ex2d_patch_desc *patches, int patch_first, ex2d_workspace ws,
                         ex2d_patch_info *info, gw_witness *witness)
{
    typedef cub::BlockScan<int, CHOL_THREADS> block_scan_t;
    __shared__ typename block_scan_t::TempStorage scan_storage;
    __shared__ int s_first[EX2D_MAX_N]; /* envelope: first non-zero column of row i */
    __shared__ int s_last[EX2D_MAX_N];  /* last row whose envelope reaches column j (>= j) */
    __shared__ double s_vec[EX2D_MAX_N]; /* the pivot row of L while factorising; then z, solved in place */
    __shared__ double s_diag[EX2D_MAX_N];
    __shared__ double s_pivot;

    const unsigned long long t_start = gw_witness_clock(witness);
    unsigned long long processed = 0;
    if (!check_failed(ws.check)) {
        const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
        const int slot = (int)blockIdx.x, patch = patch_first + slot;
        const int n = patches[patch].nspecpad * p.m;
        const size_t ld = (size_t)p.max_nspecpad * (size_t)p.m;
        double *a = ws.icov + (size_t)slot * ws.icov_stride;

        /* The envelope, from iCov's lower triangle. s_last[j] = max {i : first[i] <= j}: each row marks its
         * first column, then a running maximum (cub::BlockScan) carries the marks to the right. */
        for (int i = warp; i < n; i += CHOL_WARPS) {
            const int first = row_first_nonzero(a + (size_t)i * ld, i, lane);
            if (lane == 0) s_first[i] = first;
        }
        for (int j = tid; j < n; j += CHOL_THREADS) s_last[j] = -1;
        __syncthreads();
        for (int i = tid; i < n; i += CHOL_THREADS) atomicMax(&s_last[s_first[i]], i);
        __syncthreads();
        int marks[CHOL_SCAN_ITEMS];
        for (int q = 0; q < CHOL_SCAN_ITEMS; q++) {
            const int j = tid * CHOL_SCAN_ITEMS + q;
            marks[q] = j < n ? s_last[j] : -1;
        }
        block_scan_t(scan_storage).InclusiveScan(marks, marks, cuda::maximum<>{});
        __syncthreads(); /* every mark read before any is overwritten */
        for (int q = 0; q < CHOL_SCAN_ITEMS; q++) {
            const int j = tid * CHOL_SCAN_ITEMS + q;
            if (j < n) s_last[j] = marks[q];
        }
        __syncthreads();

        /* Left-looking by columns: v_i = A_ij - sum_k L_ik L_jk for rows i >= j of the envelope, then
         * L_jj = sqrt(v_j) and L_ij = v_i / L_jj. Columns before j are final, so row j is staged once. */
        int status = EX2D_PATCH_OK;
        for (int j = 0; j < n; j++) {
            const int first_j = s_first[j], last = s_last[j];
            for (int k = first_j + tid; k < j; k += CHOL_THREADS) s_vec[k] = a[(size_t)j * ld + k];
            __syncthreads();
            for (int i = j + warp; i <= last; i += CHOL_WARPS) {
                const int first_i = s_first[i];
                if (first_i > j) continue; /* outside the envelope: L_ij = 0 = A_ij already */
                const double *row = a + (size_t)i * ld;
                double dot = 0.0;
                for (int k = max(first_i, first_j) + lane; k < j; k += 32) dot = fma(row[k], s_vec[k], dot);
                dot = warp_sum(dot);
                if (lane == 0) {
                    const double v = row[j] - dot;
                    if (i == j)
                        s_pivot = v;
                    else
                        a[(size_t)i * ld + j] = v;
                }
            }
            __syncthreads();
            const double pivot = s_pivot; /* the same value in every thread: the break is uniform */
            if (!(pivot > 0.0 && pivot <= DBL_MAX)) {
                status = EX2D_PATCH_NOT_POSDEF;
                break;
            }
            const double l_jj = sqrt(pivot);
            for (int i = j + 1 + tid; i <= last; i += CHOL_THREADS)
                if (s_first[i] <= j) a[(size_t)i * ld + j] /= l_jj;
            if (tid == 0) {
                a[(size_t)j * ld + j] = l_jj;
                s_diag[j] = l_jj;
            }
            __syncthreads(); /* column j complete before row j + 1 (which holds L_(j+1) j) is staged */
        }

        if (status == EX2D_PATCH_OK) {
            const double *y = ws.y + (size_t)slot * ws.vec_stride;
            double *xflux = ws.xflux + (size_t)slot * ws.vec_stride;
            for (int i = tid; i < n; i += CHOL_THREADS) s_vec[i] = y[i];
            __syncthreads();
            /* L z = y by columns: s_vec[j] is final when step j starts; it is replaced by z_j only after the
             * step's barrier, when no thread reads it any more. */
            for (int j = 0; j < n; j++) {
                const double z_j = s_vec[j] / s_diag[j];
                for (int i = j + 1 + tid; i <= s_last[j]; i += CHOL_THREADS)
                    if (s_first[i] <= j) s_vec[i] -= a[(size_t)i * ld + j] * z_j;
                __syncthreads();
                if (tid == 0) s_vec[j] = z_j;
            }
            __syncthreads();
            /* L^T x = z by rows of L (contiguous): step i reads s_vec[i] and updates only k < i. */
            for (int i = n - 1; i >= 0; i--) {
                const double x_i = s_vec[i] / s_diag[i];
                const double *row = a + (size_t)i * ld;
                for (int k = s_first[i] + tid; k < i; k += CHOL_THREADS) s_vec[k] -= row[k] * x_i;
                if (tid == 0) xflux[i] = x_i;
                __syncthreads();
            }
        }
        if (tid == 0) {
            ex2d_patch_info result = {status, 0, 0, 0};
            info[patch] = result;
        }
        processed = 1;
    }
    gw_witness_block_done(witness, processed, t_start);
}

/* ---------------------------------------------------------------------------------------------------------
 * K5 diagonal blocks of iCov^-1
 * ------------------------------------------------------------------------------------------------------- */

__global__ void __launch_bounds__(CBLK_THREADS)
    ex2d_cblocks_kernel(ex2d_params p, const ex2d_patch_desc *patches, int patch_first, ex2d_workspace ws,
                        const ex2d_patch_info *info, gw_witness *witness)
{
    __shared__ int s_first[EX2D_MAX_N];
    __shared__ double s_x[CBLK_CHUNK * EX2D_MAX_M];

    const unsigned long long t_start = gw_witness_clock(witness);
    unsigned long long blocks_done = 0;
    const int slot = (int)blockIdx.x / p.max_ncore, c = (int)blockIdx.x % p.max_ncore;
    /* all three conditions are uniform across the block; K4 left OK or NOT_POSDEF */
    if (!check_failed(ws.check) && c < patches[patch_first + slot].ncore &&
        info[patch_first + slot].status == EX2D_PATCH_OK) {
        const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
        const ex2d_patch_desc d = patches[patch_first + slot];
        const int m = p.m, n = d.nspecpad * m, r0 = (d.core_first + c) * m, rows = n - r0;
        const size_t ld = (size_t)p.max_nspecpad * (size_t)m;
        const double *l = ws.icov + (size_t)slot * ws.icov_stride;
        double *x = ws.xscr + (size_t)slot * ws.xscr_stride + (size_t)c * ld * (size_t)m; /* row r - r0 */
        double *cblk = ws.cblk + (size_t)slot * ws.blk_stride + (size_t)c * (size_t)(m * m);

        for (int r = r0 + warp; r < n; r += CBLK_THREADS / 32) {
            const int first = row_first_nonzero(l + (size_t)r * ld, r, lane);
            if (lane == 0) s_first[r] = first;
        }
        __syncthreads();

        /* X = L^-1 E_b: column col is the solution of L x = e_(r0 + col); rows above r0 are zero and not
         * stored. Each thread owns one column and reads only what it wrote, so no barrier is needed. Every
         * lane runs the same k range (X is exactly +0.0 above its unit row), which keeps L's row a broadcast. */
        if (tid < m) {
            const int col = tid;
            for (int r = r0; r < n; r++) {
                const double *row = l + (size_t)r * ld;
                double acc = r == r0 + col ? 1.0 : 0.0;
                for (int k = max(s_first[r], r0); k < r; k++) acc = fma(-row[k], x[(size_t)(k - r0) * m + col], acc);
                x[(size_t)(r - r0) * m + col] = acc / row[r];
            }
        }
        __syncthreads(); /* X complete and visible to the whole block */

        /* C = X^T X: thread tid owns upper-triangle entries tid, tid + T, ... (row c1, c2 = c1 + off),
         * walked the same way for every chunk. */
        double acc[CBLK_PAIRS];
#pragma unroll
        for (int q = 0; q < CBLK_PAIRS; q++) acc[q] = 0.0;
        for (int r = 0; r < rows; r += CBLK_CHUNK) {
            const int chunk = min((int)CBLK_CHUNK, rows - r);
            for (int e = tid; e < chunk * m; e += CBLK_THREADS) s_x[e] = x[(size_t)r * m + e];
            __syncthreads();
            int c1 = 0, off = tid;
            while (c1 < m && off >= m - c1) off -= m - c1, c1++;
#pragma unroll
            for (int q = 0; q < CBLK_PAIRS; q++) {
                if (c1 < m) { /* c1 == m: past the last entry */
                    const int c2 = c1 + off;
                    double sum = acc[q];
                    for (int rr = 0; rr < chunk; rr++) sum = fma(s_x[rr * m + c1], s_x[rr * m + c2], sum);
                    acc[q] = sum;
                }
                off += CBLK_THREADS;
                while (c1 < m && off >= m - c1) off -= m - c1, c1++;
            }
            __syncthreads(); /* the next chunk overwrites s_x */
        }
        int c1 = 0, off = tid;
        while (c1 < m && off >= m - c1) off -= m - c1, c1++;
#pragma unroll
        for (int q = 0; q < CBLK_PAIRS; q++) {
            if (c1 < m) {
                const int c2 = c1 + off;
                cblk[c1 * m + c2] = acc[q];
                cblk[c2 * m + c1] = acc[q];
            }
            off += CBLK_THREADS;
            while (c1 < m && off >= m - c1) off -= m - c1, c1++;
        }
        blocks_done = 1;
    }
    gw_witness_block_done(witness, blocks_done, t_start);
}

/* ---------------------------------------------------------------------------------------------------------
 * K6 Q_b = C_bb^(-1/2) by cyclic Jacobi
 * ------------------------------------------------------------------------------------------------------- */

/* t = tan(phi) of the rotation that zeroes a_pq (Rutishauser): the smaller root, so |phi| <= pi/4. Past
 * |theta| = 1e150, theta^2 would overflow; t = 1/(2 theta) is then exact to rounding. */
static __device__ __forceinline__ double rotation_tangent(double app, double aqq, double apq)
{
    const double theta = (aqq - app) / (2.0 * apq);
    if (fabs(theta) > 1e150) return 0.5 / theta;
    return copysign(1.0, theta) / (fabs(theta) + sqrt(1.0 + theta * theta));
}

__global__ void __launch_bounds__(JACOBI_THREADS)
    ex2d_jacobi_kernel(ex2d_params p, const ex2d_patch_desc *patches, int patch_first, ex2d_workspace ws,
                       ex2d_patch_info *info, gw_witness *witness)
{
    extern __shared__ double s_dynamic[]; /* A then V, m x m each, row-major */
    __shared__ double s_cos[JACOBI_MAX_PAIRS], s_sin[JACOBI_MAX_PAIRS], s_tan[JACOBI_MAX_PAIRS];
    __shared__ double s_app[JACOBI_MAX_PAIRS], s_aqq[JACOBI_MAX_PAIRS], s_apq[JACOBI_MAX_PAIRS];
    __shared__ int s_p[JACOBI_MAX_PAIRS], s_q[JACOBI_MAX_PAIRS]; /* s_p = -1: the pair does not rotate */
    __shared__ double s_scale[EX2D_MAX_M];                         /* u^(-1/2) */
    __shared__ double s_umax;

    const unsigned long long t_start = gw_witness_clock(witness);
    unsigned long long blocks_done = 0;
    const int slot = (int)blockIdx.x / p.max_ncore, c = (int)blockIdx.x % p.max_ncore;
    const int patch = patch_first + slot;
    /* NOT_POSDEF, not "!= OK": a block of the same patch that finished first may already have set
     * NOT_CONVERGED, and reading that would make this block's work depend on the schedule */
    if (!check_failed(ws.check) && c < patches[patch].ncore && info[patch].status != EX2D_PATCH_NOT_POSDEF) {
        const int tid = (int)threadIdx.x, m = p.m;
        const double tol = p.jacobi_tol;
        double *A = s_dynamic, *V = s_dynamic + m * m;
        const size_t block_at = (size_t)slot * ws.blk_stride + (size_t)c * (size_t)(m * m);
        for (int e = tid; e < m * m; e += JACOBI_THREADS) {
            A[e] = ws.cblk[block_at + e];
            V[e] = (e / m == e % m) ? 1.0 : 0.0;
        }
        __syncthreads();

        /* Circle ordering on M = m rounded up to even players: player M-1 stays, the others turn. In step r
         * pair 0 is (M-1, r) and pair k is ((r+k) mod (M-1), (r-k) mod (M-1)); over the M-1 steps of a sweep
         * every pair meets once. Player m (odd m only) is a bye. */
        const int M = m + (m & 1), npair = M / 2;
        int sweeps = 0, converged = 0;
        while (!converged && sweeps < p.jacobi_max_sweeps) {
            sweeps++;
            for (int step = 0; step < M - 1; step++) {
                if (tid < npair) {
                    const int u = tid == 0 ? M - 1 : (step + tid) % (M - 1);
                    const int v = tid == 0 ? step : (step - tid + M - 1) % (M - 1);
                    const int pi = min(u, v), qi = max(u, v);
                    int rotate = 0;
                    if (qi < m) {
                        const double apq = A[pi * m + qi], app = A[pi * m + pi], aqq = A[qi * m + qi];
                        if (fabs(apq) > tol * sqrt(app * aqq)) {
                            const double t = rotation_tangent(app, aqq, apq);
                            const double cs = rsqrt(1.0 + t * t); /* within 1 ulp */
                            s_cos[tid] = cs, s_sin[tid] = t * cs, s_tan[tid] = t;
                            s_app[tid] = app, s_aqq[tid] = aqq, s_apq[tid] = apq;
                            rotate = 1;
                        }
                    }
                    s_p[tid] = rotate ? pi : -1;
                    s_q[tid] = qi;
                }
                __syncthreads();
                /* rows p and q of A (each element has one owner: the pairs are disjoint) */
                for (int e = tid; e < npair * m; e += JACOBI_THREADS) {
                    const int k = e / m, j = e - k * m, pi = s_p[k];
                    if (pi < 0) continue;
                    const int qi = s_q[k];
                    const double cs = s_cos[k], sn = s_sin[k], ap = A[pi * m + j], aq = A[qi * m + j];
                    A[pi * m + j] = cs * ap - sn * aq;
                    A[qi * m + j] = sn * ap + cs * aq;
                }
                __syncthreads();
                /* columns p and q of A and V */
                for (int e = tid; e < npair * m; e += JACOBI_THREADS) {
                    const int k = e / m, i = e - k * m, pi = s_p[k];
                    if (pi < 0) continue;
                    const int qi = s_q[k];
                    const double cs = s_cos[k], sn = s_sin[k];
                    const double ap = A[i * m + pi], aq = A[i * m + qi], vp = V[i * m + pi], vq = V[i * m + qi];
                    A[i * m + pi] = cs * ap - sn * aq;
                    A[i * m + qi] = sn * ap + cs * aq;
                    V[i * m + pi] = cs * vp - sn * vq;
                    V[i * m + qi] = sn * vp + cs * vq;
                }
                __syncthreads();
                /* each rotated 2 x 2 block, exactly: the pivot becomes 0 (not rounding noise) */
                if (tid < npair && s_p[tid] >= 0) {
                    const int pi = s_p[tid], qi = s_q[tid];
                    const double t = s_tan[tid], apq = s_apq[tid];
                    A[pi * m + pi] = s_app[tid] - t * apq;
                    A[qi * m + qi] = s_aqq[tid] + t * apq;
                    A[pi * m + qi] = 0.0;
                    A[qi * m + pi] = 0.0;
                }
                __syncthreads();
            }
            /* converged when every pair passes; written as a negation so that NaN never passes */
            int unconverged = 0;
            for (int e = tid; e < m * m; e += JACOBI_THREADS) {
                const int i = e / m, j = e - i * m;
                if (i < j && !(fabs(A[e]) <= tol * sqrt(A[i * m + i] * A[j * m + j]))) unconverged = 1;
            }
            converged = !__syncthreads_or(unconverged);
        }

        if (tid == 0) {
            double umax = A[0];
            for (int i = 1; i < m; i++) umax = fmax(umax, A[i * m + i]);
            s_umax = umax;
        }
        __syncthreads();
        /* clip as gpu_specter's clipped_eigh: u < 1e-14 max(u) is raised to 1e-14 max(u) */
        const double floor_u = 1e-14 * s_umax;
        const int low = tid < m && A[tid * m + tid] < floor_u;
        if (tid < m) s_scale[tid] = 1.0 / sqrt(low ? floor_u : A[tid * m + tid]);
        const int clipped = __syncthreads_count(low); /* also the barrier that publishes s_scale */

        /* Q = V diag(u^-1/2) V^T, upper triangle mirrored so that Q is exactly symmetric */
        double *q = ws.qblk + block_at;
        for (int e = tid; e < m * m; e += JACOBI_THREADS) {
            const int i = e / m, j = e - i * m;
            if (i > j) continue;
            double sum = 0.0;
            for (int k = 0; k < m; k++) sum = fma(V[i * m + k] * s_scale[k], V[j * m + k], sum);
            q[i * m + j] = sum;
            q[j * m + i] = sum;
        }
        if (tid == 0) {
            ex2d_patch_info *inf = &info[patch];
            if (clipped) atomicAdd((int *)&inf->clipped, clipped);
            atomicMax((int *)&inf->sweeps_max, sweeps);
            int seen = atomicAdd((int *)&inf->sweeps_min, 0);
            while (seen == 0 || sweeps < seen) { /* 0: no block of this patch has reported yet */
                const int before = atomicCAS((int *)&inf->sweeps_min, seen, sweeps);
                if (before == seen) break;
                seen = before;
            }
            if (!converged) atomicMax((int *)&inf->status, EX2D_PATCH_NOT_CONVERGED);
        }
        blocks_done = 1;
    }
    gw_witness_block_done(witness, blocks_done, t_start);
}

/* ---------------------------------------------------------------------------------------------------------
 * K7 frame outputs
 * ------------------------------------------------------------------------------------------------------- */

__global__ void __launch_bounds__(OUTPUT_THREADS)
    ex2d_outputs_kernel(ex2d_params p, ex2d_inputs in, const double *spots, int patch_first, ex2d_workspace ws,
                        ex2d_outputs out, gw_witness *witness)
{
    __shared__ int s_xc[EX2D_MAX_N], s_yc[EX2D_MAX_N];
    __shared__ double s_xflux[EX2D_MAX_N];
    __shared__ double s_rowsum[EX2D_MAX_N]; /* s_i of core block c, row i, at c*m + i (max_ncore*m <= n_max) */
    __shared__ int s_xlo[EX2D_MAX_N], s_xhi[EX2D_MAX_N], s_ylo[EX2D_MAX_N], s_yhi[EX2D_MAX_N]; /* per spectrum */

    const unsigned long long t_start = gw_witness_clock(witness);
    unsigned long long bins_written = 0;
    if (!check_failed(ws.check)) {
        const int tid = (int)threadIdx.x, slot = (int)blockIdx.x, patch = patch_first + slot;
        const ex2d_patch_desc d = in.patches[patch];
        const int m = p.m, n = d.nspecpad * m, nx = 2 * p.hsizex + 1, ny = 2 * p.hsizey + 1;
        const int ndiag = p.ndiag, ndiags = 2 * ndiag + 1;
        const int box_x = d.xmax - d.xmin, box_pixels = box_x * (d.ymax - d.ymin);
        const size_t spot_pixels = (size_t)(nx * ny);
        const bool ok = out.info[patch].status == EX2D_PATCH_OK; /* uniform */
        const double *qblk = ws.qblk + (size_t)slot * ws.blk_stride;
        double *model = ws.model + (size_t)slot * ws.model_stride;

        for (int k = tid; k < n; k += OUTPUT_THREADS) {
            const long long e = bin_entry(&p, &d, k);
            s_xc[k] = in.psf_xc[e];
            s_yc[k] = in.psf_yc[e];
            if (ok) s_xflux[k] = ws.xflux[(size_t)slot * ws.vec_stride + k];
        }
        __syncthreads();
        for (int s = tid; s < d.nspecpad; s += OUTPUT_THREADS) {
            int xlo = INT_MAX, xhi = INT_MIN, ylo = INT_MAX, yhi = INT_MIN;
            for (int w = 0; w < m; w++) {
                const int xc = s_xc[s * m + w], yc = s_yc[s * m + w];
                xlo = min(xlo, xc), xhi = max(xhi, xc), ylo = min(ylo, yc), yhi = max(yhi, yc);
            }
            s_xlo[s] = xlo, s_xhi[s] = xhi, s_ylo[s] = ylo, s_yhi[s] = yhi;
        }
        if (ok) {
            for (int e = tid; e < d.ncore * m; e += OUTPUT_THREADS) {
                const double *q_row = qblk + (size_t)e * m; /* block e / m, row e % m */
                double sum = 0.0;
                for (int j = 0; j < m; j++) sum += q_row[j];
                s_rowsum[e] = sum;
            }
        }
        __syncthreads();

        /* model_p = sum_k A_pk xflux_k over every bin of the patch whose spot covers p, in k order */
        if (ok) {
            for (int q = tid; q < box_pixels; q += OUTPUT_THREADS) {
                const int py = d.ymin + q / box_x, px = d.xmin + q % box_x;
                double sum = 0.0;
                for (int s = 0; s < d.nspecpad; s++) {
                    if (px < s_xlo[s] || px >= s_xhi[s] + nx || py < s_ylo[s] || py >= s_yhi[s] + ny) continue;
                    for (int k = s * m; k < (s + 1) * m; k++) {
                        const int ix = px - s_xc[k], iy = py - s_yc[k];
                        if (ix < 0 || ix >= nx || iy < 0 || iy >= ny) continue;
                        const double *spot = spots + (size_t)bin_entry(&p, &d, k) * spot_pixels;
                        sum = fma(spot[iy * nx + ix], s_xflux[k], sum);
                    }
                }
                model[q] = sum;
            }
            __syncthreads(); /* the model is read back below, across threads */
        }

        /* a thread per core bin: its frame element, its Rdiags column and its footprint sums */
        for (int e = tid; e < d.ncore * d.ncore_wave; e += OUTPUT_THREADS) {
            const int c = e / d.ncore_wave, jw = e - c * d.ncore_wave, row = p.wavepad + jw;
            const int k = (d.core_first + c) * m + row;
            const size_t out_spec = (size_t)(d.out_spec_first + c), out_wave = (size_t)(d.out_wave_first + jw);
            const size_t at = out_spec * (size_t)p.nwave_out + out_wave;
            const double *spot = spots + (size_t)bin_entry(&p, &d, k) * spot_pixels;

            double chi2_sum = 0.0, weight_sum = 0.0, masked = 0.0;
            for (int iy = 0; iy < ny; iy++) {
                const int py = s_yc[k] + iy;
                for (int ix = 0; ix < nx; ix++) {
                    const int px = s_xc[k] + ix;
                    const size_t pix = (size_t)py * (size_t)p.npix_x + (size_t)px;
                    const double a = spot[iy * nx + ix], iv = in.ivar[pix];
                    if (iv == 0.0) masked += a;
                    if (ok) {
                        const double mod = model[(py - d.ymin) * box_x + (px - d.xmin)];
                        const double err = p.psferr * mod + 1e-32;
                        const double totivar = iv > 0.0 ? 1.0 / (err * err + 1.0 / iv) : 0.0;
                        const double chi = (in.image[pix] - mod) * sqrt(totivar);
                        chi2_sum += a * (chi * chi);
                        if (totivar > 0.0) weight_sum += a;
                    }
                }
            }
            out.pixmask_fraction[at] = masked;
            out.chi2pix[at] = weight_sum > 0.0 ? chi2_sum / weight_sum : 0.0;

            double flux = 0.0, ivar = 0.0;
            if (ok) {
                /* R = diag(1/s) Q; ivar = s^2; flux = R xflux of the core spectrum's block */
                const double *q_block = qblk + (size_t)c * (size_t)(m * m);
                const double *xb = s_xflux + (d.core_first + c) * m;
                const double s_row = s_rowsum[c * m + row];
                for (int j = 0; j < m; j++) flux += q_block[row * m + j] / s_row * xb[j];
                ivar = s_row * s_row;
            }
            out.flux[at] = flux;
            out.ivar[at] = ivar;
            /* Rdiags[s][dg][j] = R[j' - ndiag + dg][j'], j' = row; rows outside the block give 0 */
            for (int dg = 0; dg < ndiags; dg++) {
                const int r = row - ndiag + dg;
                double value = 0.0;
                if (ok && r >= 0 && r < m)
                    value = qblk[(size_t)c * (size_t)(m * m) + (size_t)(r * m + row)] / s_rowsum[c * m + r];
                out.rdiags[(out_spec * (size_t)ndiags + (size_t)dg) * (size_t)p.nwave_out + out_wave] = value;
            }
        }
        bins_written = (unsigned long long)d.ncore * (unsigned long long)d.ncore_wave;
    }
    gw_witness_block_done(witness, bins_written, t_start);
}

/* ---------------------------------------------------------------------------------------------------------
 * Launchers
 * ------------------------------------------------------------------------------------------------------- */

/* The host rules every batched stage shares (ex2d_patch.h, Errors): ex2d_check_args, nbatch and max_batch
 * at least 1, nbatch <= max_batch, and a carvable workspace. */
static bool batch_args_ok(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch, void *d_ws,
                          size_t ws_bytes, int max_batch, ex2d_workspace *ws)
{
    return ex2d_check_args(p, d_in, patch_first, nbatch, max_batch, d_ws, ws_bytes) == EX2D_OK && nbatch >= 1 &&
           max_batch >= 1 && nbatch <= max_batch && ex2d_workspace_carve(p, max_batch, d_ws, ws) == EX2D_OK;
}

static bool outputs_ok(const ex2d_outputs *d_out)
{
    return d_out && d_out->flux && d_out->ivar && d_out->rdiags && d_out->chi2pix && d_out->pixmask_fraction &&
           d_out->info;
}

/* K5 and K6 run one block per (patch, core block): the grid must fit gridDim.x. */
static bool block_grid_ok(const ex2d_params *p, int nbatch)
{
    return (long long)nbatch * p->max_ncore <= INT_MAX;
}

/* K6's dynamic shared memory: 16 m^2 B (A and V). Opts the kernel in, or reports that this device cannot
 * give that much to one block (cudaErrorInvalidConfiguration). */
static cudaError_t jacobi_shared_bytes(const ex2d_params *p, size_t *bytes)
{
    *bytes = (size_t)16 * (size_t)p->m * (size_t)p->m;
    int device = 0, optin = 0;
    cudaFuncAttributes attr;
    cudaError_t rc = cudaGetDevice(&device);
    if (rc == cudaSuccess) rc = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (rc == cudaSuccess) rc = cudaFuncGetAttributes(&attr, (const void *)ex2d_jacobi_kernel);
    if (rc != cudaSuccess) return rc;
    if (*bytes + attr.sharedSizeBytes > (size_t)optin) return cudaErrorInvalidConfiguration;
    return cudaFuncSetAttribute((const void *)ex2d_jacobi_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)*bytes);
}

/* The launches themselves, on checked arguments. */
static cudaError_t run_validate(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int npatch,
                                const ex2d_workspace *ws, gw_witness *d_witness, cudaStream_t stream)
{
    /* {code 0, patch -1}: the "nothing found" state that atomicMin starts from */
    cudaError_t rc = cudaMemsetAsync(&ws->check->code, 0, sizeof ws->check->code, stream);
    if (rc == cudaSuccess) rc = cudaMemsetAsync(&ws->check->patch, 0xFF, sizeof ws->check->patch, stream);
    if (rc != cudaSuccess) return rc;
    ex2d_validate_kernel<<<npatch, VALIDATE_THREADS, 0, stream>>>(*p, *d_in, patch_first, ws->check, d_witness);
    return cudaGetLastError();
}

static cudaError_t run_normal(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots, int patch_first,
                              int nbatch, const ex2d_workspace *ws, gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_normal_kernel<<<nbatch, NORMAL_THREADS, 0, stream>>>(*p, *d_in, d_spots, patch_first, *ws, d_witness);
    return cudaGetLastError();
}

static cudaError_t run_cholesky(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                                const ex2d_workspace *ws, ex2d_patch_info *d_info, gw_witness *d_witness,
                                cudaStream_t stream)
{
    ex2d_cholesky_kernel<<<nbatch, CHOL_THREADS, 0, stream>>>(*p, d_in->patches, patch_first, *ws, d_info, d_witness);
    return cudaGetLastError();
}

static cudaError_t run_cblocks(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                               const ex2d_workspace *ws, const ex2d_patch_info *d_info, gw_witness *d_witness,
                               cudaStream_t stream)
{
    ex2d_cblocks_kernel<<<nbatch * p->max_ncore, CBLK_THREADS, 0, stream>>>(*p, d_in->patches, patch_first, *ws,
                                                                            d_info, d_witness);
    return cudaGetLastError();
}

static cudaError_t run_jacobi(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                              const ex2d_workspace *ws, size_t shared_bytes, ex2d_patch_info *d_info,
                              gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_jacobi_kernel<<<nbatch * p->max_ncore, JACOBI_THREADS, shared_bytes, stream>>>(*p, d_in->patches, patch_first,
                                                                                        *ws, d_info, d_witness);
    return cudaGetLastError();
}

static cudaError_t run_outputs(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots, int patch_first,
                               int nbatch, const ex2d_workspace *ws, const ex2d_outputs *d_out, gw_witness *d_witness,
                               cudaStream_t stream)
{
    ex2d_outputs_kernel<<<nbatch, OUTPUT_THREADS, 0, stream>>>(*p, *d_in, d_spots, patch_first, *ws, *d_out,
                                                              d_witness);
    return cudaGetLastError();
}

extern "C" cudaError_t ex2d_validate_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int npatch,
                                            void *d_ws, size_t ws_bytes, int max_batch, gw_witness *d_witness,
                                            cudaStream_t stream)
{
    ex2d_workspace ws;
    if (ex2d_check_args(p, d_in, patch_first, npatch, max_batch, d_ws, ws_bytes) != EX2D_OK || npatch < 1 ||
        max_batch < 1 || ex2d_workspace_carve(p, max_batch, d_ws, &ws) != EX2D_OK)
        return cudaErrorInvalidValue;
    return run_validate(p, d_in, patch_first, npatch, &ws, d_witness, stream);
}

extern "C" cudaError_t ex2d_spots_launch(const ex2d_params *p, const ex2d_inputs *d_in, int entry_first, int count,
                                         double *d_spots, gw_witness *d_witness, cudaStream_t stream)
{
    if (ex2d_check_args(p, NULL, 0, 0, 0, NULL, 0) != EX2D_OK || !d_in || !d_in->psf_sigx || !d_in->psf_sigy ||
        !d_in->psf_dx || !d_in->psf_dy || !d_in->psf_c || !d_spots || count < 1 || entry_first < 0 ||
        (long long)entry_first + count > (long long)p->nspec_tab * p->nwave_tab)
        return cudaErrorInvalidValue;
    ex2d_spots_kernel<<<count, SPOT_THREADS, 0, stream>>>(*p, *d_in, entry_first, d_spots, d_witness);
    return cudaGetLastError();
}

extern "C" cudaError_t ex2d_normal_launch(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots,
                                          int patch_first, int nbatch, void *d_ws, size_t ws_bytes, int max_batch,
                                          gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (!batch_args_ok(p, d_in, patch_first, nbatch, d_ws, ws_bytes, max_batch, &ws) || !d_spots)
        return cudaErrorInvalidValue;
    return run_normal(p, d_in, d_spots, patch_first, nbatch, &ws, d_witness, stream);
}

extern "C" cudaError_t ex2d_cholesky_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first,
                                            int nbatch, void *d_ws, size_t ws_bytes, int max_batch,
                                            ex2d_patch_info *d_info, gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (!batch_args_ok(p, d_in, patch_first, nbatch, d_ws, ws_bytes, max_batch, &ws) || !d_info)
        return cudaErrorInvalidValue;
    return run_cholesky(p, d_in, patch_first, nbatch, &ws, d_info, d_witness, stream);
}

extern "C" cudaError_t ex2d_cblocks_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first,
                                           int nbatch, void *d_ws, size_t ws_bytes, int max_batch,
                                           const ex2d_patch_info *d_info, gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (!batch_args_ok(p, d_in, patch_first, nbatch, d_ws, ws_bytes, max_batch, &ws) || !d_info ||
        !block_grid_ok(p, nbatch))
        return cudaErrorInvalidValue;
    return run_cblocks(p, d_in, patch_first, nbatch, &ws, d_info, d_witness, stream);
}

extern "C" cudaError_t ex2d_jacobi_launch(const ex2d_params *p, const ex2d_inputs *d_in, int patch_first, int nbatch,
                                          void *d_ws, size_t ws_bytes, int max_batch, ex2d_patch_info *d_info,
                                          gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (!batch_args_ok(p, d_in, patch_first, nbatch, d_ws, ws_bytes, max_batch, &ws) || !d_info ||
        !block_grid_ok(p, nbatch))
        return cudaErrorInvalidValue;
    size_t shared_bytes = 0;
    const cudaError_t rc = jacobi_shared_bytes(p, &shared_bytes);
    if (rc != cudaSuccess) return rc;
    return run_jacobi(p, d_in, patch_first, nbatch, &ws, shared_bytes, d_info, d_witness, stream);
}

extern "C" cudaError_t ex2d_outputs_launch(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots,
                                           int patch_first, int nbatch, void *d_ws, size_t ws_bytes, int max_batch,
                                           const ex2d_outputs *d_out, gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (!batch_args_ok(p, d_in, patch_first, nbatch, d_ws, ws_bytes, max_batch, &ws) || !d_spots ||
        !outputs_ok(d_out))
        return cudaErrorInvalidValue;
    return run_outputs(p, d_in, d_spots, patch_first, nbatch, &ws, d_out, d_witness, stream);
}

extern "C" cudaError_t ex2d_patches_launch(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots,
                                           int patch_first, int npatch, int max_batch, void *d_ws, size_t ws_bytes,
                                           const ex2d_outputs *d_out, gw_witness *d_witness, cudaStream_t stream)
{
    ex2d_workspace ws;
    if (ex2d_check_args(p, d_in, patch_first, npatch, max_batch, d_ws, ws_bytes) != EX2D_OK || npatch < 1 ||
        max_batch < 1 || ex2d_workspace_carve(p, max_batch, d_ws, &ws) != EX2D_OK || !d_spots ||
        !outputs_ok(d_out) || !block_grid_ok(p, max_batch < npatch ? max_batch : npatch))
        return cudaErrorInvalidValue;
    size_t shared_bytes = 0;
    cudaError_t rc = jacobi_shared_bytes(p, &shared_bytes); /* before any launch: all or nothing */
    if (rc != cudaSuccess) return rc;

    gw_witness *w = d_witness; /* NULL: no recording; else one record per stage */
    rc = run_validate(p, d_in, patch_first, npatch, &ws, w ? w + EX2D_W_VALIDATE : NULL, stream);
    for (int first = patch_first; rc == cudaSuccess && first - patch_first < npatch; first += max_batch) {
        const int left = npatch - (first - patch_first), nbatch = left < max_batch ? left : max_batch;
        rc = run_normal(p, d_in, d_spots, first, nbatch, &ws, w ? w + EX2D_W_NORMAL : NULL, stream);
        if (rc == cudaSuccess)
            rc = run_cholesky(p, d_in, first, nbatch, &ws, d_out->info, w ? w + EX2D_W_CHOLESKY : NULL, stream);
        if (rc == cudaSuccess)
            rc = run_cblocks(p, d_in, first, nbatch, &ws, d_out->info, w ? w + EX2D_W_CBLOCKS : NULL, stream);
        if (rc == cudaSuccess)
            rc = run_jacobi(p, d_in, first, nbatch, &ws, shared_bytes, d_out->info, w ? w + EX2D_W_JACOBI : NULL,
                            stream);
        if (rc == cudaSuccess)
            rc = run_outputs(p, d_in, d_spots, first, nbatch, &ws, d_out, w ? w + EX2D_W_OUTPUTS : NULL, stream);
    }
    return rc;
}
