/* SPDX-License-Identifier: MIT
 * CPU tests of the ex2d_patch reference (reference/ex2d_patch/ex2d_patch_ref.h; docs/ex2d_patch.md, "Tests")
 * on tier S (one patch, n = 54) and a few small multi-patch frames: K3's dense form equals its overlap form
 * bit for bit, the invariants and the noiseless patch of docs/ex2d_patch.md ("Invariants", "Analytic
 * cases"), masked columns, the regularisation floor, per-patch statuses (EX2D_PATCH_NOT_RUN after a rejected
 * range included), stitching, threads, and every bad-input rule ("Argument rules and per-patch statuses";
 * outputs pre-filled with a sentinel stay untouched). Fast enough for Valgrind; tiers M and L are in
 * test_ex2d_patch_tiers.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"
#include "gw_test_util.h"

#define SENTINEL (-7777.25)

/* A frame with its workspace and frame outputs. */
typedef struct run {
    ex2d_frame f;
    int max_batch;
    void *ws;
    size_t ws_bytes;
    ex2d_outputs out;
} run;

static void run_open(run *r, const ex2d_frame_config *cfg, int max_batch)
{
    const int rc = ex2d_frame_make(cfg, &r->f);
    cr_assert(rc == 0, "ex2d_frame_make: %s", ex2d_synth_error_str(rc));
    r->max_batch = max_batch;
    cr_assert(ex2d_ref_workspace_alloc(&r->f.params, max_batch, &r->ws, &r->ws_bytes) == 0);
    cr_assert(ex2d_ref_outputs_alloc(&r->f.params, r->f.npatch, &r->out) == 0);
}

static void run_close(run *r)
{
    free(r->ws);
    ex2d_ref_outputs_free(&r->out);
    ex2d_frame_free(&r->f);
}

static size_t frame_bins(const ex2d_params *p) { return (size_t)p->nspec_out * p->nwave_out; }

static void fill_outputs(const ex2d_params *p, int npatch, const ex2d_outputs *o, double v)
{
    const size_t bins = frame_bins(p);
    for (size_t i = 0; i < bins; i++) o->flux[i] = o->ivar[i] = o->chi2pix[i] = o->pixmask_fraction[i] = v;
    for (size_t i = 0; i < bins * (2 * p->ndiag + 1); i++) o->rdiags[i] = v;
    for (int i = 0; i < npatch; i++) o->info[i] = (ex2d_patch_info){-9, -9, -9, -9};
}

static ex2d_frame_config tier_config(int tier)
{
    ex2d_frame_config cfg;
    cr_assert(ex2d_frame_config_tier(&cfg, tier) == 0);
    cfg.nthreads = 1;
    return cfg;
}

static ex2d_workspace carve(const run *r)
{
    ex2d_workspace w;
    cr_assert(ex2d_workspace_carve(&r->f.params, r->max_batch, r->ws, &w) == 0);
    return w;
}

/* Dense A of patch 0 (box raster order), allocated. */
static double *dense_a(const run *r, int patch)
{
    const ex2d_patch_desc *d = &r->f.patches[patch];
    const size_t npix = (size_t)(d->xmax - d->xmin) * (d->ymax - d->ymin), n = (size_t)d->nspecpad * r->f.params.m;
    double *a = malloc(npix * n * sizeof(double));
    cr_assert(a);
    cr_assert(ex2d_ref_dense_a(&r->f.params, &r->f.inputs, r->f.spots, patch, a) == 0);
    return a;
}

/* R f_true of core bin (c, j) of patch `patch` in workspace slot b (ex2d_synth_r_truth). */
static double r_times_truth(const run *r, int patch, int b, int c, int j)
{
    const ex2d_workspace w = carve(r);
    return ex2d_synth_r_truth(&r->f, w.qblk + (size_t)b * w.blk_stride, patch, c, j);
}

/* The noiseless patch ("Analytic cases"): |flux - R f_true| / |R f_true| < 1e-9 (2-norms over the core), |A xflux - image| < 1e-6. */
static void expect_noiseless(const run *r, int patch, int b)
{
    const ex2d_params *p = &r->f.params;
    const ex2d_patch_desc *d = &r->f.patches[patch];
    double diff2 = 0.0, ref2 = 0.0;
    for (int c = 0; c < d->ncore; c++)
        for (int j = 0; j < d->ncore_wave; j++) {
            const double want = r_times_truth(r, patch, b, c, j);
            const double got = r->out.flux[(size_t)(d->out_spec_first + c) * p->nwave_out + d->out_wave_first + j];
            diff2 += (got - want) * (got - want);
            ref2 += want * want;
        }
    cr_expect(sqrt(diff2 / ref2) < 1e-9, "patch %d: |flux - R f_true| / |R f_true| = %g", patch, sqrt(diff2 / ref2));
    const ex2d_workspace w = carve(r);
    const double *model = w.model + (size_t)b * w.model_stride;
    const int box_x = d->xmax - d->xmin;
    double worst = 0.0;
    for (int y = d->ymin; y < d->ymax; y++)
        for (int x = d->xmin; x < d->xmax; x++) {
            const double e = fabs(model[(y - d->ymin) * box_x + (x - d->xmin)] - r->f.image[(size_t)y * p->npix_x + x]);
            worst = e > worst ? e : worst;
        }
    cr_expect(worst < 1e-6, "patch %d: max |A xflux - image| = %g", patch, worst);
}

static int run_all(run *r, int nthreads)
{
    return ex2d_ref_patches(&r->f.params, &r->f.inputs, r->f.spots, 0, r->f.npatch, r->max_batch, r->ws, r->ws_bytes,
                            &r->out, nthreads);
}

/* ---------------------------------------------------------------- K3 */

static void check_dense_equals_overlap(int tier)
{
    const ex2d_frame_config cfg = tier_config(tier);
    run r;
    run_open(&r, &cfg, 1);
    const ex2d_params *p = &r.f.params;
    const int n = r.f.patches[0].nspecpad * p->m;
    cr_assert(ex2d_ref_validate(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, 1) == 0);
    cr_assert(ex2d_ref_normal(p, &r.f.inputs, r.f.spots, 0, 1, r.ws, r.ws_bytes, 1, 1) == 0);
    double *a = dense_a(&r, 0);
    double *icov = malloc((size_t)n * n * sizeof(double)), *y = malloc(n * sizeof(double)),
           *fw = malloc(n * sizeof(double));
    cr_assert(icov && y && fw);
    cr_assert(ex2d_ref_dense_normal(p, &r.f.inputs, a, 0, icov, y, fw) == 0);
    const ex2d_workspace w = carve(&r);
    const size_t ld = (size_t)p->max_nspecpad * p->m;
    int nonzero = 0;
    for (int i = 0; i < n; i++) {
        cr_assert(memcmp(&w.icov[i * ld], &icov[(size_t)i * n], n * sizeof(double)) == 0, "iCov row %d differs", i);
        for (int j = 0; j < n; j++) nonzero += icov[(size_t)i * n + j] != 0.0;
    }
    cr_expect(memcmp(w.y, y, n * sizeof(double)) == 0, "y differs");
    cr_expect(memcmp(w.fluxweight, fw, n * sizeof(double)) == 0, "fluxweight differs");
    cr_expect(nonzero > n && nonzero < n * n, "iCov has %d non-zeros of %d", nonzero, n * n);
    free(a);
    free(icov);
    free(y);
    free(fw);
    run_close(&r);
}

/* ---------------------------------------------------------------- K4-K7 invariants */

/* Inverse of the n x n matrix m (leading dimension ld) by Gauss-Jordan with partial pivoting. */
static double *inverse(const double *m, int n, size_t ld)
{
    double *a = malloc((size_t)n * 2 * n * sizeof(double));
    cr_assert(a);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 2 * n; j++) a[(size_t)i * 2 * n + j] = j < n ? m[i * ld + j] : (j - n == i);
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int i = c + 1; i < n; i++)
            if (fabs(a[(size_t)i * 2 * n + c]) > fabs(a[(size_t)piv * 2 * n + c])) piv = i;
        for (int j = 0; j < 2 * n; j++) {
            const double t = a[(size_t)c * 2 * n + j];
            a[(size_t)c * 2 * n + j] = a[(size_t)piv * 2 * n + j];
            a[(size_t)piv * 2 * n + j] = t;
        }
        const double inv = 1.0 / a[(size_t)c * 2 * n + c];
        for (int j = 0; j < 2 * n; j++) a[(size_t)c * 2 * n + j] *= inv;
        for (int i = 0; i < n; i++) {
            if (i == c) continue;
            const double f = a[(size_t)i * 2 * n + c];
            for (int j = 0; j < 2 * n; j++) a[(size_t)i * 2 * n + j] -= f * a[(size_t)c * 2 * n + j];
        }
    }
    double *out = malloc((size_t)n * n * sizeof(double));
    cr_assert(out);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) out[(size_t)i * n + j] = a[(size_t)i * 2 * n + n + j];
    free(a);
    return out;
}

