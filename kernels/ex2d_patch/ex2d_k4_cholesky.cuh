/* SPDX-License-Identifier: MIT
 * ex2d_patch: K4, the Cholesky factor and the two triangular solves. A part of ex2d_patch.cu, which #includes it
 * after the shared enums and helpers: not a header of its own, and not compiled alone.
 */

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
    } else if (threadIdx.x == 0) {
        /* The validation pass rejected the range: no patch of it is extracted, and its info says so (instead
         * of keeping whatever an earlier call left there). Every batch of the range runs K4, so every patch
         * of the range gets this. */
        const ex2d_patch_info not_run = {EX2D_PATCH_NOT_RUN, 0, 0, 0};
        info[patch_first + (int)blockIdx.x] = not_run;
    }
    gw_witness_block_done(witness, processed, t_start);
}
