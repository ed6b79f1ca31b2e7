/* SPDX-License-Identifier: MIT
 * ex2d_patch: K5, the diagonal blocks C_bb of the inverse. A part of ex2d_patch.cu, which #includes it
 * after the shared enums and helpers: not a header of its own, and not compiled alone.
 */

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