/* Runs the stages one by one on patch 0 and checks every invariant ("Invariants") along the way. */
static void check_invariants(int tier)
{
    const ex2d_frame_config cfg = tier_config(tier);
    run r;
    run_open(&r, &cfg, 1);
    const ex2d_params *p = &r.f.params;
    const ex2d_patch_desc *d = &r.f.patches[0];
    const int n = d->nspecpad * p->m, m = p->m;
    const size_t ld = (size_t)p->max_nspecpad * m;
    const ex2d_workspace w = carve(&r);
    cr_assert(ex2d_ref_validate(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, 1) == 0);
    cr_assert(w.check->code == 0 && w.check->patch == -1);
    cr_assert(ex2d_ref_normal(p, &r.f.inputs, r.f.spots, 0, 1, r.ws, r.ws_bytes, 1, 1) == 0);
    double *icov = malloc((size_t)n * ld * sizeof(double));
    cr_assert(icov);
    memcpy(icov, w.icov, (size_t)n * ld * sizeof(double));
    cr_assert(ex2d_ref_cholesky(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, r.out.info, 1) == 0);
    cr_assert(r.out.info[0].status == EX2D_PATCH_OK);
    double icov_max = 0.0, llt_err = 0.0, res = 0.0, y_max = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double v = 0.0;
            for (int k = 0; k <= (i < j ? i : j); k++) v += w.icov[i * ld + k] * w.icov[j * ld + k];
            icov_max = fmax(icov_max, fabs(icov[i * ld + j]));
            llt_err = fmax(llt_err, fabs(v - icov[i * ld + j]));
            if (j > i) cr_assert(w.icov[i * ld + j] == icov[i * ld + j], "upper triangle (%d, %d) changed", i, j);
        }
    cr_expect(llt_err <= 1e-12 * icov_max, "|L L^T - iCov| = %g, max |iCov| = %g", llt_err, icov_max);
    for (int i = 0; i < n; i++) {
        double v = 0.0;
        for (int j = 0; j < n; j++) v += icov[i * ld + j] * w.xflux[j];
        res = fmax(res, fabs(v - w.y[i]));
        y_max = fmax(y_max, fabs(w.y[i]));
    }
    cr_expect(res <= 1e-12 * y_max, "|iCov xflux - y| = %g, max |y| = %g", res, y_max);

    cr_assert(ex2d_ref_cblocks(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, r.out.info, 1) == 0);
    double *cov = inverse(icov, n, ld);
    for (int c = 0; c < d->ncore; c++) {
        const double *cb = w.cblk + (size_t)c * m * m;
        const int r0 = (d->core_first + c) * m;
        double bmax = 0.0, err = 0.0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                bmax = fmax(bmax, fabs(cov[(size_t)(r0 + i) * n + r0 + j]));
                err = fmax(err, fabs(cb[i * m + j] - cov[(size_t)(r0 + i) * n + r0 + j]));
            }
        cr_expect(err <= 1e-10 * bmax, "core %d: C_bb differs from the block of iCov^-1 by %g (max %g)", c, err, bmax);
    }
    free(cov);

    cr_assert(ex2d_ref_jacobi(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, r.out.info, 1) == 0);
    const ex2d_patch_info info = r.out.info[0];
    cr_expect(info.status == EX2D_PATCH_OK && info.clipped == 0 && info.sweeps_min >= 1 &&
                  info.sweeps_max <= p->jacobi_max_sweeps && info.sweeps_min <= info.sweeps_max,
              "info {%d, %d, %d, %d}", info.status, info.clipped, info.sweeps_min, info.sweeps_max);
    for (int c = 0; c < d->ncore; c++) {
        const double *q = w.qblk + (size_t)c * m * m, *cb = w.cblk + (size_t)c * m * m;
        double qcq = 0.0, asym = 0.0, qmax = 0.0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                asym = fmax(asym, fabs(q[i * m + j] - q[j * m + i]));
                qmax = fmax(qmax, fabs(q[i * m + j]));
                double v = 0.0; /* (Q C Q)[i][j] */
                for (int k = 0; k < m; k++) {
                    double qc = 0.0;
                    for (int l = 0; l < m; l++) qc += q[i * m + l] * cb[l * m + k];
                    v += qc * q[k * m + j];
                }
                qcq = fmax(qcq, fabs(v - (i == j)));
            }
        cr_expect(qcq <= 1e-10, "core %d: |Q C Q - I| = %g", c, qcq);
        cr_expect(asym <= 1e-14 * qmax, "core %d: Q asymmetric by %g", c, asym);
    }

    fill_outputs(p, 1, &r.out, NAN);
    r.out.info[0] = info;
    cr_assert(ex2d_ref_outputs(p, &r.f.inputs, r.f.spots, 0, 1, r.ws, r.ws_bytes, 1, &r.out, 1) == 0);
    const int nd = 2 * p->ndiag + 1;
    int outside = 0; /* Rdiags entries whose row lies outside the patch (tier S: ndiag 5 > wavepad 4) */
    for (int c = 0; c < d->ncore; c++) {
        const double *q = w.qblk + (size_t)c * m * m;
        for (int i = 0; i < m; i++) { /* rows of R = diag(1/s) Q sum to 1 */
            double s = 0.0, rs = 0.0;
            for (int j = 0; j < m; j++) s += q[i * m + j];
            for (int j = 0; j < m; j++) rs += q[i * m + j] / s;
            cr_expect(fabs(rs - 1.0) <= 1e-13, "core %d row %d of R sums to 1 + %g", c, i, rs - 1.0);
        }
        for (int j = 0; j < d->ncore_wave; j++) {
            const int jp = j + p->wavepad;
            const size_t o = (size_t)(d->out_spec_first + c) * p->nwave_out + d->out_wave_first + j;
            double s = 0.0;
            for (int i = 0; i < m; i++) s += q[jp * m + i];
            cr_expect(fabs(r.out.ivar[o] - s * s) <= 1e-14 * s * s, "ivar of core %d bin %d", c, j);
            for (int dd = 0; dd < nd; dd++) { /* Rdiags[s][d][j] = R[j' - ndiag + d][j'], 0 off the patch */
                const int row = jp - p->ndiag + dd;
                double rs = 0.0, want = 0.0;
                if (row >= 0 && row < m) {
                    for (int i = 0; i < m; i++) rs += q[row * m + i];
                    want = q[row * m + jp] / rs;
                } else {
                    outside++;
                }
                const double got = r.out.rdiags[((size_t)(d->out_spec_first + c) * nd + dd) * p->nwave_out +
                                                d->out_wave_first + j];
                cr_expect(fabs(got - want) <= 1e-15, "Rdiags core %d d %d j %d: %.17g, want %.17g", c, dd, j, got,
                          want);
            }
        }
    }
    /* k = ndiag - wavepad rows missing at each end: 1 + ... + k entries per end and core spectrum */
    const int k_off = p->ndiag > p->wavepad ? p->ndiag - p->wavepad : 0;
    cr_expect(outside == k_off * (k_off + 1) * d->ncore, "%d Rdiags entries off the patch", outside);
    expect_noiseless(&r, 0, 0);
    free(icov);
    run_close(&r);
}


#ifndef GW_EX2D_LARGE_TIERS /* tier S and small frames: test_ex2d_patch_ref */

/* Every frame output element still holds v; info[i] is {EX2D_PATCH_NOT_RUN, 0, 0, 0} for the patches of
 * [not_run_first, not_run_first + not_run_count) (a rejected range says so) and still {-9,...} for the rest. */
static int outputs_untouched_but_not_run(const ex2d_params *p, int npatch, const ex2d_outputs *o, double v,
                                         int not_run_first, int not_run_count)
{
    const size_t bins = frame_bins(p);
    for (size_t i = 0; i < bins; i++)
        if (o->flux[i] != v || o->ivar[i] != v || o->chi2pix[i] != v || o->pixmask_fraction[i] != v) return 0;
    for (size_t i = 0; i < bins * (2 * p->ndiag + 1); i++)
        if (o->rdiags[i] != v) return 0;
    for (int i = 0; i < npatch; i++) {
        const int not_run = i >= not_run_first && i < not_run_first + not_run_count;
        const ex2d_patch_info want = not_run ? (ex2d_patch_info){EX2D_PATCH_NOT_RUN, 0, 0, 0}
                                             : (ex2d_patch_info){-9, -9, -9, -9};
        if (o->info[i].status != want.status || o->info[i].clipped != want.clipped ||
            o->info[i].sweeps_min != want.sweeps_min || o->info[i].sweeps_max != want.sweeps_max)
            return 0;
    }
    return 1;
}

/* Every output element still holds v, info still {-9,...}. */
static int outputs_untouched(const ex2d_params *p, int npatch, const ex2d_outputs *o, double v)
{
    return outputs_untouched_but_not_run(p, npatch, o, v, 0, 0);
}

