/* SPDX-License-Identifier: MIT
 * ex2d_patch's extraction of a built frame on the chosen device, which `run` on the synthetic tiers and `run`
 * on DESI files share (gw_ex2d_extract, ex2d_patch_host.h): on a GPU one witnessed gw_ex2d_gpu_run, its
 * validation verdict and witness checked, and up to VERIFY_MAX_PATCHES patches compared with the CPU
 * reference; on the CPU the reference itself, threads over patches.
 */
#include <math.h>
#include <stdio.h>

#include "ex2d_patch_host.h"
#include "ex2d_patch_ref.h"
#include "gw_kernel.h"

/* One subbundle (tier L): the CPU reference takes seconds; beyond that the GPU result is checked by its
 * witness and its statuses only. */
#define VERIFY_MAX_PATCHES 47

static int compute_on_gpu(const char *label, const ex2d_frame *f, int ordinal, int threads, ex2d_outputs *out)
{
    char err[1024], msg[2048];
    gw_ex2d_gpu_result res;
    gw_ex2d_progress pr;
    gw_ex2d_progress_start(&pr, label, f->npatch, 1);
    if (gw_ex2d_gpu_run(ordinal, f, 0, out, &res, &pr, err, sizeof err)) {
        fprintf(stderr, "%s: cuda:%d: %s; nothing written\n", label, ordinal, err);
        return GW_EXIT_FAIL;
    }
    if (res.check.code != EX2D_OK) {
        fprintf(stderr, "%s: the device validation rejected patch %d: %s; nothing written\n", label,
                res.check.patch, ex2d_error_str(res.check.code));
        return GW_EXIT_FAIL;
    }
    printf("  %s %.1f ms incl. transfers, kernels %.2f ms (%d batch(es) of up to %d patches); %.1f "
           "patches/s%s\n", gw_cli_gpu_label(), res.ms_end_to_end, res.ms_kernel, res.batches, res.max_batch,
           res.ms_end_to_end > 0 ? f->npatch / (res.ms_end_to_end / 1e3) : 0.0, gw_cli_emulated_note());
    gw_ex2d_print_witness(&res, "  ");
    if (res.witness_violations) {
        fprintf(stderr, "%s: %d witness violation(s): the witness does not prove the GPU computed "
                "this; nothing written\n", label, res.witness_violations);
        return GW_EXIT_FAIL;
    }
    if (f->npatch > VERIFY_MAX_PATCHES) {
        printf("  result:   witness checks out; not compared with ex2d_ref (more than %d patches)%s\n",
               VERIFY_MAX_PATCHES, gw_cli_emulated_note());
        return GW_EXIT_OK;
    }
    ex2d_outputs ref;
    if (ex2d_ref_outputs_alloc(&f->params, f->npatch, &ref)) {
        fprintf(stderr, "%s: out of memory for the reference's outputs; nothing written\n", label);
        return GW_EXIT_FAIL;
    }
    double ms = 0;
    int rc = GW_EXIT_OK;
    gw_ex2d_out_poison(f, &ref, 0xFF);
    if (gw_ex2d_cpu_run(f, threads, &ref, NULL, &ms, err, sizeof err)) {
        fprintf(stderr, "%s: %s; nothing written\n", label, err);
        rc = GW_EXIT_FAIL;
    } else if (gw_ex2d_compare(f, out, &ref, 0, msg, sizeof msg)) {
        fprintf(stderr, "%s: the GPU result differs from ex2d_ref: %s; nothing written\n", label, msg);
        rc = GW_EXIT_FAIL;
    } else {
        printf("  result:   matches ex2d_ref within the tolerances of docs/ex2d_patch.md (%.1f ms on the CPU), "
               "witness checks out%s\n", ms, gw_cli_emulated_note());
    }
    ex2d_ref_outputs_free(&ref);
    return rc;
}

static int compute_on_cpu(const char *label, const ex2d_frame *f, int threads, ex2d_outputs *out)
{
    char err[1024];
    double ms = 0;
    gw_ex2d_progress pr;
    gw_ex2d_progress_start(&pr, label, f->npatch, 1);
    gw_ex2d_out_poison(f, out, 0xFF);
    if (gw_ex2d_cpu_run(f, threads, out, &pr, &ms, err, sizeof err)) {
        fprintf(stderr, "%s: %s; nothing written\n", label, err);
        return GW_EXIT_FAIL;
    }
    printf("  cpu:      ex2d_ref %.1f ms (%.2f patches/s)\n", ms, ms > 0 ? f->npatch / (ms / 1e3) : 0.0);
    return GW_EXIT_OK;
}

