/* SPDX-License-Identifier: MIT */
#include "ex2d_gpu_checks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "ex2d_compare.h"
#include "gw_gpu_test.h"

static int npad_bins(const ex2d_gpu_case *t, int patch) { return t->f.patches[patch].nspecpad * t->f.params.m; }

static size_t nmax(const ex2d_gpu_case *t) { return (size_t)t->f.params.max_nspecpad * (size_t)t->f.params.m; }

static int ref_status(const ex2d_gpu_case *t, int patch) { return t->ref_out.info[patch].status; }

size_t ex2d_check_validation_word(const ex2d_gpu_case *t, int code, int patch)
{
    const ex2d_check_word *w = t->got_w.check;
    if (w->code == code && w->patch == patch) return 0;
    fprintf(stderr, "check word {code %d, patch %d}, expected {%d, %d} (%s)\n", w->code, w->patch, code, patch,
            ex2d_error_str(code));
    return 1;
}

size_t ex2d_check_spots(const ex2d_gpu_case *t, size_t first, size_t count)
{
    const ex2d_params *p = &t->f.params;
    const int nx = 2 * p->hsizex + 1;
    ex2d_cmp values, untouched;
    ex2d_cmp_init(&values, "K1 spot [entry][pixel]", t->spot_pixels);
    ex2d_cmp_init(&untouched, "K1 spot outside the entry range [entry][pixel]", t->spot_pixels);
    size_t bad_invariants = 0;
    for (size_t e = 0; e < t->entries; e++) {
        const double *got = t->got_spots + e * t->spot_pixels, *ref = t->f.spots + e * t->spot_pixels;
        if (e < first || e >= first + count) {
            for (size_t q = 0; q < t->spot_pixels; q++) ex2d_cmp_untouched(&untouched, e * t->spot_pixels + q, got[q]);
            continue;
        }
        double sum = 0.0, mx = 0.0, my = 0.0;
        int negative = 0;
        for (size_t q = 0; q < t->spot_pixels; q++) {
            ex2d_cmp_close(&values, e * t->spot_pixels + q, got[q], ref[q], 1e-14, 0.0);
            if (!(got[q] >= 0.0)) negative = 1;
            sum += got[q];
            mx += got[q] * (double)(q % (size_t)nx);
            my += got[q] * (double)(q / (size_t)nx);
        }
        const double cx = mx / sum - p->hsizex, cy = my / sum - p->hsizey;
        const int bad =
            negative || !(fabs(sum - 1.0) <= 1e-14) || !(cx >= -0.7 && cx < 0.7) || !(cy >= -0.7 && cy < 0.7);
        if (bad && ++bad_invariants <= EX2D_CMP_SHOW)
            fprintf(stderr, "  K1 spot %zu: %s, sum - 1 = %.3g, centroid (%.3f, %.3f) px from the centre pixel\n", e,
                    negative ? "a negative or NaN value" : "values >= 0", sum - 1.0, cx, cy);
    }
    if (bad_invariants) fprintf(stderr, "K1 spots: %zu break the invariants (docs/ex2d_patch.md, \"Invariants\")\n", bad_invariants);
    return ex2d_cmp_report(&values) + ex2d_cmp_report(&untouched) + bad_invariants;
}