/* Fibres 0..9 (two subbundles: one at the bundle edge), bins 300..349 in two steps of 25 with 8 bins of padding
 * (m = 41, n = 246 and 287: a quarter of tier M's cost, for Valgrind): 4 patches, noisy frame. */
static ex2d_frame_config four_patch_config(void)
{
    ex2d_frame_config cfg;
    ex2d_frame_config_default(&cfg);
    cfg.fibre_first = 0, cfg.nfibre = 10, cfg.wave_first = 300, cfg.nwave = 50, cfg.nwavestep = 25, cfg.wavepad = 8;
    cfg.crop_to_boxes = 1, cfg.nthreads = 1;
    return cfg;
}

Test(ex2d_patch_ref, dense_normal_equations_equal_the_overlap_form_bit_for_bit)
{
    check_dense_equals_overlap(EX2D_TIER_S);
}

Test(ex2d_patch_ref, tier_s_satisfies_the_invariants)
{
    check_invariants(EX2D_TIER_S);
}

Test(ex2d_patch_ref, regularisation_floors_weak_bins_at_minweight_and_adds_regularize_elsewhere)
{
    const ex2d_frame_config cfg = tier_config(EX2D_TIER_S);
    run r;
    run_open(&r, &cfg, 1);
    ex2d_params p = r.f.params;
    p.regularize = 1e-3;
    /* Mask every column up to CCD x 144: the left padding fibre (11, X ~ 140) keeps only its far tail, the core
     * fibre (12, X ~ 147) loses under 1 % of its light. */
    double *ivar = (double *)r.f.inputs.ivar;
    for (int y = 0; y < p.npix_y; y++)
        for (int x = 0; x + r.f.image_x0 <= 144; x++) ivar[(size_t)y * p.npix_x + x] = 0.0;
    cr_assert(ex2d_ref_validate(&p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, 1) == 0);
    cr_assert(ex2d_ref_normal(&p, &r.f.inputs, r.f.spots, 0, 1, r.ws, r.ws_bytes, 1, 1) == 0);
    const ex2d_workspace w = carve(&r);
    const ex2d_patch_desc *d = &r.f.patches[0];
    const int n = d->nspecpad * p.m, box = (d->xmax - d->xmin) * (d->ymax - d->ymin);
    const size_t ld = (size_t)p.max_nspecpad * p.m;
    double *a = dense_a(&r, 0);
    double max_fw = 0.0;
    for (int k = 0; k < n; k++) max_fw = w.fluxweight[k] > max_fw ? w.fluxweight[k] : max_fw;
    const double minweight = 1e-4 * max_fw;
    int floored = 0;
    for (int k = 0; k < n; k++) {
        double raw = 0.0; /* the unregularised diagonal, in K3's raster order */
        for (int px = 0; px < box; px++) {
            const int x = d->xmin + px % (d->xmax - d->xmin), y = d->ymin + px / (d->xmax - d->xmin);
            raw += (a[(size_t)px * n + k] * ivar[(size_t)y * p.npix_x + x]) * a[(size_t)px * n + k];
        }
        const int weak = w.fluxweight[k] < minweight;
        const double alpha = weak ? minweight - w.fluxweight[k] : p.regularize;
        floored += weak;
        cr_assert(w.icov[k * ld + k] == raw + (alpha * alpha + 1e-15), "bin %d (weak %d): %.17g, want %.17g", k, weak,
                  w.icov[k * ld + k], raw + (alpha * alpha + 1e-15));
        if (weak) cr_assert(k < p.m, "bin %d of a core or right padding spectrum fell below minweight", k);
    }
    cr_expect(floored >= p.m / 2, "only %d of the left padding spectrum's %d bins fell below minweight", floored, p.m);
    /* The patch still solves. */
    fill_outputs(&p, 1, &r.out, NAN);
    cr_assert(ex2d_ref_patches(&p, &r.f.inputs, r.f.spots, 0, 1, 1, r.ws, r.ws_bytes, &r.out, 1) == 0);
    cr_expect(r.out.info[0].status == EX2D_PATCH_OK && r.out.info[0].clipped == 0);
    for (size_t i = 0; i < frame_bins(&p); i++)
        cr_expect(isfinite(r.out.flux[i]) && r.out.ivar[i] > 0.0 && r.out.pixmask_fraction[i] > 0.0);
    free(a);
    run_close(&r);
}

Test(ex2d_patch_ref, noiseless_tier_s_recovers_r_f_true_and_the_image)
{
    const ex2d_frame_config cfg = tier_config(EX2D_TIER_S);
    run r;
    run_open(&r, &cfg, 1);
    fill_outputs(&r.f.params, 1, &r.out, NAN);
    cr_assert(run_all(&r, 1) == 0);
    cr_expect(r.out.info[0].status == 0 && r.out.info[0].clipped == 0);
    expect_noiseless(&r, 0, 0);
    for (size_t i = 0; i < frame_bins(&r.f.params); i++) {
        cr_expect(r.out.chi2pix[i] >= 0.0 && r.out.chi2pix[i] < 1e-12, "chi2pix %g of an exact model",
                  r.out.chi2pix[i]);
        cr_expect(r.out.pixmask_fraction[i] == 0.0, "pixmask_fraction %g with nothing masked",
                  r.out.pixmask_fraction[i]);
    }
    run_close(&r);
}

/* ---------------------------------------------------------------- masking */

/* pixmask_fraction of core bin (c, j) must be the spot's sum over the masked column, > 0 exactly when the spot
 * puts light there. Returns whether this bin touches the column. */
static int check_pixmask(const run *r, int patch, int c, int j, int col_image)
{
    const ex2d_params *p = &r->f.params;
    const ex2d_patch_desc *d = &r->f.patches[patch];
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    const int64_t e = ex2d_ref_entry(p, d, (d->core_first + c) * p->m + p->wavepad + j);
    double want = 0.0;
    if (col_image >= r->f.xc[e] && col_image < r->f.xc[e] + nx)
        for (int iy = 0; iy < ny; iy++) want += r->f.spots[e * nx * ny + iy * nx + (col_image - r->f.xc[e])];
    const double got = r->out.pixmask_fraction[(size_t)(d->out_spec_first + c) * p->nwave_out + d->out_wave_first + j];
    cr_expect(fabs(got - want) <= 1e-15 && (got > 0.0) == (want > 0.0), "patch %d core %d bin %d: %.17g, want %.17g",
              patch, c, j, got, want);
    return want > 0.0;
}

Test(ex2d_patch_ref, masked_column_through_the_trace_keeps_the_noiseless_results)
{
    ex2d_frame_config cfg = tier_config(EX2D_TIER_S);
    cfg.nmasked_cols = 1;
    cfg.masked_cols[0] = 147; /* the core fibre's trace */
    run r;
    run_open(&r, &cfg, 1);
    fill_outputs(&r.f.params, 1, &r.out, NAN);
    cr_assert(run_all(&r, 1) == 0);
    cr_expect(r.out.info[0].status == 0);
    expect_noiseless(&r, 0, 0);
    int touched = 0;
    for (int j = 0; j < r.f.patches[0].ncore_wave; j++) touched += check_pixmask(&r, 0, 0, j, 147 - r.f.image_x0);
    cr_expect(touched == r.f.patches[0].ncore_wave);
    run_close(&r);
}

Test(ex2d_patch_ref, masked_column_at_a_footprint_edge_flags_exactly_the_bins_it_touches)
{
    /* One core fibre (7) over 600 bins: its trace drifts by ~2 px, so a column at the left edge of the leftmost
     * footprints touches some bins and misses others. Noisy frame image, model ivar. */
    ex2d_frame_config cfg;
    ex2d_frame_config_default(&cfg);
    cfg.fibre_first = 7, cfg.nfibre = 1, cfg.subbundle_size = 1, cfg.wave_first = 0, cfg.nwave = 600;
    cfg.crop_to_boxes = 1, cfg.nthreads = 1;
    run r;
    run_open(&r, &cfg, 4);
    int xc_min = INT32_MAX;
    for (int i = 0; i < r.f.npatch; i++)
        for (int j = 0; j < r.f.patches[i].ncore_wave; j++) {
            const int64_t e = ex2d_ref_entry(&r.f.params, &r.f.patches[i], r.f.patches[i].core_first * r.f.params.m +
                                                                                r.f.params.wavepad + j);
            xc_min = r.f.xc[e] < xc_min ? r.f.xc[e] : xc_min;
        }
    double *ivar = (double *)r.f.inputs.ivar;
    for (int y = 0; y < r.f.params.npix_y; y++) ivar[(size_t)y * r.f.params.npix_x + xc_min] = 0.0;
    fill_outputs(&r.f.params, r.f.npatch, &r.out, NAN);
    cr_assert(run_all(&r, 1) == 0);
    int touched = 0, missed = 0;
    for (int i = 0; i < r.f.npatch; i++) {
        cr_expect(r.out.info[i].status == 0 && r.out.info[i].clipped == 0, "patch %d status %d", i,
                  r.out.info[i].status);
        for (int j = 0; j < r.f.patches[i].ncore_wave; j++) {
            const int t = check_pixmask(&r, i, 0, j, xc_min);
            touched += t;
            missed += !t;
        }
    }
    cr_expect(touched > 0 && missed > 0, "the column should touch some bins and miss others: %d, %d", touched, missed);
    for (size_t i = 0; i < frame_bins(&r.f.params); i++)
        cr_expect(isfinite(r.out.flux[i]) && r.out.ivar[i] > 0.0 && isfinite(r.out.chi2pix[i]), "bin %zu", i);
    run_close(&r);
}

