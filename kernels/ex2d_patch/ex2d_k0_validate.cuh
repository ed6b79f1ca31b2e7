/* SPDX-License-Identifier: MIT
 * ex2d_patch: the validation pass over a range of patches. A part of ex2d_patch.cu, which #includes it
 * after the shared enums and helpers: not a header of its own, and not compiled alone.
 */

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