size_t ex2d_check_normal(const ex2d_gpu_case *t, int first, int count)
{
    const size_t ld = nmax(t);
    size_t failed = 0;
    for (int b = 0; b < count; b++) {
        const int patch = first + b;
        const size_t n = (size_t)npad_bins(t, patch);
        const ex2d_gc_slot got = ex2d_gc_slot_of(t, &t->got_w, b), ref = ex2d_gc_slot_of(t, &t->ref_w, b);
        char what_icov[96], what_y[96], what_fw[96];
        snprintf(what_icov, sizeof what_icov, "K3 iCov of patch %d", patch);
        snprintf(what_y, sizeof what_y, "K3 y of patch %d", patch);
        snprintf(what_fw, sizeof what_fw, "K3 fluxweight of patch %d", patch);
        ex2d_cmp icov, y, fw;
        ex2d_cmp_init(&icov, what_icov, ld);
        ex2d_cmp_init(&y, what_y, 0);
        ex2d_cmp_init(&fw, what_fw, 0);
        for (size_t a = 0; a < ld; a++) {
            for (size_t c = 0; c < ld; c++) {
                const size_t i = a * ld + c;
                if (a < n && c < n)
                    ex2d_cmp_bits(&icov, i, got.icov[i], ref.icov[i]);
                else
                    ex2d_cmp_untouched(&icov, i, got.icov[i]); /* padding of a smaller patch */
            }
            if (a < n) {
                ex2d_cmp_bits(&y, a, got.y[a], ref.y[a]);
                ex2d_cmp_bits(&fw, a, got.fluxweight[a], ref.fluxweight[a]);
            } else {
                ex2d_cmp_untouched(&y, a, got.y[a]);
                ex2d_cmp_untouched(&fw, a, got.fluxweight[a]);
            }
        }
        failed += ex2d_cmp_report(&icov) + ex2d_cmp_report(&y) + ex2d_cmp_report(&fw);
    }
    return failed;
}

static size_t check_info_equal(const ex2d_gpu_case *t, int patch, const char *stage)
{
    const ex2d_patch_info *g = &t->got_out.info[patch], *r = &t->ref_out.info[patch];
    if (memcmp(g, r, sizeof *g) == 0) return 0;
    fprintf(stderr, "%s info of patch %d: gpu {%d, %d, %d, %d}, reference {%d, %d, %d, %d}\n", stage, patch, g->status,
            g->clipped, g->sweeps_min, g->sweeps_max, r->status, r->clipped, r->sweeps_min, r->sweeps_max);
    return 1;
}

size_t ex2d_check_cholesky(const ex2d_gpu_case *t, int first, int count, const double *icov_k3)
{
    const size_t ld = nmax(t);
    size_t failed = 0;
    for (int b = 0; b < count; b++) {
        const int patch = first + b;
        const size_t n = (size_t)npad_bins(t, patch);
        failed += check_info_equal(t, patch, "K4");
        if (ref_status(t, patch) != EX2D_PATCH_OK) continue;
        const ex2d_gc_slot got = ex2d_gc_slot_of(t, &t->got_w, b), ref = ex2d_gc_slot_of(t, &t->ref_w, b);
        const double *a = icov_k3 + (size_t)b * t->got_w.icov_stride;
        char what_x[96], what_upper[96], what_llt[96];
        snprintf(what_x, sizeof what_x, "K4 xflux of patch %d", patch);
        snprintf(what_upper, sizeof what_upper, "K4 strict upper triangle (must keep iCov) of patch %d", patch);
        snprintf(what_llt, sizeof what_llt, "K4 L L^T against iCov, patch %d", patch);
        ex2d_cmp x, upper, llt;
        ex2d_cmp_init(&x, what_x, 0);
        ex2d_cmp_init(&upper, what_upper, ld);
        ex2d_cmp_init(&llt, what_llt, ld);
        const double x_max = ex2d_max_abs(ref.xflux, n);
        double a_max = 0.0;
        for (size_t r = 0; r < n; r++) a_max = fmax(a_max, ex2d_max_abs(a + r * ld, n));
        for (size_t k = 0; k < ld; k++) {
            if (k < n)
                ex2d_cmp_close(&x, k, got.xflux[k], ref.xflux[k], 1e-10 * x_max, 0.0);
            else
                ex2d_cmp_untouched(&x, k, got.xflux[k]);
        }
        for (size_t r = 0; r < n; r++) {
            const double *lr = got.icov + r * ld;
            for (size_t c = 0; c < n; c++) {
                if (c > r) {
                    ex2d_cmp_bits(&upper, r * ld + c, lr[c], a[r * ld + c]);
                    continue;
                }
                const double *lc = got.icov + c * ld;
                double sum = 0.0;
                for (size_t k = 0; k <= c; k++) sum += lr[k] * lc[k];
                ex2d_cmp_close(&llt, r * ld + c, sum, a[r * ld + c], 1e-12 * a_max, 0.0);
            }
        }
        failed += ex2d_cmp_report(&x) + ex2d_cmp_report(&upper) + ex2d_cmp_report(&llt);
    }
    return failed;
}

