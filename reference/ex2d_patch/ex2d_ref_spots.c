/* SPDX-License-Identifier: MIT
 * ex2d_patch reference, K1 (docs/ex2d_patch.md, "The model and the stages K1-K7"): the Gauss-Hermite spot of each
 * PSF table entry.
 *   edges  u_e = (e - hsize - 0.5 - offset)/sigma, e = 0..npix (pixel centres sit at integers, so pixel q of
 *          the spot spans [q - hsize - 0.5, q - hsize + 0.5] relative to the trace, minus the sub-pixel offset)
 *   P_0[q] = (erf(u_{q+1}/sqrt2) - erf(u_q/sqrt2))/2
 *   P_g[q] = He_{g-1}(u_q) G(u_q) - He_{g-1}(u_{q+1}) G(u_{q+1}),  G(u) = exp(-u^2/2)/sqrt(2 pi)
 *   spot[iy][ix] = sum_i Px_i[ix] (sum_j c_ij Py_j[iy]) (+ the tail, when the table has one); values <= 0
 *          become +0.0; divided by the raster sum.
 *   tail   amp r2 / (core^2 + r2)^(1 + index/2), r2 = (dx xscale)^2 + (dy yscale)^2, dx = ix - hsizex - offset_x
 *          (the pixel centre minus the spot centre; likewise dy): not integrated over the pixel, as specter.
 * Px_g[q] is the integral of the degree-g Gauss-Hermite basis over pixel q (d/du of -He_{g-1} G is He_g G).
 */
#include <math.h>
#include <string.h>

#include "ex2d_patch_ref.h"
#include "ex2d_ref_internal.h"

#define EX2D_SQRT1_2 0.70710678118654752440
#define EX2D_1_SQRT_2PI 0.39894228040143267794

/* The tail at offset (dx, dy) from the spot centre, as specter writes it. */
static double ex2d_tail_at(const double *tail, double dx, double dy)
{
    const double rx = dx * tail[EX2D_TAIL_XSCALE], ry = dy * tail[EX2D_TAIL_YSCALE];
    const double r2 = rx * rx + ry * ry;
    return tail[EX2D_TAIL_AMP] * r2 /
           pow(tail[EX2D_TAIL_CORE] * tail[EX2D_TAIL_CORE] + r2, 1.0 + tail[EX2D_TAIL_INDEX] / 2.0);
}

/* Pixel integrals of the degree 0..g basis functions along one axis: out[g][q], q < 2*hsize+1. */
static void axis_integrals(double sigma, double offset, int hsize, int degree, double *out)
{
    const int npix = 2 * hsize + 1;
    double he[EX2D_MAX_DEGREE + 1][2 * EX2D_MAX_HALF_SIZE + 2]; /* He_g(u_e) G(u_e) at every edge */
    double erf_edge[2 * EX2D_MAX_HALF_SIZE + 2];
    for (int e = 0; e <= npix; e++) {
        const double u = ((double)(e - hsize) - 0.5 - offset) / sigma;
        const double g = exp(-0.5 * u * u) * EX2D_1_SQRT_2PI;
        double he_prev = 1.0, he_cur = u; /* He_0, He_1 */
        for (int k = 0; k < degree; k++) {
            if (k == 0) {
                he[k][e] = g;
            } else {
                he[k][e] = he_cur * g;
                const double he_next = u * he_cur - (double)k * he_prev;
                he_prev = he_cur;
                he_cur = he_next;
            }
        }
        erf_edge[e] = erf(u * EX2D_SQRT1_2);
    }
    for (int q = 0; q < npix; q++) {
        out[q] = 0.5 * (erf_edge[q + 1] - erf_edge[q]);
        for (int g = 1; g <= degree; g++) out[g * npix + q] = he[g - 1][q] - he[g - 1][q + 1];
    }
}

static void spot_of_entry(const ex2d_params *p, const ex2d_inputs *in, int64_t e, double *spot)
{
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    const int ncx = p->gx + 1, ncy = p->gy + 1;
    double px[(EX2D_MAX_DEGREE + 1) * (2 * EX2D_MAX_HALF_SIZE + 1)];
    double py[(EX2D_MAX_DEGREE + 1) * (2 * EX2D_MAX_HALF_SIZE + 1)];
    axis_integrals(in->psf_sigx[e], in->psf_dx[e], p->hsizex, p->gx, px);
    axis_integrals(in->psf_sigy[e], in->psf_dy[e], p->hsizey, p->gy, py);
    const double *c = in->psf_c + e * ncx * ncy;
    const double *tail = in->psf_tail ? in->psf_tail + e * EX2D_TAIL_TERMS : NULL;
    double sum = 0.0;
    for (int iy = 0; iy < ny; iy++) {
        double row[EX2D_MAX_DEGREE + 1]; /* sum_j c_ij Py_j[iy], per x degree i */
        for (int i = 0; i < ncx; i++) {
            double acc = 0.0;
            for (int j = 0; j < ncy; j++) acc += c[i * ncy + j] * py[j * ny + iy];
            row[i] = acc;
        }
        for (int ix = 0; ix < nx; ix++) {
            double v = 0.0;
            for (int i = 0; i < ncx; i++) v += px[i * nx + ix] * row[i];
            if (tail)
                v += ex2d_tail_at(tail, (double)(ix - p->hsizex) - in->psf_dx[e],
                                  (double)(iy - p->hsizey) - in->psf_dy[e]);
            if (v <= 0.0) v = 0.0; /* also turns -0.0 into +0.0 */
            spot[iy * nx + ix] = v;
            sum += v;
        }
    }
    for (int q = 0; q < nx * ny; q++) spot[q] /= sum;
}

int ex2d_ref_spots(const ex2d_params *p, const ex2d_inputs *in, int entry_first, int count, double *spots,
                   int nthreads)
{
    int rc = ex2d_check_args(p, NULL, 0, 0, 0, NULL, 0);
    if (rc) return rc;
    if (!in || !in->psf_sigx || !in->psf_sigy || !in->psf_dx || !in->psf_dy || !in->psf_c || !spots)
        return EX2D_ERR_NULL;
    if (count < 1) return EX2D_ERR_SIZE;
    const int64_t entries = (int64_t)p->nspec_tab * p->nwave_tab;
    if (entry_first < 0 || (int64_t)entry_first + count > entries) return EX2D_ERR_RANGE;
    const size_t spot_size = (size_t)(2 * p->hsizex + 1) * (size_t)(2 * p->hsizey + 1);
    const int threads = ex2d_ref_thread_count(nthreads);
    (void)threads;
    EX2D_OMP(omp parallel for num_threads(threads) schedule(static))
    for (int i = 0; i < count; i++) {
        const int64_t e = (int64_t)entry_first + i;
        spot_of_entry(p, in, e, spots + (size_t)e * spot_size);
    }
    return EX2D_OK;
}