/* Whether any pixel of core bin (c, j)'s spot has weight: A != 0 and ivar > 0. */
static int bin_sees_data(const run *r, int patch, int c, int j)
{
    const ex2d_params *p = &r->f.params;
    const ex2d_patch_desc *d = &r->f.patches[patch];
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    const int64_t e = ex2d_ref_entry(p, d, (d->core_first + c) * p->m + p->wavepad + j);
    for (int iy = 0; iy < ny; iy++)
        for (int ix = 0; ix < nx; ix++)
            if (r->f.spots[e * nx * ny + iy * nx + ix] != 0.0 &&
                r->f.inputs.ivar[(size_t)(r->f.yc[e] + iy) * p->npix_x + r->f.xc[e] + ix] > 0.0)
                return 1;
    return 0;
}

Test(ex2d_patch_ref, a_bin_whose_spot_sees_only_masked_pixels_gets_ivar_zero)
{
    /* Rows masked across the whole window around the middle core bin: the bins whose spots lie inside the
     * band carry only the regularisation's s^2 (1e-15 and the minweight floor), which is no measurement. */
    const ex2d_frame_config cfg = tier_config(EX2D_TIER_S);
    run r;
    run_open(&r, &cfg, 1);
    const ex2d_params *p = &r.f.params;
    const ex2d_patch_desc *d = &r.f.patches[0];
    const int ny = 2 * p->hsizey + 1;
    const int64_t mid = ex2d_ref_entry(p, d, d->core_first * p->m + p->wavepad + d->ncore_wave / 2);
    double *ivar = (double *)r.f.inputs.ivar;
    for (int y = r.f.yc[mid] - 3; y < r.f.yc[mid] + ny + 3; y++)
        for (int x = 0; x < p->npix_x; x++) ivar[(size_t)y * p->npix_x + x] = 0.0;
    fill_outputs(p, 1, &r.out, NAN);
    cr_assert(run_all(&r, 1) == 0);
    cr_assert(r.out.info[0].status == EX2D_PATCH_OK, "status %d", r.out.info[0].status);
    int blind = 0, seeing = 0;
    for (int c = 0; c < d->ncore; c++)
        for (int j = 0; j < d->ncore_wave; j++) {
            const double got = r.out.ivar[(size_t)(d->out_spec_first + c) * p->nwave_out + d->out_wave_first + j];
            if (bin_sees_data(&r, 0, c, j)) {
                seeing++;
                cr_expect(got > 0.0, "core %d bin %d sees data but has ivar %g", c, j, got);
            } else {
                blind++;
                cr_expect(got == 0.0, "core %d bin %d sees no unmasked pixel but has ivar %g", c, j, got);
            }
        }
    cr_expect(blind > 0 && seeing > 0, "the band should blind some bins and spare others: %d, %d", blind, seeing);
    run_close(&r);
}

Test(ex2d_patch_ref, model_and_chi2pix_follow_the_k7_formulas_with_a_masked_column)
{
    /* Noisy 4-patch frame, a masked column through fibre 2's trace (CCD x ~ 74.6 at these bins), every patch
     * in its own slot: the model is recomputed from xflux and the spots, chi2pix from the model. */
    ex2d_frame_config cfg = four_patch_config();
    cfg.nmasked_cols = 1;
    cfg.masked_cols[0] = 75;
    run r;
    run_open(&r, &cfg, 4);
    const ex2d_params *p = &r.f.params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    cr_assert(run_all(&r, 1) == 0);
    const ex2d_workspace w = carve(&r);
    int masked_bins = 0;
    for (int i = 0; i < r.f.npatch; i++) {
        const ex2d_patch_desc *d = &r.f.patches[i];
        const int box_x = d->xmax - d->xmin, box = box_x * (d->ymax - d->ymin), n = d->nspecpad * p->m;
        const double *xflux = w.xflux + (size_t)i * w.vec_stride, *model = w.model + (size_t)i * w.model_stride;
        double *want = calloc((size_t)box, sizeof(double));
        cr_assert(want);
        double model_max = 0.0, model_err = 0.0;
        for (int k = 0; k < n; k++) {
            const int64_t e = ex2d_ref_entry(p, d, k);
            for (int iy = 0; iy < ny; iy++)
                for (int ix = 0; ix < nx; ix++)
                    want[(r.f.yc[e] + iy - d->ymin) * box_x + r.f.xc[e] + ix - d->xmin] +=
                        r.f.spots[e * nx * ny + iy * nx + ix] * xflux[k];
        }
        for (int q = 0; q < box; q++) {
            model_max = fmax(model_max, fabs(want[q]));
            model_err = fmax(model_err, fabs(model[q] - want[q]));
        }
        cr_expect(model_err <= 1e-12 * model_max, "patch %d: model off by %g (max %g)", i, model_err, model_max);
        for (int c = 0; c < d->ncore; c++)
            for (int j = 0; j < d->ncore_wave; j++) {
                const int64_t e = ex2d_ref_entry(p, d, (d->core_first + c) * p->m + p->wavepad + j);
                double num = 0.0, den = 0.0, masked = 0.0;
                for (int iy = 0; iy < ny; iy++)
                    for (int ix = 0; ix < nx; ix++) {
                        const int x = r.f.xc[e] + ix, y = r.f.yc[e] + iy;
                        const double a = r.f.spots[e * nx * ny + iy * nx + ix],
                                     iv = r.f.ivar[(size_t)y * p->npix_x + x];
                        const double mod = want[(y - d->ymin) * box_x + x - d->xmin];
                        const double tot = iv > 0.0 ? 1.0 / (pow(0.01 * mod + 1e-32, 2) + 1.0 / iv) : 0.0;
                        const double chi = (r.f.image[(size_t)y * p->npix_x + x] - mod) * sqrt(tot);
                        num += a * chi * chi;
                        den += tot > 0.0 ? a : 0.0;
                        masked += iv == 0.0 ? a : 0.0;
                    }
                const size_t o = (size_t)(d->out_spec_first + c) * p->nwave_out + d->out_wave_first + j;
                const double want_chi2 = den > 0.0 ? num / den : 0.0;
                cr_expect(fabs(r.out.chi2pix[o] - want_chi2) <= 1e-10 + 1e-8 * fabs(want_chi2),
                          "patch %d core %d bin %d: chi2pix %.17g, want %.17g", i, c, j, r.out.chi2pix[o], want_chi2);
                cr_expect(fabs(r.out.pixmask_fraction[o] - masked) <= 1e-15, "pixmask_fraction %.17g, want %.17g",
                          r.out.pixmask_fraction[o], masked);
                masked_bins += masked > 0.0;
            }
        free(want);
    }
    cr_expect(masked_bins >= 100, "only %d core bins see the masked column", masked_bins);
    run_close(&r);
}

/* ---------------------------------------------------------------- statuses */

Test(ex2d_patch_ref, indefinite_icov_gives_not_posdef_and_a_zero_core)
{
    const ex2d_frame_config cfg = tier_config(EX2D_TIER_S);
    run r;
    run_open(&r, &cfg, 1);
    const ex2d_params *p = &r.f.params;
    const ex2d_workspace w = carve(&r);
    cr_assert(ex2d_ref_validate(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, 1) == 0);
    cr_assert(ex2d_ref_normal(p, &r.f.inputs, r.f.spots, 0, 1, r.ws, r.ws_bytes, 1, 1) == 0);
    w.icov[20 * (size_t)p->max_nspecpad * p->m + 20] = -1.0; /* a negative diagonal: no Cholesky factor */
    for (size_t i = 0; i < w.blk_stride; i++) w.cblk[i] = w.qblk[i] = SENTINEL;
    cr_assert(ex2d_ref_cholesky(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, r.out.info, 1) == 0);
    cr_expect(r.out.info[0].status == EX2D_PATCH_NOT_POSDEF);
    cr_assert(ex2d_ref_cblocks(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, r.out.info, 1) == 0);
    cr_assert(ex2d_ref_jacobi(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, r.out.info, 1) == 0);
    for (size_t i = 0; i < w.blk_stride; i++)
        cr_assert(w.cblk[i] == SENTINEL && w.qblk[i] == SENTINEL, "K5/K6 wrote a failed patch's blocks");
    fill_outputs(p, 0, &r.out, NAN);
    cr_assert(ex2d_ref_outputs(p, &r.f.inputs, r.f.spots, 0, 1, r.ws, r.ws_bytes, 1, &r.out, 1) == 0);
    for (size_t i = 0; i < frame_bins(p); i++) {
        cr_expect(r.out.flux[i] == 0.0 && r.out.ivar[i] == 0.0 && r.out.chi2pix[i] == 0.0, "bin %zu not zeroed", i);
        cr_expect(r.out.pixmask_fraction[i] == 0.0, "bin %zu pixmask_fraction %g", i, r.out.pixmask_fraction[i]);
        for (int dd = 0; dd < 2 * p->ndiag + 1; dd++)
            cr_expect(r.out.rdiags[(i / p->nwave_out * (2 * p->ndiag + 1) + dd) * p->nwave_out + i % p->nwave_out] ==
                      0.0);
    }
    cr_expect(strstr(ex2d_patch_status_str(r.out.info[0].status), "positive definite") != NULL);
    run_close(&r);
}