size_t ex2d_check_cblocks(const ex2d_gpu_case *t, int first, int count)
{
    const int m = t->f.params.m;
    const size_t mm = (size_t)m * (size_t)m;
    size_t failed = 0;
    for (int b = 0; b < count; b++) {
        const int patch = first + b;
        const ex2d_gc_slot got = ex2d_gc_slot_of(t, &t->got_w, b), ref = ex2d_gc_slot_of(t, &t->ref_w, b);
        const int ncore = ref_status(t, patch) != EX2D_PATCH_NOT_POSDEF ? t->f.patches[patch].ncore : 0;
        for (int c = 0; c < t->f.params.max_ncore; c++) {
            char what[96];
            snprintf(what, sizeof what, "K5 C block %d of patch %d", c, patch);
            ex2d_cmp cmp;
            ex2d_cmp_init(&cmp, what, (size_t)m);
            const double *g = got.cblk + (size_t)c * mm, *r = ref.cblk + (size_t)c * mm;
            const double r_max = c < ncore ? ex2d_max_abs(r, mm) : 0.0;
            for (size_t i = 0; i < mm; i++) {
                if (c < ncore)
                    ex2d_cmp_close(&cmp, i, g[i], r[i], 1e-10 * r_max, 0.0);
                else
                    ex2d_cmp_untouched(&cmp, i, g[i]); /* no such core block, or a failed patch */
            }
            failed += ex2d_cmp_report(&cmp);
        }
    }
    return failed;
}

/* Q symmetric bit for bit and ||Q C Q - I||_max <= 1e-10, on the GPU's own C and Q. */
static size_t check_q_invariants(const ex2d_gpu_case *t, const double *q, const double *c, int patch, int block)
{
    const int m = t->f.params.m;
    double *qc = malloc((size_t)m * m * sizeof(double));
    cr_assert(qc);
    char what_sym[96], what_id[96];
    snprintf(what_sym, sizeof what_sym, "K6 Q symmetry, block %d of patch %d", block, patch);
    snprintf(what_id, sizeof what_id, "K6 Q C Q - I, block %d of patch %d", block, patch);
    ex2d_cmp sym, id;
    ex2d_cmp_init(&sym, what_sym, (size_t)m);
    ex2d_cmp_init(&id, what_id, (size_t)m);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            ex2d_cmp_bits(&sym, (size_t)i * m + j, q[i * m + j], q[j * m + i]);
            double s = 0.0;
            for (int k = 0; k < m; k++) s += q[i * m + k] * c[k * m + j];
            qc[i * m + j] = s;
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double s = 0.0;
            for (int k = 0; k < m; k++) s += qc[i * m + k] * q[k * m + j];
            ex2d_cmp_close(&id, (size_t)i * m + j, s, i == j ? 1.0 : 0.0, 1e-10, 0.0);
        }
    free(qc);
    return ex2d_cmp_report(&sym) + ex2d_cmp_report(&id);
}

/* info of a patch after K6: the status equals the reference's; a converged patch also has no clipped
 * eigenvalue (well conditioned) and sweeps in 1..jacobi_max_sweeps. Sweep counts differ between orderings. */
