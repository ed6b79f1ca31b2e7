/* SPDX-License-Identifier: MIT
 * ex2d_patch: K1, the Gauss-Hermite spot of each PSF table entry. A part of ex2d_patch.cu, which #includes it
 * after the shared enums and helpers: not a header of its own, and not compiled alone.
 */

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
    __shared__ double s_tail[EX2D_TAIL_TERMS];

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
    const bool has_tail = in.psf_tail != NULL;
    if (has_tail && tid < EX2D_TAIL_TERMS) s_tail[tid] = in.psf_tail[e * EX2D_TAIL_TERMS + tid];
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

    /* spot[iy][ix] = sum_i Px_i[ix] (sum_j c_ij Py_j[iy]), plus the tail at the pixel centre (dx, dy from the
     * spot centre) when the table has one; negatives become +0.0; then divided by the sum. */
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
            if (has_tail) {
                const double rx = ((double)(ix - p.hsizex) - in.psf_dx[e]) * s_tail[EX2D_TAIL_XSCALE];
                const double ry = ((double)(iy - p.hsizey) - in.psf_dy[e]) * s_tail[EX2D_TAIL_YSCALE];
                const double r2 = rx * rx + ry * ry;
                v += s_tail[EX2D_TAIL_AMP] * r2 /
                     pow(s_tail[EX2D_TAIL_CORE] * s_tail[EX2D_TAIL_CORE] + r2, 1.0 + s_tail[EX2D_TAIL_INDEX] / 2.0);
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
