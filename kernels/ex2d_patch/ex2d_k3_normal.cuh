/* SPDX-License-Identifier: MIT
 * ex2d_patch: K3, the normal equations of each patch. A part of ex2d_patch.cu, which #includes it
 * after the shared enums and helpers: not a header of its own, and not compiled alone.
 */

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