static size_t check_info_after_jacobi(const ex2d_gpu_case *t, int patch)
{
    const ex2d_patch_info *g = &t->got_out.info[patch], *r = &t->ref_out.info[patch];
    const int max_sweeps = t->f.params.jacobi_max_sweeps;
    int bad = g->status != r->status;
    if (r->status == EX2D_PATCH_OK)
        bad |= g->clipped != 0 || r->clipped != 0 || g->sweeps_min < 1 || g->sweeps_min > g->sweeps_max ||
               g->sweeps_max > max_sweeps;
    else if (r->status == EX2D_PATCH_NOT_CONVERGED)
        bad |= g->sweeps_max != max_sweeps;
    else
        bad |= memcmp(g, r, sizeof *g) != 0; /* NOT_POSDEF: K6 left K4's record alone */
    if (!bad) return 0;
    fprintf(stderr,
            "K6 info of patch %d: gpu {status %d, clipped %d, sweeps %d..%d}, reference {status %d, clipped %d, "
            "sweeps %d..%d}; sweeps must lie in 1..%d and nothing may be clipped\n",
            patch, g->status, g->clipped, g->sweeps_min, g->sweeps_max, r->status, r->clipped, r->sweeps_min,
            r->sweeps_max, max_sweeps);
    return 1;
}

size_t ex2d_check_jacobi(const ex2d_gpu_case *t, int first, int count)
{
    const int m = t->f.params.m;
    const size_t mm = (size_t)m * (size_t)m;
    size_t failed = 0;
    for (int b = 0; b < count; b++) {
        const int patch = first + b, status = ref_status(t, patch);
        failed += check_info_after_jacobi(t, patch);
        const ex2d_gc_slot got = ex2d_gc_slot_of(t, &t->got_w, b), ref = ex2d_gc_slot_of(t, &t->ref_w, b);
        for (int c = 0; c < t->f.params.max_ncore; c++) {
            const int exists = c < t->f.patches[patch].ncore;
            if (status == EX2D_PATCH_NOT_CONVERGED && exists) continue; /* Q of a failed block is unspecified */
            char what[96];
            snprintf(what, sizeof what, "K6 Q block %d of patch %d", c, patch);
            ex2d_cmp cmp;
            ex2d_cmp_init(&cmp, what, (size_t)m);
            const double *g = got.qblk + (size_t)c * mm, *r = ref.qblk + (size_t)c * mm;
            const int compare = exists && status == EX2D_PATCH_OK;
            const double r_max = compare ? ex2d_max_abs(r, mm) : 0.0;
            for (size_t i = 0; i < mm; i++) {
                if (compare)
                    ex2d_cmp_close(&cmp, i, g[i], r[i], 1e-10 * r_max, 0.0);
                else
                    ex2d_cmp_untouched(&cmp, i, g[i]);
            }
            failed += ex2d_cmp_report(&cmp);
            if (compare && cmp.failed == 0) failed += check_q_invariants(t, g, got.cblk + (size_t)c * mm, patch, c);
        }
    }
    return failed;
}

size_t ex2d_check_model(const ex2d_gpu_case *t, int first, int count)
{
    size_t failed = 0;
    for (int b = 0; b < count; b++) {
        const int patch = first + b;
        const ex2d_patch_desc *d = &t->f.patches[patch];
        const size_t pixels = (size_t)(d->xmax - d->xmin) * (size_t)(d->ymax - d->ymin);
        const ex2d_gc_slot got = ex2d_gc_slot_of(t, &t->got_w, b), ref = ex2d_gc_slot_of(t, &t->ref_w, b);
        char what[96];
        snprintf(what, sizeof what, "K7 model of patch %d [box row][box column]", patch);
        ex2d_cmp cmp;
        ex2d_cmp_init(&cmp, what, (size_t)(d->xmax - d->xmin));
        const int ok = ref_status(t, patch) == EX2D_PATCH_OK;
        const double r_max = ok ? ex2d_max_abs(ref.model, pixels) : 0.0;
        for (size_t q = 0; q < pixels; q++) {
            if (ok)
                ex2d_cmp_close(&cmp, q, got.model[q], ref.model[q], 1e-10 * r_max, 0.0);
            else
                ex2d_cmp_untouched(&cmp, q, got.model[q]); /* a failed patch leaves its model slot alone */
        }
        failed += ex2d_cmp_report(&cmp);
    }
    return failed;
}

