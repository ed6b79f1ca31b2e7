/* SPDX-License-Identifier: MIT
 * ex2d_patch: K7, the frame outputs of each patch. A part of ex2d_patch.cu, which #includes it
 * after the shared enums and helpers: not a header of its own, and not compiled alone.
 */

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
            bool seen = false; /* a pixel of the spot with weight: without one the bin has no information */
            for (int iy = 0; iy < ny; iy++) {
                const int py = s_yc[k] + iy;
                for (int ix = 0; ix < nx; ix++) {
                    const int px = s_xc[k] + ix;
                    const size_t pix = (size_t)py * (size_t)p.npix_x + (size_t)px;
                    const double a = spot[iy * nx + ix], iv = in.ivar[pix];
                    if (iv == 0.0) masked += a;
                    seen = seen || (iv > 0.0 && a != 0.0);
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
                /* s^2 of a bin no unmasked pixel sees is the regularisation's alone: not a measurement */
                ivar = seen ? s_row * s_row : 0.0;
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