int gw_ex2d_extract(const char *label, const ex2d_frame *f, const gw_device_choice *dev, int threads,
                    ex2d_outputs *out)
{
    return dev->kind == GW_DEVICE_CUDA ? compute_on_gpu(label, f, dev->ordinal, threads, out)
                                       : compute_on_cpu(label, f, threads, out);
}

/* The core of patch d in out, zeroed as the stages zero a failed patch's. */
static void zero_core(const ex2d_params *p, const ex2d_patch_desc *d, ex2d_outputs *out)
{
    const int ndiags = 2 * p->ndiag + 1;
    for (int s = d->out_spec_first; s < d->out_spec_first + d->ncore; s++)
        for (int w = d->out_wave_first; w < d->out_wave_first + d->ncore_wave; w++) {
            const size_t at = (size_t)s * p->nwave_out + w;
            out->flux[at] = out->ivar[at] = out->chi2pix[at] = 0.0;
            for (int dg = 0; dg < ndiags; dg++) out->rdiags[((size_t)s * ndiags + dg) * p->nwave_out + w] = 0.0;
        }
}

/* 1 when every core output of d is finite; *informed: some core bin has ivar > 0. */
static int core_finite(const ex2d_params *p, const ex2d_patch_desc *d, const ex2d_outputs *out, int *informed)
{
    const int ndiags = 2 * p->ndiag + 1;
    int finite = 1;
    *informed = 0;
    for (int s = d->out_spec_first; s < d->out_spec_first + d->ncore; s++)
        for (int w = d->out_wave_first; w < d->out_wave_first + d->ncore_wave; w++) {
            const size_t at = (size_t)s * p->nwave_out + w;
            finite &= isfinite(out->flux[at]) && isfinite(out->ivar[at]) && isfinite(out->chi2pix[at]);
            for (int dg = 0; dg < ndiags; dg++) finite &= isfinite(out->rdiags[((size_t)s * ndiags + dg) * p->nwave_out + w]);
            *informed |= out->ivar[at] > 0.0;
        }
    return finite;
}

/* The largest |pixel| of d's box that has weight: what overflows the sums when the results are not finite. */
static double largest_weighted_pixel(const ex2d_frame *f, const ex2d_patch_desc *d)
{
    double largest = 0.0;
    for (int y = d->ymin; y < d->ymax; y++)
        for (int x = d->xmin; x < d->xmax; x++) {
            const size_t at = (size_t)y * f->params.npix_x + x;
            if (f->inputs.ivar[at] > 0.0 && fabs(f->inputs.image[at]) > largest) largest = fabs(f->inputs.image[at]);
        }
    return largest;
}

int gw_ex2d_judge_patches(const char *cmd, const char *zeroed_as, const ex2d_frame *f, ex2d_outputs *out,
                          double regularize, unsigned char *failed)
{
    const ex2d_params *p = &f->params;
    int count = 0;
    char why[512] = "";
    for (int i = 0; i < f->npatch; i++) {
        const ex2d_patch_desc *d = &f->patches[i];
        const int status = out->info[i].status;
        int informed = 0;
        const int finite = status == EX2D_PATCH_OK && core_finite(p, d, out, &informed);
        failed[i] = status != EX2D_PATCH_OK || !finite || !informed;
        if (!failed[i]) continue;
        zero_core(p, d, out);
        if (count++) continue;
        if (status == EX2D_PATCH_NOT_POSDEF && regularize >= 0.0 && regularize < 1e-4)
            snprintf(why, sizeof why, "patch %d: %s; retry with --regularize 1e-4", i, ex2d_patch_status_str(status));
        else if (status == EX2D_PATCH_NOT_POSDEF && regularize >= 0.0)
            snprintf(why, sizeof why, "patch %d: %s, even with --regularize %g: the normal matrix overflows or the "
                     "pixels under it carry no usable information", i, ex2d_patch_status_str(status), regularize);
        else if (status != EX2D_PATCH_OK)
            snprintf(why, sizeof why, "patch %d: %s", i, ex2d_patch_status_str(status));
        else if (!finite)
            snprintf(why, sizeof why, "patch %d: its results are not finite: the sums overflowed (the largest "
                     "|pixel| with ivar > 0 under it is %g)", i, largest_weighted_pixel(f, d));
        else
            snprintf(why, sizeof why, "patch %d: no bin has information: every pixel under its spots is masked (ivar "
                     "0) or the spots are zero there", i);
    }
    if (count == f->npatch) {
        fprintf(stderr, "%s: every patch failed (%d), the first, %s; nothing written\n", cmd, count, why);
        return -1;
    }
    if (count)
        fprintf(stderr, "%s: %d of %d patches failed (%s), the first, %s\n", cmd, count, f->npatch, zeroed_as, why);
    return 0;
}