/* Owner patch of every frame bin among [first, first + count), -1 for none (cores tile, so one owner). */
static int *core_owners(const ex2d_gpu_case *t, int first, int count)
{
    int *owner = malloc(t->bins * sizeof(int));
    cr_assert(owner);
    for (size_t i = 0; i < t->bins; i++) owner[i] = -1;
    for (int patch = first; patch < first + count; patch++) {
        const ex2d_patch_desc *d = &t->f.patches[patch];
        for (int c = 0; c < d->ncore; c++)
            for (int j = 0; j < d->ncore_wave; j++)
                owner[(size_t)(d->out_spec_first + c) * t->f.params.nwave_out + d->out_wave_first + j] = patch;
    }
    return owner;
}

size_t ex2d_check_frame(const ex2d_gpu_case *t, int first, int count)
{
    const ex2d_params *p = &t->f.params;
    const ex2d_outputs *g = &t->got_out, *r = &t->ref_out;
    int *owner = core_owners(t, first, count);
    ex2d_cmp flux, ivar, rdiags, chi2, mask;
    ex2d_cmp_init(&flux, "K7 flux [spectrum][bin] (pull)", (size_t)p->nwave_out);
    ex2d_cmp_init(&ivar, "K7 ivar [spectrum][bin]", (size_t)p->nwave_out);
    ex2d_cmp_init(&rdiags, "K7 Rdiags [spectrum*ndiags + d][bin]", (size_t)p->nwave_out);
    ex2d_cmp_init(&chi2, "K7 chi2pix [spectrum][bin]", (size_t)p->nwave_out);
    ex2d_cmp_init(&mask, "K7 pixmask_fraction [spectrum][bin]", (size_t)p->nwave_out);
    for (size_t i = 0; i < t->bins; i++) {
        const size_t s = i / (size_t)p->nwave_out, w = i % (size_t)p->nwave_out;
        if (owner[i] < 0) { /* no patch of the range writes here */
            ex2d_cmp_untouched(&flux, i, g->flux[i]);
            ex2d_cmp_untouched(&ivar, i, g->ivar[i]);
            ex2d_cmp_untouched(&chi2, i, g->chi2pix[i]);
            ex2d_cmp_untouched(&mask, i, g->pixmask_fraction[i]);
            for (int d = 0; d < t->ndiags; d++) {
                const size_t at = (s * (size_t)t->ndiags + (size_t)d) * (size_t)p->nwave_out + w;
                ex2d_cmp_untouched(&rdiags, at, g->rdiags[at]);
            }
            continue;
        }
        const int ok = ref_status(t, owner[i]) == EX2D_PATCH_OK;
        ex2d_cmp_close(&mask, i, g->pixmask_fraction[i], r->pixmask_fraction[i], 2e-12, 0.0);
        if (!ok) { /* a failed patch writes exact zeros */
            ex2d_cmp_bits(&flux, i, g->flux[i], r->flux[i]);
            ex2d_cmp_bits(&ivar, i, g->ivar[i], r->ivar[i]);
            ex2d_cmp_bits(&chi2, i, g->chi2pix[i], r->chi2pix[i]);
        } else {
            /* pull |dflux| sqrt(ivar) <= 1e-9 */
            ex2d_cmp_close(&flux, i, g->flux[i], r->flux[i], r->ivar[i] > 0.0 ? 1e-9 / sqrt(r->ivar[i]) : 0.0, 0.0);
            ex2d_cmp_close(&ivar, i, g->ivar[i], r->ivar[i], 0.0, 1e-10);
            ex2d_cmp_close(&chi2, i, g->chi2pix[i], r->chi2pix[i], 1e-10, 1e-8);
        }
        for (int d = 0; d < t->ndiags; d++) {
            const size_t at = (s * (size_t)t->ndiags + (size_t)d) * (size_t)p->nwave_out + w;
            if (ok)
                ex2d_cmp_close(&rdiags, at, g->rdiags[at], r->rdiags[at], 1e-10, 0.0);
            else
                ex2d_cmp_bits(&rdiags, at, g->rdiags[at], r->rdiags[at]);
        }
    }
    free(owner);
    size_t failed = ex2d_cmp_report(&flux) + ex2d_cmp_report(&ivar) + ex2d_cmp_report(&rdiags) +
                    ex2d_cmp_report(&chi2) + ex2d_cmp_report(&mask);
    for (int patch = first; patch < first + count; patch++) failed += check_info_after_jacobi(t, patch);
    return failed;
}