Test(ex2d_patch_ref, one_jacobi_sweep_is_not_enough_and_gives_not_converged)
{
    const ex2d_frame_config cfg = tier_config(EX2D_TIER_S);
    run r;
    run_open(&r, &cfg, 1);
    ex2d_params p = r.f.params;
    p.jacobi_max_sweeps = 1;
    fill_outputs(&p, 1, &r.out, NAN);
    cr_assert(ex2d_ref_patches(&p, &r.f.inputs, r.f.spots, 0, 1, 1, r.ws, r.ws_bytes, &r.out, 1) == 0);
    cr_expect(r.out.info[0].status == EX2D_PATCH_NOT_CONVERGED && r.out.info[0].sweeps_max == 1,
              "info {%d, %d, %d, %d}", r.out.info[0].status, r.out.info[0].clipped, r.out.info[0].sweeps_min,
              r.out.info[0].sweeps_max);
    for (size_t i = 0; i < frame_bins(&p); i++)
        cr_expect(r.out.flux[i] == 0.0 && r.out.ivar[i] == 0.0 && r.out.chi2pix[i] == 0.0 &&
                  r.out.pixmask_fraction[i] == 0.0);
    /* The default limit converges, in a few sweeps */
    cr_assert(run_all(&r, 1) == 0);
    cr_expect(r.out.info[0].status == EX2D_PATCH_OK && r.out.info[0].sweeps_max >= 2 && r.out.info[0].sweeps_max <= 15,
              "sweeps %d", r.out.info[0].sweeps_max);
    run_close(&r);
}

/* ---------------------------------------------------------------- stitching and threads */

Test(ex2d_patch_ref, each_patch_writes_exactly_its_core_and_the_cores_fill_the_frame)
{
    const ex2d_frame_config cfg = four_patch_config();
    run r;
    run_open(&r, &cfg, 2);
    const ex2d_params *p = &r.f.params;
    cr_assert(r.f.npatch == 4);
    fill_outputs(p, r.f.npatch, &r.out, NAN);
    cr_assert(run_all(&r, 1) == 0);
    const size_t bins = frame_bins(p);
    for (size_t i = 0; i < bins; i++)
        cr_assert(!isnan(r.out.flux[i]) && !isnan(r.out.ivar[i]) && !isnan(r.out.chi2pix[i]) &&
                      !isnan(r.out.pixmask_fraction[i]),
                  "frame bin %zu never written", i);
    for (size_t i = 0; i < bins * (2 * p->ndiag + 1); i++)
        cr_assert(!isnan(r.out.rdiags[i]), "Rdiags %zu unwritten", i);
    /* One patch at a time: only that patch's core and info change. */
    for (int i = 0; i < r.f.npatch; i++) {
        const ex2d_patch_desc *d = &r.f.patches[i];
        fill_outputs(p, r.f.npatch, &r.out, SENTINEL);
        cr_assert(ex2d_ref_patches(p, &r.f.inputs, r.f.spots, i, 1, 2, r.ws, r.ws_bytes, &r.out, 1) == 0);
        for (size_t b = 0; b < bins; b++) {
            const int s = (int)(b / p->nwave_out), wv = (int)(b % p->nwave_out);
            const int inside = s >= d->out_spec_first && s < d->out_spec_first + d->ncore && wv >= d->out_wave_first &&
                               wv < d->out_wave_first + d->ncore_wave;
            cr_assert((r.out.flux[b] != SENTINEL) == inside && (r.out.pixmask_fraction[b] != SENTINEL) == inside,
                      "patch %d, frame bin (%d, %d): written %d, inside its core %d", i, s, wv,
                      r.out.flux[b] != SENTINEL, inside);
        }
        for (int k = 0; k < r.f.npatch; k++) cr_assert((r.out.info[k].status == -9) == (k != i), "info of patch %d", k);
    }
    run_close(&r);
}

Test(ex2d_patch_ref, threads_and_batch_sizes_change_no_bit)
{
    const ex2d_frame_config cfg = four_patch_config();
    run r, t;
    run_open(&r, &cfg, 1);
    run_open(&t, &cfg, 3);
    const ex2d_params *p = &r.f.params;
    const size_t bins = frame_bins(p), nd = (size_t)(2 * p->ndiag + 1);
    cr_assert(run_all(&r, 1) == 0);
    static const int threads[] = {2, 3, 0};
    for (int i = 0; i < 3; i++) {
        fill_outputs(p, t.f.npatch, &t.out, NAN);
        cr_assert(run_all(&t, threads[i]) == 0);
        cr_expect(memcmp(r.out.flux, t.out.flux, bins * sizeof(double)) == 0, "flux, %d threads", threads[i]);
        cr_expect(memcmp(r.out.ivar, t.out.ivar, bins * sizeof(double)) == 0, "ivar, %d threads", threads[i]);
        cr_expect(memcmp(r.out.rdiags, t.out.rdiags, bins * nd * sizeof(double)) == 0, "rdiags, %d threads",
                  threads[i]);
        cr_expect(memcmp(r.out.chi2pix, t.out.chi2pix, bins * sizeof(double)) == 0, "chi2pix, %d threads", threads[i]);
        cr_expect(memcmp(r.out.pixmask_fraction, t.out.pixmask_fraction, bins * sizeof(double)) == 0);
        cr_expect(memcmp(r.out.info, t.out.info, r.f.npatch * sizeof(ex2d_patch_info)) == 0, "info");
    }
    for (int i = 0; i < r.f.npatch; i++) cr_expect(r.out.info[i].status == 0 && r.out.info[i].clipped == 0);
    run_close(&r);
    run_close(&t);
}

/* ---------------------------------------------------------------- counts */

Test(ex2d_patch_ref, witness_counts_match_a_direct_count)
{
    const ex2d_frame_config cfg = four_patch_config();
    run r;
    run_open(&r, &cfg, 1);
    const ex2d_params *p = &r.f.params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    for (int i = 0; i < r.f.npatch; i++) {
        const ex2d_patch_desc *d = &r.f.patches[i];
        const int n = d->nspecpad * p->m;
        int64_t pairs = 0;
        for (int a = 0; a < n; a++)
            for (int b = a; b < n; b++) { /* rectangles [xc, xc+nx) x [yc, yc+ny) intersect */
                const int64_t ea = ex2d_ref_entry(p, d, a), eb = ex2d_ref_entry(p, d, b);
                const int x0 = r.f.xc[ea] > r.f.xc[eb] ? r.f.xc[ea] : r.f.xc[eb];
                const int x1 = (r.f.xc[ea] < r.f.xc[eb] ? r.f.xc[ea] : r.f.xc[eb]) + nx;
                const int y0 = r.f.yc[ea] > r.f.yc[eb] ? r.f.yc[ea] : r.f.yc[eb];
                const int y1 = (r.f.yc[ea] < r.f.yc[eb] ? r.f.yc[ea] : r.f.yc[eb]) + ny;
                pairs += x0 < x1 && y0 < y1;
            }
        cr_expect(ex2d_ref_count_pairs(p, &r.f.inputs, i) == pairs, "patch %d: %lld pairs, want %lld", i,
                  (long long)ex2d_ref_count_pairs(p, &r.f.inputs, i), (long long)pairs);
        cr_expect(pairs > n && pairs < (int64_t)n * (n + 1) / 4, "patch %d: %lld pairs", i, (long long)pairs);
    }
    cr_expect(ex2d_ref_count_core_blocks(&r.f.inputs, 0, 4) == 4 * 5);
    cr_expect(ex2d_ref_count_core_bins(&r.f.inputs, 0, 4) == 10 * 50);
    cr_expect(ex2d_ref_count_core_bins(&r.f.inputs, 1, 2) == 2 * 5 * 25);
    cr_expect(ex2d_ref_count_pairs(p, &r.f.inputs, 4) == -1 && ex2d_ref_count_pairs(NULL, &r.f.inputs, 0) == -1);
    cr_expect(ex2d_ref_count_core_bins(&r.f.inputs, 2, 3) == -1 && ex2d_ref_count_core_blocks(NULL, 0, 1) == -1);
    run_close(&r);
}

