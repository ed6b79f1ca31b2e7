/* SPDX-License-Identifier: MIT
 * ex2d_patch on the host for the CLI: output poison, progress lines, the CPU path over ex2d_ref_patches and
 * the comparison with the reference at the tolerances of docs/ex2d_patch.md, "Numerics and tolerances".
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex2d_patch_ref.h"
#include "ex2d_patch_host.h"

/* Patches per ex2d_ref_patches call: small enough for a progress line every few seconds on a full frame,
 * large enough that threads over patches stay busy. */
#define CPU_CHUNK 32

size_t gw_ex2d_frame_elems(const ex2d_frame *f)
{
    return (size_t)f->params.nspec_out * (size_t)f->params.nwave_out;
}

size_t gw_ex2d_rdiag_elems(const ex2d_frame *f)
{
    return gw_ex2d_frame_elems(f) * (size_t)(2 * f->params.ndiag + 1);
}

void gw_ex2d_out_poison(const ex2d_frame *f, const ex2d_outputs *out, uint8_t byte)
{
    const size_t n = gw_ex2d_frame_elems(f) * sizeof(double);
    memset(out->flux, byte, n);
    memset(out->ivar, byte, n);
    memset(out->chi2pix, byte, n);
    memset(out->pixmask_fraction, byte, n);
    memset(out->rdiags, byte, gw_ex2d_rdiag_elems(f) * sizeof(double));
    memset(out->info, byte, (size_t)f->npatch * sizeof *out->info);
}

void gw_ex2d_progress_start(gw_ex2d_progress *pr, const char *label, int total, int enabled)
{
    pr->label = label;
    pr->total = total;
    pr->t0_ms = pr->last_ms = gw_cli_now_ms();
    pr->enabled = enabled;
}

void gw_ex2d_progress_update(gw_ex2d_progress *pr, int done)
{
    if (!pr || !pr->enabled) return;
    const double now = gw_cli_now_ms();
    if (now - pr->last_ms < 2000.0 || done >= pr->total) return; /* the summary line reports the end */
    pr->last_ms = now;
    const double s = (now - pr->t0_ms) / 1e3, rate = s > 0 ? done / s : 0.0;
    fprintf(stderr, "%s: %d / %d patches (%.0f %%), %.1f patches/s, about %.0f s left\n", pr->label, done,
            pr->total, 100.0 * done / pr->total, rate, rate > 0 ? (pr->total - done) / rate : 0.0);
}

int gw_ex2d_cpu_run(const ex2d_frame *f, int nthreads, ex2d_outputs *out, gw_ex2d_progress *pr, double *ms, char *err,
                    size_t err_size)
{
    const int max_batch = f->npatch < CPU_CHUNK ? f->npatch : CPU_CHUNK;
    void *ws = NULL;
    size_t ws_bytes = 0;
    int rc = ex2d_ref_workspace_alloc(&f->params, max_batch, &ws, &ws_bytes);
    if (rc) {
        snprintf(err, err_size, "ex2d_ref_workspace_alloc (%d patches): %s", max_batch,
                 rc == EX2D_REF_ERR_ALLOC ? "out of host memory" : ex2d_error_str(rc));
        return rc;
    }
    const double t0 = gw_cli_now_ms();
    for (int first = 0; first < f->npatch && rc == 0; first += max_batch) {
        const int count = f->npatch - first < max_batch ? f->npatch - first : max_batch;
        rc = ex2d_ref_patches(&f->params, &f->inputs, f->spots, first, count, max_batch, ws, ws_bytes, out, nthreads);
        if (rc == EX2D_REF_ERR_ALLOC)
            snprintf(err, err_size, "ex2d_ref_patches: out of host memory");
        else if (rc >= EX2D_ERR_PATCH_TABLE)
            snprintf(err, err_size, "ex2d_ref_patches: patch %d: %s", ((const ex2d_check_word *)ws)->patch,
                     ex2d_error_str(rc));
        else if (rc)
            snprintf(err, err_size, "ex2d_ref_patches: %s", ex2d_error_str(rc));
        gw_ex2d_progress_update(pr, first + count);
    }
    *ms = gw_cli_now_ms() - t0;
    free(ws);
    return rc;
}

/* One output array's comparison: failures counted, the first described. */
typedef struct cmp_state {
    const char *what;
    size_t failed;
    char first[200];
} cmp_state;

static void cmp_fail(cmp_state *c, size_t i, double got, double want, const char *rule)
{
    if (!c->failed++)
        snprintf(c->first, sizeof c->first, "%s[%zu] = %.17g, reference %.17g (%s)", c->what, i, got, want, rule);
}