size_t ex2d_check_noiseless(const ex2d_gpu_case *t, int first, int count)
{
    const ex2d_params *p = &t->f.params;
    const int m = p->m;
    ex2d_cmp flux, model, rows;
    ex2d_cmp_init(&flux, "noiseless flux against R f_true [spectrum][bin]", (size_t)p->nwave_out);
    ex2d_cmp_init(&model, "noiseless A xflux against the image [pixel]", 0);
    ex2d_cmp_init(&rows, "row sums of R [core block][row]", (size_t)m);
    for (int b = 0; b < count; b++) {
        const int patch = first + b;
        const ex2d_patch_desc *d = &t->f.patches[patch];
        if (ref_status(t, patch) != EX2D_PATCH_OK) continue;
        const ex2d_gc_slot got = ex2d_gc_slot_of(t, &t->got_w, b);
        for (int c = 0; c < d->ncore; c++) {
            const double *q = got.qblk + (size_t)c * m * m;
            const int spec = d->spec_first + d->core_first + c;
            for (int r = 0; r < m; r++) {
                double s = 0.0, rsum = 0.0, rf = 0.0;
                for (int j = 0; j < m; j++) s += q[r * m + j];
                for (int j = 0; j < m; j++) {
                    rsum += q[r * m + j] / s;
                    rf += q[r * m + j] / s * t->f.f_true[(size_t)spec * p->nwave_tab + d->wave_first + j];
                }
                ex2d_cmp_close(&rows, (size_t)c * m + r, rsum, 1.0, 1e-13, 0.0);
                if (r < p->wavepad || r >= p->wavepad + d->ncore_wave) continue;
                const size_t at = (size_t)(d->out_spec_first + c) * p->nwave_out + d->out_wave_first + r - p->wavepad;
                ex2d_cmp_close(&flux, at, t->got_out.flux[at], rf, 0.0, 1e-9);
            }
        }
        const int box_x = d->xmax - d->xmin;
        for (int y = d->ymin; y < d->ymax; y++)
            for (int x = d->xmin; x < d->xmax; x++) {
                const size_t pix = (size_t)y * p->npix_x + x;
                if (t->f.ivar[pix] == 0.0) continue; /* a masked pixel carries no information */
                ex2d_cmp_close(&model, pix, got.model[(size_t)(y - d->ymin) * box_x + (x - d->xmin)], t->f.image[pix],
                               1e-6, 0.0);
            }
    }
    return ex2d_cmp_report(&flux) + ex2d_cmp_report(&model) + ex2d_cmp_report(&rows);
}