/* ---------------------------------------------------------------- bad input ("Argument rules and per-patch statuses") */

/* Runs the driver on r with params p and inputs in; the outputs must stay at the sentinel. Returns its code. */
static int refused(run *r, const ex2d_params *p, const ex2d_inputs *in, int first, int npatch, int max_batch, void *ws,
                   size_t ws_bytes, const ex2d_outputs *out)
{
    fill_outputs(&r->f.params, r->f.npatch, &r->out, SENTINEL);
    const int rc = ex2d_ref_patches(p, in, r->f.spots, first, npatch, max_batch, ws, ws_bytes, out, 1);
    cr_assert(outputs_untouched(&r->f.params, r->f.npatch, &r->out, SENTINEL), "a refused call wrote its outputs");
    return rc;
}

Test(ex2d_patch_ref, every_host_argument_rule_refuses_and_writes_nothing)
{
    const ex2d_frame_config cfg = four_patch_config();
    run r;
    run_open(&r, &cfg, 2);
    const ex2d_params good = r.f.params;
    const ex2d_inputs in = r.f.inputs;
    const int np = r.f.npatch;
    cr_expect(refused(&r, NULL, &in, 0, np, 2, r.ws, r.ws_bytes, &r.out) == EX2D_ERR_NULL);
    cr_expect(refused(&r, &good, NULL, 0, np, 2, r.ws, r.ws_bytes, &r.out) == EX2D_ERR_NULL);
    for (int field = 0; field < 10; field++) {
        ex2d_inputs bad = in;
        const void **slot[] = {(const void **)&bad.image,    (const void **)&bad.ivar,   (const void **)&bad.psf_sigx,
                               (const void **)&bad.psf_sigy, (const void **)&bad.psf_dx, (const void **)&bad.psf_dy,
                               (const void **)&bad.psf_c,    (const void **)&bad.psf_xc, (const void **)&bad.psf_yc,
                               (const void **)&bad.patches};
        *slot[field] = NULL;
        cr_expect(refused(&r, &good, &bad, 0, np, 2, r.ws, r.ws_bytes, &r.out) == EX2D_ERR_NULL, "input %d NULL",
                  field);
    }
    for (int field = 0; field < 7; field++) {
        ex2d_outputs bad = r.out;
        switch (field) {
        case 0: bad.flux = NULL; break;
        case 1: bad.ivar = NULL; break;
        case 2: bad.rdiags = NULL; break;
        case 3: bad.chi2pix = NULL; break;
        case 4: bad.pixmask_fraction = NULL; break;
        case 5: bad.info = NULL; break;
        default: break;
        }
        const int rc = field < 6 ? refused(&r, &good, &in, 0, np, 2, r.ws, r.ws_bytes, &bad)
                                 : refused(&r, &good, &in, 0, np, 2, r.ws, r.ws_bytes, NULL);
        cr_expect(rc == EX2D_ERR_NULL, "output %d NULL: %d", field, rc);
    }
    fill_outputs(&good, np, &r.out, SENTINEL);
    cr_expect(ex2d_ref_patches(&good, &in, NULL, 0, np, 2, r.ws, r.ws_bytes, &r.out, 1) == EX2D_ERR_NULL);
    cr_expect(outputs_untouched(&good, np, &r.out, SENTINEL));

    /* Sizes, degrees, limits, numerics: one field at a time, in the order ex2d_check_args tests them. */
    static const int want[] = {EX2D_ERR_SIZE,   EX2D_ERR_SIZE,   EX2D_ERR_SIZE,   EX2D_ERR_SIZE,   EX2D_ERR_SIZE,
                               EX2D_ERR_SIZE,   EX2D_ERR_SIZE,   EX2D_ERR_SIZE,   EX2D_ERR_SIZE,   EX2D_ERR_SIZE,
                               EX2D_ERR_SIZE,   EX2D_ERR_SIZE,   EX2D_ERR_SIZE,   EX2D_ERR_DEGREE, EX2D_ERR_DEGREE,
                               EX2D_ERR_LIMIT,  EX2D_ERR_LIMIT,  EX2D_ERR_LIMIT,  EX2D_ERR_LIMIT,  EX2D_ERR_LIMIT,
                               EX2D_ERR_LIMIT,  EX2D_ERR_PARAM,  EX2D_ERR_PARAM,  EX2D_ERR_PARAM,  EX2D_ERR_PARAM,
                               EX2D_ERR_PARAM,  EX2D_ERR_PARAM,  EX2D_ERR_PARAM,  EX2D_ERR_PARAM,  EX2D_ERR_PARAM,
                               EX2D_ERR_PARAM,  EX2D_ERR_PARAM};
    for (int i = 0; i < (int)(sizeof(want) / sizeof(want[0])); i++) {
        ex2d_params p = good;
        switch (i) {
        case 0: p.nspec_tab = 0; break;
        case 1: p.nwave_tab = 0; break;
        case 2: p.npix_x = 0; break;
        case 3: p.npix_y = 0; break;
        case 4: p.nspec_out = 0; break;
        case 5: p.nwave_out = 0; break;
        case 6: p.m = 0; break;
        case 7: p.max_nspecpad = 0; break;
        case 8: p.max_ncore = 0; break;
        case 9: p.max_box_pixels = 0; break;
        case 10: p.hsizex = -1; break;
        case 11: p.hsizey = -1; break;
        case 12: p.wavepad = -1; break;
        case 13: p.gx = 9; break;
        case 14: p.gy = -1; break;
        case 15: p.m = 113; break;
        case 16: p.max_nspecpad = EX2D_MAX_N / p.m + 1; break; /* n above 1024 */
        case 17: p.hsizex = 16; break;
        case 18: p.hsizey = 16; break;
        case 19: p.max_ncore = 8; break;     /* more core spectra than padded ones */
        case 20: p.wavepad = (p.m + 1) / 2; break; /* 2*wavepad >= m */
        case 21: p.regularize = -1e-9; break;
        case 22: p.regularize = NAN; break;
        case 23: p.psferr = -0.1; break;
        case 24: p.psferr = INFINITY; break;
        case 25: p.jacobi_tol = 0.0; break;
        case 26: p.jacobi_tol = 1.0; break;
        case 27: p.jacobi_tol = NAN; break;
        case 28: p.jacobi_max_sweeps = 0; break;
        case 29: p.jacobi_max_sweeps = 101; break;
        case 30: p.ndiag = -1; break;
        default: p.ndiag = p.m; break;
        }
        const int rc = refused(&r, &p, &in, 0, np, 2, r.ws, r.ws_bytes, &r.out);
        cr_expect(rc == want[i], "rule %d: got %d (%s), want %d", i, rc, ex2d_error_str(rc), want[i]);
    }

    /* Ranges, batch and workspace */
    cr_expect(refused(&r, &good, &in, 0, 0, 2, r.ws, r.ws_bytes, &r.out) == EX2D_ERR_SIZE, "npatch 0");
    cr_expect(refused(&r, &good, &in, 0, np, 0, r.ws, r.ws_bytes, &r.out) == EX2D_ERR_SIZE, "max_batch 0");
    cr_expect(refused(&r, &good, &in, -1, 2, 2, r.ws, r.ws_bytes, &r.out) == EX2D_ERR_RANGE, "patch_first -1");
    cr_expect(refused(&r, &good, &in, 3, 2, 2, r.ws, r.ws_bytes, &r.out) == EX2D_ERR_RANGE, "past the last patch");
    cr_expect(refused(&r, &good, &in, 0, np, 2, NULL, r.ws_bytes, &r.out) == EX2D_ERR_WORKSPACE, "NULL workspace");
    cr_expect(refused(&r, &good, &in, 0, np, 2, (char *)r.ws + 8, r.ws_bytes - 256, &r.out) == EX2D_ERR_WORKSPACE,
              "misaligned workspace");
    cr_expect(refused(&r, &good, &in, 0, np, 2, r.ws, r.ws_bytes - 1, &r.out) == EX2D_ERR_WORKSPACE, "small workspace");
    cr_expect(refused(&r, &good, &in, 0, np, 3, r.ws, r.ws_bytes, &r.out) == EX2D_ERR_WORKSPACE,
              "workspace for 2 slots, max_batch 3");
    for (int code = 1; code <= EX2D_ERR_IMAGE; code++) cr_expect(strlen(ex2d_error_str(code)) > 10);
    run_close(&r);
}

/* ex2d_ref_patches over [first, first + npatch) that validation rejects: it returns the code, writes no frame
 * output, and marks every patch of the range, and only those, EX2D_PATCH_NOT_RUN. */