static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* |got - want| <= atol + rtol |want|, written so that NaN fails. */
static void cmp_close(cmp_state *c, size_t i, double got, double want, double atol, double rtol, const char *rule)
{
    if (!(fabs(got - want) <= atol + rtol * fabs(want))) cmp_fail(c, i, got, want, rule);
}

static void append(char *msg, size_t msg_size, size_t *used, const char *fmt, ...)
{
    if (*used >= msg_size) return;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(msg + *used, msg_size - *used, fmt, ap);
    va_end(ap);
    if (n > 0) *used += (size_t)n;
}

size_t gw_ex2d_compare(const ex2d_frame *f, const ex2d_outputs *got, const ex2d_outputs *want, int bitwise, char *msg,
                       size_t msg_size)
{
    cmp_state c[6] = {{"flux", 0, ""},    {"ivar", 0, ""},     {"rdiags", 0, ""},
                      {"chi2pix", 0, ""}, {"pixmask_fraction", 0, ""}, {"info", 0, ""}};
    const size_t n = gw_ex2d_frame_elems(f), nr = gw_ex2d_rdiag_elems(f);
    for (size_t i = 0; i < n; i++) {
        if (bitwise) {
            if (!same_bits(got->flux[i], want->flux[i])) cmp_fail(&c[0], i, got->flux[i], want->flux[i], "bits");
            if (!same_bits(got->ivar[i], want->ivar[i])) cmp_fail(&c[1], i, got->ivar[i], want->ivar[i], "bits");
            if (!same_bits(got->chi2pix[i], want->chi2pix[i]))
                cmp_fail(&c[3], i, got->chi2pix[i], want->chi2pix[i], "bits");
            if (!same_bits(got->pixmask_fraction[i], want->pixmask_fraction[i]))
                cmp_fail(&c[4], i, got->pixmask_fraction[i], want->pixmask_fraction[i], "bits");
            continue;
        }
        /* flux: the pull |delta flux| sqrt(ivar) <= 1e-9, with the reference's ivar */
        const double pull = fabs(got->flux[i] - want->flux[i]) * sqrt(want->ivar[i]);
        if (!(pull <= 1e-9)) cmp_fail(&c[0], i, got->flux[i], want->flux[i], "pull > 1e-9");
        cmp_close(&c[1], i, got->ivar[i], want->ivar[i], 0.0, 1e-10, "rtol 1e-10");
        cmp_close(&c[3], i, got->chi2pix[i], want->chi2pix[i], 1e-10, 1e-8, "rtol 1e-8, atol 1e-10");
        cmp_close(&c[4], i, got->pixmask_fraction[i], want->pixmask_fraction[i], 2e-12, 0.0, "atol 2e-12");
    }
    for (size_t i = 0; i < nr; i++) {
        if (bitwise ? !same_bits(got->rdiags[i], want->rdiags[i])
                    : !(fabs(got->rdiags[i] - want->rdiags[i]) <= 1e-10))
            cmp_fail(&c[2], i, got->rdiags[i], want->rdiags[i], bitwise ? "bits" : "atol 1e-10");
    }
    for (int i = 0; i < f->npatch; i++) {
        const ex2d_patch_info *g = &got->info[i], *w = &want->info[i];
        const int differ = bitwise ? memcmp(g, w, sizeof *g) != 0 : g->status != w->status;
        if (differ && !c[5].failed++)
            snprintf(c[5].first, sizeof c[5].first, "info[%d] = {status %d, clipped %d, sweeps %d..%d}, reference "
                     "{status %d, clipped %d, sweeps %d..%d}", i, g->status, g->clipped, g->sweeps_min,
                     g->sweeps_max, w->status, w->clipped, w->sweeps_min, w->sweeps_max);
    }
    size_t total = 0, used = 0;
    if (msg_size) msg[0] = '\0';
    for (int k = 0; k < 6; k++) {
        if (!c[k].failed) continue;
        total += c[k].failed;
        append(msg, msg_size, &used, "%s%zu %s mismatch(es), first %s", used ? "; " : "", c[k].failed, c[k].what,
               c[k].first);
    }
    return total;
}

int gw_ex2d_failed_patches(const ex2d_frame *f, const ex2d_outputs *out, int *first)
{
    int failed = 0;
    *first = -1;
    for (int i = 0; i < f->npatch; i++) {
        if (out->info[i].status == EX2D_PATCH_OK) continue;
        if (!failed++) *first = i;
    }
    return failed;
}