size_t ex2d_check_untouched(const ex2d_gpu_case *t, int not_run_first, int not_run_count)
{
    ex2d_cmp ws, out, spots;
    ex2d_cmp_init(&ws, "workspace after the check word [double]", 0);
    ex2d_cmp_init(&out, "frame outputs [array * bins + bin]", 0);
    ex2d_cmp_init(&spots, "K1 spots [double]", 0);
    const double *w = (const double *)((const char *)t->got_ws + EX2D_WORKSPACE_ALIGN);
    const size_t nw = (t->ws_bytes - EX2D_WORKSPACE_ALIGN) / sizeof(double);
    for (size_t i = 0; i < nw; i++) ex2d_cmp_untouched(&ws, i, w[i]);
    const double *arrays[] = {t->got_out.flux, t->got_out.ivar, t->got_out.chi2pix, t->got_out.pixmask_fraction};
    for (size_t a = 0; a < 4; a++)
        for (size_t i = 0; i < t->bins; i++) ex2d_cmp_untouched(&out, a * t->bins + i, arrays[a][i]);
    for (size_t i = 0; i < t->bins * (size_t)t->ndiags; i++)
        ex2d_cmp_untouched(&out, 4 * t->bins + i, t->got_out.rdiags[i]);
    for (size_t i = 0; i < t->entries * t->spot_pixels; i++) ex2d_cmp_untouched(&spots, i, t->got_spots[i]);
    size_t failed = ex2d_cmp_report(&ws) + ex2d_cmp_report(&out) + ex2d_cmp_report(&spots);
    size_t bad_info = 0;
    for (int k = 0; k < t->f.npatch; k++) {
        const ex2d_patch_info *got = &t->got_out.info[k];
        const int not_run = k >= not_run_first && k < not_run_first + not_run_count;
        const unsigned char *bytes = (const unsigned char *)got;
        int poisoned = 1;
        for (size_t b = 0; b < sizeof *got; b++) poisoned &= bytes[b] == 0xFF;
        const int ok = not_run ? got->status == EX2D_PATCH_NOT_RUN && got->clipped == 0 && got->sweeps_min == 0 &&
                                     got->sweeps_max == 0
                               : poisoned;
        if (!ok && bad_info++ < 3)
            fprintf(stderr, "info of patch %d: {%d, %d, %d, %d}, want %s\n", k, got->status, got->clipped,
                    got->sweeps_min, got->sweeps_max,
                    not_run ? "{EX2D_PATCH_NOT_RUN, 0, 0, 0} (a rejected range)" : "the poison (not written)");
    }
    if (bad_info) fprintf(stderr, "info: %zu patches wrong\n", bad_info);
    return failed + bad_info;
}

size_t ex2d_check_pipeline_witness(const ex2d_gpu_case *t, int first, int count, int max_batch, int validated)
{
    const int chunks = (count + max_batch - 1) / max_batch;
    uint64_t blocks = 0, bins = 0;
    const uint64_t pairs = validated ? ex2d_gc_pairs(t, first, count) : 0;
    if (validated) {
        blocks = ex2d_gc_factorised_blocks(t, first, count);
        const int64_t core_bins = ex2d_ref_count_core_bins(&t->f.inputs, first, count);
        cr_assert(core_bins >= 0);
        bins = (uint64_t)core_bins;
    }
    const struct {
        int slot;
        const char *name;
        uint64_t launches, items;
    } expect[] = {
        {EX2D_W_VALIDATE, "validation", 1, (uint64_t)count},
        {EX2D_W_SPOTS, "K1 (not part of the pipeline)", 0, 0},
        {EX2D_W_NORMAL, "K3", (uint64_t)chunks, pairs},
        {EX2D_W_CHOLESKY, "K4", (uint64_t)chunks, validated ? (uint64_t)count : 0},
        {EX2D_W_CBLOCKS, "K5", (uint64_t)chunks, blocks},
        {EX2D_W_JACOBI, "K6", (uint64_t)chunks, blocks},
        {EX2D_W_OUTPUTS, "K7", (uint64_t)chunks, bins},
    };
    size_t failed = 0;
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        char msg[1024];
        if (ex2d_gc_witness(t, expect[i].slot, expect[i].launches, expect[i].items, msg, sizeof msg)) {
            fprintf(stderr, "witness of %s: %s", expect[i].name, msg);
            failed++;
        }
    }
    return failed;
}