static int rejected(run *r, int first, int npatch)
{
    fill_outputs(&r->f.params, r->f.npatch, &r->out, SENTINEL);
    const int rc = ex2d_ref_patches(&r->f.params, &r->f.inputs, r->f.spots, first, npatch, 2, r->ws, r->ws_bytes,
                                    &r->out, 1);
    cr_expect(outputs_untouched_but_not_run(&r->f.params, r->f.npatch, &r->out, SENTINEL, first, npatch),
              "a range rejected by validation ([%d, %d)) wrote a frame output, or its info is not EX2D_PATCH_NOT_RUN "
              "for exactly the patches of the range", first, first + npatch);
    return rc;
}

/* One patch table or image defect; the device-validation rules must catch it on patch 2 (of 4) and report
 * patch 2 even though patch 3 is bad too. */
static void expect_validation(int code, void (*plant)(run *r, int patch))
{
    const ex2d_frame_config cfg = four_patch_config();
    run r;
    run_open(&r, &cfg, 2);
    plant(&r, 3);
    plant(&r, 2);
    int rc = rejected(&r, 0, r.f.npatch);
    const ex2d_workspace w = carve(&r);
    cr_expect(rc == code && w.check->code == code && w.check->patch == 2, "got %d (%s), check {%d, %d}, want %d", rc,
              ex2d_error_str(rc), w.check->code, w.check->patch, code);
    rc = rejected(&r, 2, 2); /* a range inside the frame: patches 0 and 1 keep their info */
    cr_expect(rc == code && w.check->patch == 2, "range [2, 4): got %d, check {%d, %d}, want %d", rc,
              w.check->code, w.check->patch, code);
    /* The range [0, 2) holds no bad patch. */
    cr_expect(ex2d_ref_validate(&r.f.params, &r.f.inputs, 0, 2, r.ws, r.ws_bytes, 2, 1) == 0 && w.check->code == 0 &&
              w.check->patch == -1);
    run_close(&r);
}

static void plant_spec_outside_table(run *r, int i) { r->f.patches[i].spec_first = r->f.params.nspec_tab - 2; }
static void plant_wave_outside_table(run *r, int i) {
    r->f.patches[i].wave_first = r->f.params.nwave_tab - r->f.params.m + 1;
}
static void plant_core_outside_frame(run *r, int i)
{
    r->f.patches[i].out_wave_first = r->f.params.nwave_out - r->f.patches[i].ncore_wave + 1;
}
static void plant_core_outside_patch(run *r, int i) { r->f.patches[i].core_first = r->f.patches[i].nspecpad - 4; }
static void plant_too_many_spectra(run *r, int i) { r->f.patches[i].nspecpad = r->f.params.max_nspecpad + 1; }
static void plant_box_outside(run *r, int i) { r->f.patches[i].xmax = r->f.params.npix_x + 1; }
static void plant_box_negative(run *r, int i) { r->f.patches[i].ymin = -1; }
static void plant_footprint_outside(run *r, int i) { r->f.patches[i].xmin += 1; }
static void set_box_pixel(run *r, int i, int which, double v)
{
    const ex2d_patch_desc *d = &r->f.patches[i];
    double *a = which ? (double *)r->f.inputs.image : (double *)r->f.inputs.ivar;
    a[(size_t)(d->ymax - 1) * r->f.params.npix_x + d->xmax - 1] = v; /* the box's last pixel */
}
static void plant_nan_ivar(run *r, int i) { set_box_pixel(r, i, 0, NAN); }
static void plant_negative_ivar(run *r, int i) { set_box_pixel(r, i, 0, -1e-300); }
static void plant_inf_ivar(run *r, int i) { set_box_pixel(r, i, 0, INFINITY); }
static void plant_inf_image(run *r, int i) { set_box_pixel(r, i, 1, -INFINITY); }
static void plant_nan_image(run *r, int i) { set_box_pixel(r, i, 1, NAN); }

Test(ex2d_patch_ref, patch_table_defects_are_caught_by_validation) {
    expect_validation(EX2D_ERR_PATCH_TABLE, plant_spec_outside_table);
    expect_validation(EX2D_ERR_PATCH_TABLE, plant_wave_outside_table);
    expect_validation(EX2D_ERR_PATCH_TABLE, plant_core_outside_frame);
    expect_validation(EX2D_ERR_PATCH_TABLE, plant_core_outside_patch);
    expect_validation(EX2D_ERR_PATCH_TABLE, plant_too_many_spectra);
}
Test(ex2d_patch_ref, boxes_outside_the_image_are_caught_by_validation) {
    expect_validation(EX2D_ERR_BOX, plant_box_outside);
    expect_validation(EX2D_ERR_BOX, plant_box_negative);
}
Test(ex2d_patch_ref, a_box_above_max_box_pixels_is_caught_by_validation)
{
    const ex2d_frame_config cfg = four_patch_config();
    run r;
    run_open(&r, &cfg, 2);
    int smallest = INT32_MAX;
    for (int i = 0; i < r.f.npatch; i++) {
        const ex2d_patch_desc *d = &r.f.patches[i];
        const int pixels = (d->xmax - d->xmin) * (d->ymax - d->ymin);
        if (pixels < smallest) smallest = pixels;
    }
    r.f.params.max_box_pixels = smallest - 1; /* every box is now too large; the first one is reported */
    const int rc = rejected(&r, 0, r.f.npatch);
    const ex2d_workspace w = carve(&r);
    cr_expect(rc == EX2D_ERR_BOX && w.check->code == EX2D_ERR_BOX && w.check->patch == 0, "got %d, check {%d, %d}", rc,
              w.check->code, w.check->patch);
    run_close(&r);
}
Test(ex2d_patch_ref, a_footprint_outside_its_box_is_caught_by_validation) {
    expect_validation(EX2D_ERR_FOOTPRINT, plant_footprint_outside);
}
Test(ex2d_patch_ref, bad_ivar_and_image_values_are_caught_by_validation) {
    expect_validation(EX2D_ERR_IVAR, plant_nan_ivar);
    expect_validation(EX2D_ERR_IVAR, plant_negative_ivar);
    expect_validation(EX2D_ERR_IVAR, plant_inf_ivar);
    expect_validation(EX2D_ERR_IMAGE, plant_inf_image);
    expect_validation(EX2D_ERR_IMAGE, plant_nan_image);
}

Test(ex2d_patch_ref, stages_read_the_check_word_and_only_k4_marks_its_batch_not_run)
{
    const ex2d_frame_config cfg = tier_config(EX2D_TIER_S);
    run r;
    run_open(&r, &cfg, 1);
    const ex2d_params *p = &r.f.params;
    const ex2d_workspace w = carve(&r);
    const size_t ws_doubles = (r.ws_bytes - EX2D_WORKSPACE_ALIGN) / sizeof(double);
    double *slots = (double *)((char *)r.ws + EX2D_WORKSPACE_ALIGN);
    for (size_t i = 0; i < ws_doubles; i++) slots[i] = SENTINEL;
    w.check->code = EX2D_ERR_IVAR, w.check->patch = 0;
    fill_outputs(p, 1, &r.out, SENTINEL);
    cr_expect(ex2d_ref_normal(p, &r.f.inputs, r.f.spots, 0, 1, r.ws, r.ws_bytes, 1, 1) == EX2D_ERR_IVAR);
    cr_expect(ex2d_ref_cholesky(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, r.out.info, 1) == EX2D_ERR_IVAR);
    cr_expect(ex2d_ref_cblocks(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, r.out.info, 1) == EX2D_ERR_IVAR);
    cr_expect(ex2d_ref_jacobi(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, r.out.info, 1) == EX2D_ERR_IVAR);
    cr_expect(ex2d_ref_outputs(p, &r.f.inputs, r.f.spots, 0, 1, r.ws, r.ws_bytes, 1, &r.out, 1) == EX2D_ERR_IVAR);
    for (size_t i = 0; i < ws_doubles; i++) cr_assert(slots[i] == SENTINEL, "workspace double %zu written", i);
    cr_expect(outputs_untouched_but_not_run(p, 1, &r.out, SENTINEL, 0, 1),
              "after a failed validation K4 marks its batch EX2D_PATCH_NOT_RUN and nothing else is written");
    /* nbatch above max_batch, or 0 */
    w.check->code = 0;
    cr_expect(ex2d_ref_normal(p, &r.f.inputs, r.f.spots, 0, 2, r.ws, r.ws_bytes, 1, 1) == EX2D_ERR_RANGE);
    cr_expect(ex2d_ref_normal(p, &r.f.inputs, r.f.spots, 0, 0, r.ws, r.ws_bytes, 1, 1) == EX2D_ERR_SIZE);
    cr_expect(ex2d_ref_normal(p, &r.f.inputs, NULL, 0, 1, r.ws, r.ws_bytes, 1, 1) == EX2D_ERR_NULL);
    cr_expect(ex2d_ref_cholesky(p, &r.f.inputs, 0, 1, r.ws, r.ws_bytes, 1, NULL, 1) == EX2D_ERR_NULL);
    for (size_t i = 0; i < ws_doubles; i++) cr_assert(slots[i] == SENTINEL, "workspace double %zu written", i);
    run_close(&r);
}

Test(ex2d_patch_ref, spots_dense_path_and_helpers_refuse_bad_arguments)
{
    const ex2d_frame_config cfg = tier_config(EX2D_TIER_S);
    run r;
    run_open(&r, &cfg, 1);
    const ex2d_params *p = &r.f.params;
    const int entries = p->nspec_tab * p->nwave_tab;
    double spot[187];
    cr_expect(ex2d_ref_spots(NULL, &r.f.inputs, 0, 1, spot, 1) == EX2D_ERR_NULL);
    cr_expect(ex2d_ref_spots(p, NULL, 0, 1, spot, 1) == EX2D_ERR_NULL);
    cr_expect(ex2d_ref_spots(p, &r.f.inputs, 0, 1, NULL, 1) == EX2D_ERR_NULL);
    cr_expect(ex2d_ref_spots(p, &r.f.inputs, 0, 0, r.f.spots, 1) == EX2D_ERR_SIZE);
    cr_expect(ex2d_ref_spots(p, &r.f.inputs, -1, 1, r.f.spots, 1) == EX2D_ERR_RANGE);
    cr_expect(ex2d_ref_spots(p, &r.f.inputs, entries - 1, 2, r.f.spots, 1) == EX2D_ERR_RANGE);
    ex2d_params bad = *p;
    bad.gx = 9;
    cr_expect(ex2d_ref_spots(&bad, &r.f.inputs, 0, 1, r.f.spots, 1) == EX2D_ERR_DEGREE);
    double one[4];
    cr_expect(ex2d_ref_dense_a(p, &r.f.inputs, r.f.spots, 1, one) == EX2D_ERR_RANGE);
    cr_expect(ex2d_ref_dense_a(p, &r.f.inputs, NULL, 0, one) == EX2D_ERR_NULL);
    cr_expect(ex2d_ref_dense_normal(p, &r.f.inputs, NULL, 0, one, one, one) == EX2D_ERR_NULL);
    r.f.patches[0].xmin += 1;
    cr_expect(ex2d_ref_dense_a(p, &r.f.inputs, r.f.spots, 0, one) == EX2D_ERR_FOOTPRINT);
    void *ws = NULL;
    size_t bytes = 0;
    cr_expect(ex2d_ref_workspace_alloc(p, 0, &ws, &bytes) == EX2D_ERR_WORKSPACE && ws == NULL);
    cr_expect(ex2d_ref_workspace_alloc(NULL, 1, &ws, &bytes) == EX2D_ERR_NULL);
    ex2d_outputs o;
    cr_expect(ex2d_ref_outputs_alloc(p, 0, &o) == EX2D_ERR_SIZE &&
              ex2d_ref_outputs_alloc(NULL, 1, &o) == EX2D_ERR_NULL);
    run_close(&r);
}

/* The GPU example test compiles the header's example block; this CPU test catches a drift between the two
 * on machines without a GPU, where that test only skips. */
Test(ex2d_patch_ref, the_header_example_is_compiled_verbatim_by_the_example_test)
{
    gw_assert_example_verbatim(GW_EX2D_PATCH_HEADER, GW_EX2D_PATCH_EXAMPLE);
}

#else /* GW_EX2D_LARGE_TIERS: tiers M and L, test_ex2d_patch_tiers (too slow for Valgrind) */

#include <time.h>

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

Test(ex2d_patch_tiers, tier_m_dense_normal_equations_equal_the_overlap_form_bit_for_bit)
{
    check_dense_equals_overlap(EX2D_TIER_M);
}

Test(ex2d_patch_tiers, tier_m_satisfies_the_invariants_and_the_noiseless_bounds)
{
    check_invariants(EX2D_TIER_M);
}

Test(ex2d_patch_tiers, tier_m_driver_recovers_r_f_true_and_the_image)
{
    const ex2d_frame_config cfg = tier_config(EX2D_TIER_M);
    run r;
    run_open(&r, &cfg, 1);
    fill_outputs(&r.f.params, 1, &r.out, NAN);
    const double t0 = seconds();
    cr_assert(run_all(&r, 1) == 0);
    cr_log_info("tier M reference: %.3f s for 1 patch (n = 518), one thread", seconds() - t0);
    cr_expect(r.out.info[0].status == 0 && r.out.info[0].clipped == 0);
    expect_noiseless(&r, 0, 0);
    run_close(&r);
}

Test(ex2d_patch_tiers, tier_l_noisy_chi_is_unit_normal_stitched_and_thread_independent)
{
    /* One run with all 47 patches in the workspace (their Q blocks give R f_true), one with 2 threads in
     * batches of 8: bitwise equal frame outputs. */
    const ex2d_frame_config cfg = tier_config(EX2D_TIER_L);
    run r, t;
    run_open(&r, &cfg, 47);
    run_open(&t, &cfg, 8);
    const ex2d_params *p = &r.f.params;
    const size_t bins = frame_bins(p), nd = (size_t)(2 * p->ndiag + 1);
    cr_assert(r.f.npatch == 47);
    fill_outputs(p, r.f.npatch, &r.out, NAN);
    fill_outputs(p, t.f.npatch, &t.out, NAN);
    double t0 = seconds();
    cr_assert(run_all(&r, 1) == 0);
    const double single = seconds() - t0;
    t0 = seconds();
    cr_assert(run_all(&t, 2) == 0);
    const double threaded = seconds() - t0;
    cr_log_info("tier L reference: %.3f s single-threaded (%.4f s per patch), %.3f s with 2 threads", single,
                single / r.f.npatch, threaded);
    for (size_t i = 0; i < bins; i++)
        cr_assert(!isnan(r.out.flux[i]) && !isnan(r.out.ivar[i]) && !isnan(r.out.chi2pix[i]) &&
                      !isnan(r.out.pixmask_fraction[i]),
                  "frame bin %zu never written", i);
    for (size_t i = 0; i < bins * nd; i++) cr_assert(!isnan(r.out.rdiags[i]), "Rdiags %zu never written", i);
    cr_expect(memcmp(r.out.flux, t.out.flux, bins * sizeof(double)) == 0, "flux differs with 2 threads");
    cr_expect(memcmp(r.out.ivar, t.out.ivar, bins * sizeof(double)) == 0, "ivar differs with 2 threads");
    cr_expect(memcmp(r.out.rdiags, t.out.rdiags, bins * nd * sizeof(double)) == 0, "Rdiags differ with 2 threads");
    cr_expect(memcmp(r.out.chi2pix, t.out.chi2pix, bins * sizeof(double)) == 0, "chi2pix differs with 2 threads");
    cr_expect(memcmp(r.out.pixmask_fraction, t.out.pixmask_fraction, bins * sizeof(double)) == 0);
    cr_expect(memcmp(r.out.info, t.out.info, (size_t)r.f.npatch * sizeof(ex2d_patch_info)) == 0, "info differs");

    double sum = 0.0, sum2 = 0.0, chi2pix = 0.0;
    size_t count = 0;
    for (int i = 0; i < r.f.npatch; i++) {
        const ex2d_patch_desc *d = &r.f.patches[i];
        const ex2d_patch_info *info = &r.out.info[i];
        cr_expect(info->status == 0 && info->clipped == 0 && info->sweeps_min >= 1 &&
                      info->sweeps_max <= p->jacobi_max_sweeps,
                  "patch %d info {%d, %d, %d, %d}", i, info->status, info->clipped, info->sweeps_min, info->sweeps_max);
        for (int c = 0; c < d->ncore; c++)
            for (int j = 0; j < d->ncore_wave; j++) {
                const size_t o = (size_t)(d->out_spec_first + c) * p->nwave_out + d->out_wave_first + j;
                const double chi = (r.out.flux[o] - r_times_truth(&r, i, i, c, j)) * sqrt(r.out.ivar[o]);
                sum += chi;
                sum2 += chi * chi;
                chi2pix += r.out.chi2pix[o];
                count++;
            }
    }
    const double mean = sum / (double)count, std = sqrt(sum2 / (double)count - mean * mean);
    cr_log_info("tier L: chi = (flux - R f_true) sqrt(ivar) over %zu core bins: mean %.4f, std %.4f; mean chi2pix %.4f",
                count, mean, std, chi2pix / (double)count);
    cr_expect(count >= 2000 && count == bins, "%zu core bins", count);
    cr_expect(fabs(std - 1.0) <= 0.1, "std of chi %.4f is not within 10 %% of 1", std);
    cr_expect(fabs(mean) <= 0.1, "mean of chi %.4f", mean);
    run_close(&r);
    run_close(&t);
}

#endif /* GW_EX2D_LARGE_TIERS */
