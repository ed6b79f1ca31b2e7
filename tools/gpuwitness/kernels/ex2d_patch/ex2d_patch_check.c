/* SPDX-License-Identifier: MIT
 * ex2d_patch in gpuwitness check and doctor. check: one synthetic frame (realistic: tier L, one subbundle of
 * 47 patches with noise; small: tier M, one noiseless 7 x 74 patch), extracted by ex2d_ref on one thread and
 * on all cores (identical bytes), checked against the known truth, then on the GPU twice (batches sized from
 * free memory, then batches of 16 patches: identical bytes), each call compared with the reference at the
 * tolerances of docs/ex2d_patch.md, "Numerics and tolerances", and witnessed stage by stage. doctor: tier S
 * once per device.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ex2d_patch_ref.h"
#include "ex2d_patch_host.h"
#include "gw_kernel.h"

/* The second GPU call's batch: several batches for tier L, so the chunked path is exercised too. */
#define SECOND_CALL_BATCH 16

/* R f_true at core bin (s, i) from the stitched resolution diagonals (rdiags[s][d][j] = R[j - ndiag + d][j]),
 * over the columns inside the frame; *complete is 0 when a diagonal's column falls outside. */
static double resolved_truth(const ex2d_frame *f, const ex2d_outputs *out, int s, int i, int *complete)
{
    const ex2d_params *p = &f->params;
    const int nd = 2 * p->ndiag + 1;
    double sum = 0.0;
    *complete = 1;
    for (int d = 0; d < nd; d++) {
        const int j = i + p->ndiag - d;
        if (j < 0 || j >= p->nwave_out) {
            *complete = 0;
            continue;
        }
        const double r = out->rdiags[((size_t)s * nd + d) * p->nwave_out + j];
        sum += r * ex2d_synth_f_true(&f->cfg, f->cfg.fibre_first + s, f->cfg.wave_first + j);
    }
    return sum;
}

/* The largest truth within wavepad bins of core bin (s, i): what R's entries beyond the stored diagonals
 * multiply. */
static double nearby_truth(const ex2d_frame *f, int s, int i)
{
    double most = 0.0;
    for (int j = i - f->params.wavepad; j <= i + f->params.wavepad; j++) {
        const double t = fabs(ex2d_synth_f_true(&f->cfg, f->cfg.fibre_first + s, f->cfg.wave_first + j));
        if (t > most) most = t;
    }
    return most;
}

/* The known answer (docs/ex2d_patch.md, "Analytic cases"), so a reference and a kernel that agree on a wrong answer
 * cannot pass: noiseless, flux = R f_true, within 1e-3 of the largest truth nearby: the frame keeps R to +-ndiag
 * diagonals, and the entries beyond hold ~2e-4 of a row's weight (measured on tier M: 1.6e-4 to 3.3e-4 of that
 * scale; an error of 1 % of the continuum is 7e-3). With noise, chi = (flux - R f_true) sqrt(ivar) has a standard
 * deviation within 10 % of 1. 0 or 1 (printed). */
static int check_truth(const ex2d_frame *f, const ex2d_outputs *out)
{
    const ex2d_params *p = &f->params;
    double worst = 0.0, sum2 = 0.0;
    size_t bins = 0;
    for (int s = 0; s < p->nspec_out; s++) {
        for (int i = 0; i < p->nwave_out; i++) {
            int complete = 0;
            const double rf = resolved_truth(f, out, s, i, &complete);
            if (!complete) continue;
            const size_t k = (size_t)s * p->nwave_out + i;
            const double chi = (out->flux[k] - rf) * sqrt(out->ivar[k]);
            const double rel = fabs(out->flux[k] - rf) / nearby_truth(f, s, i);
            sum2 += chi * chi;
            if (!(rel <= worst)) worst = rel; /* NaN sticks */
            bins++;
        }
    }
    const double std = bins ? sqrt(sum2 / (double)bins) : NAN;
    if (!f->cfg.add_noise) {
        if (!(worst < 1e-3) || !bins) {
            printf("  result:   FAILED: ex2d_ref misses the noiseless truth: max |flux - R f_true| / (largest f_true "
                   "within %d bins) = %.3g over %zu bins (must be < 1e-3)\n", p->wavepad, worst, bins);
            return 1;
        }
        printf("  known:    noiseless: flux = R f_true within %.2g of the nearby truth on all %zu inner core bins\n",
               worst, bins);
        return 0;
    }
    if (!(fabs(std - 1.0) <= 0.1) || bins < 2000) {
        printf("  result:   FAILED: chi = (flux - R f_true) sqrt(ivar) has std %.4f over %zu bins (must be within 10 "
               "%% of 1 over at least 2000 bins)\n", std, bins);
        return 1;
    }
    printf("  known:    chi = (flux - R f_true) sqrt(ivar): std %.4f over %zu core bins (noise as modelled)\n", std,
           bins);
    return 0;
}

/* ex2d_ref on one thread into ref and on all cores into mt: identical bytes, no failed patch, the truth. */
static int run_cpu(const ex2d_frame *f, ex2d_outputs *ref, ex2d_outputs *mt, double *ref_ms)
{
    char err[1024], msg[2048];
    double mt_ms = 0;
    gw_ex2d_out_poison(f, ref, 0xFF);
    gw_ex2d_out_poison(f, mt, 0xFF);
    if (gw_ex2d_cpu_run(f, 1, ref, NULL, ref_ms, err, sizeof err) ||
        gw_ex2d_cpu_run(f, 0, mt, NULL, &mt_ms, err, sizeof err)) {
        printf("  result:   FAILED: %s\n", err);
        return 1;
    }
    const size_t diff = gw_ex2d_compare(f, mt, ref, 1, msg, sizeof msg);
    printf("  cpu:      ex2d_ref %.1f ms (1 thread, %.1f patches/s), %.1f ms (all cores): %s\n", *ref_ms,
           *ref_ms > 0 ? f->npatch / (*ref_ms / 1e3) : 0.0, mt_ms, diff ? "DIFFERENT" : "identical bytes");
    if (diff) {
        printf("  result:   FAILED: ex2d_ref differs between 1 thread and all cores: %s\n", msg);
        return 1;
    }
    int first = -1;
    if (gw_ex2d_failed_patches(f, ref, &first)) {
        printf("  result:   FAILED: ex2d_ref: patch %d: %s\n", first, ex2d_patch_status_str(ref->info[first].status));
        return 1;
    }
    return check_truth(f, ref);
}

/* One witnessed GPU call against the reference; 0 or 1 (printed). */
static int gpu_call(const ex2d_frame *f, int ordinal, int max_batch, const ex2d_outputs *ref, ex2d_outputs *got,
                    gw_ex2d_gpu_result *res, int call)
{
    char err[1024], msg[2048];
    if (gw_ex2d_gpu_run(ordinal, f, max_batch, got, res, NULL, err, sizeof err)) {
        printf("  result:   FAILED: call %d: %s\n", call, err);
        return 1;
    }
    if (res->check.code != EX2D_OK) {
        printf("  result:   FAILED: call %d: the device validation rejected patch %d: %s\n", call, res->check.patch,
               ex2d_error_str(res->check.code));
        return 1;
    }
    int failed = 0;
    if (gw_ex2d_compare(f, got, ref, 0, msg, sizeof msg)) {
        printf("  result:   FAILED: call %d (%d batch(es) of up to %d) differs from ex2d_ref: %s\n", call,
               res->batches, res->max_batch, msg);
        failed = 1;
    }
    if (res->witness_violations) {
        printf("  result:   FAILED: call %d: the witness does not prove GPU execution (%d violation(s))\n", call,
               res->witness_violations);
        failed = 1;
    }
    return failed;
}

/* Two GPU calls, both against the reference, the second (smaller batches) bit for bit equal to the first. */
static int run_gpu(const ex2d_frame *f, const ex2d_outputs *ref, double ref_ms, int ordinal)
{
    char msg[2048];
    ex2d_outputs got[2];
    gw_ex2d_gpu_result res[2];
    if (ex2d_ref_outputs_alloc(&f->params, f->npatch, &got[0])) {
        printf("  result:   FAILED: out of memory\n");
        return 1;
    }
    if (ex2d_ref_outputs_alloc(&f->params, f->npatch, &got[1])) {
        printf("  result:   FAILED: out of memory\n");
        ex2d_ref_outputs_free(&got[0]);
        return 1;
    }
    int failed = gpu_call(f, ordinal, 0, ref, &got[0], &res[0], 1), shown = 0;
    if (!failed) {
        shown = 1;
        failed = gpu_call(f, ordinal, SECOND_CALL_BATCH, ref, &got[1], &res[1], 2);
        if (!failed && gw_ex2d_compare(f, &got[1], &got[0], 1, msg, sizeof msg)) {
            printf("  result:   FAILED: batches of %d give other bytes than batches of %d: %s\n", res[1].max_batch,
                   res[0].max_batch, msg);
            failed = 1;
        }
    }
    if (!failed) {
        const gw_ex2d_gpu_result *r = &res[0];
        printf("  %s %.1f ms incl. transfers, kernels %.2f ms (%d batch of %d; %.0f patches/s); ex2d_ref / "
               "%s = %.1fx%s\n", gw_cli_gpu_label(), r->ms_end_to_end, r->ms_kernel, r->batches, r->max_batch,
               r->ms_end_to_end > 0 ? f->npatch / (r->ms_end_to_end / 1e3) : 0.0, gw_cli_emulated() ? "emulated" : "gpu",
               r->ms_end_to_end > 0 ? ref_ms / r->ms_end_to_end : 0.0, gw_cli_emulated_note());
        printf("  %s second call, %d batches of up to %d: %.1f ms incl. transfers, identical bytes%s\n",
               gw_cli_gpu_label(), res[1].batches, res[1].max_batch, res[1].ms_end_to_end, gw_cli_emulated_note());
    }
    gw_ex2d_print_witness(&res[shown], "  ");
    if (!failed)
        printf("  result:   ok: both calls match ex2d_ref within the tolerances of docs/ex2d_patch.md (flux pull "
               "1e-9, ivar and Rdiags 1e-10, chi2pix 1e-8, pixmask 2e-12, statuses equal), witness checks out%s\n", gw_cli_emulated_note());
    ex2d_ref_outputs_free(&got[1]);
    ex2d_ref_outputs_free(&got[0]);
    return failed;
}

int gw_ex2d_patch_check(const gw_check_request *req, int *runs)
{
    const int small = req->small, gpu = req->gpu;
    const uint64_t seed = req->seed;
    const gw_device_choice *dev = req->dev;
    ex2d_frame_config cfg;
    ex2d_frame f;
    *runs = 1;
    printf("ex2d_patch [%s]\n", small ? "tier M: one noiseless 7 x 74 patch" : "tier L: one subbundle, 47 patches");
    ex2d_frame_config_tier(&cfg, small ? EX2D_TIER_M : EX2D_TIER_L);
    cfg.seed ^= seed; /* the default seed stays the noise of --seed 0 */
    cfg.nthreads = 0;
    const double t0 = gw_cli_now_ms();
    const int made = ex2d_frame_make(&cfg, &f);
    if (made) {
        printf("  result:   FAILED: synthesising the frame: %s\n", ex2d_synth_error_str(made));
        return 1;
    }
    printf("  problem:  fibres %d..%d x bins %d..%d, %d patch(es) of n <= %d, image %dx%d, %s; seed %" PRIu64
           " (synthesised in %.0f ms)\n", cfg.fibre_first, cfg.fibre_first + cfg.nfibre - 1, cfg.wave_first,
           cfg.wave_first + cfg.nwave - 1, f.npatch, f.params.max_nspecpad * f.params.m, f.params.npix_x,
           f.params.npix_y, cfg.add_noise ? "noise, model ivar" : "noiseless, ivar 1", seed, gw_cli_now_ms() - t0);
    if (gpu) printf("  device:   cuda:%d%s\n", dev->ordinal, gw_cli_emulated_note());
    else printf("  device:   cpu (%s)\n", dev->fell_back || dev->reason[0] ? "GPU part skipped" : "--device cpu");
    ex2d_outputs ref, mt;
    int failed = 0;
    double ref_ms = 0;
    if (ex2d_ref_outputs_alloc(&f.params, f.npatch, &ref)) {
        printf("  result:   FAILED: out of memory\n");
        failed = 1;
    } else if (ex2d_ref_outputs_alloc(&f.params, f.npatch, &mt)) {
        printf("  result:   FAILED: out of memory\n");
        ex2d_ref_outputs_free(&ref);
        failed = 1;
    } else {
        failed = run_cpu(&f, &ref, &mt, &ref_ms);
        ex2d_ref_outputs_free(&mt);
        if (!failed && gpu) failed = run_gpu(&f, &ref, ref_ms, dev->ordinal);
        else if (!failed) printf("  gpu:      not run\n  result:   ok on the CPU only (the GPU was not exercised)\n");
        ex2d_ref_outputs_free(&ref);
    }
    ex2d_frame_free(&f);
    return failed;
}

int gw_ex2d_patch_doctor(int ordinal)
{
    char err[1024], msg[2048];
    ex2d_frame_config cfg;
    ex2d_frame f;
    ex2d_outputs ref, got;
    gw_ex2d_gpu_result res;
    double ms = 0;
    ex2d_frame_config_tier(&cfg, EX2D_TIER_S);
    const int made = ex2d_frame_make(&cfg, &f);
    if (made) {
        printf("  ex2d_patch:           FAILED: synthesising tier S: %s\n", ex2d_synth_error_str(made));
        return 1;
    }
    if (ex2d_ref_outputs_alloc(&f.params, f.npatch, &ref)) {
        printf("  ex2d_patch:           FAILED: out of memory\n");
        ex2d_frame_free(&f);
        return 1;
    }
    if (ex2d_ref_outputs_alloc(&f.params, f.npatch, &got)) {
        printf("  ex2d_patch:           FAILED: out of memory\n");
        ex2d_ref_outputs_free(&ref);
        ex2d_frame_free(&f);
        return 1;
    }
    int failed = 1;
    gw_ex2d_out_poison(&f, &ref, 0xFF);
    if (gw_ex2d_cpu_run(&f, 1, &ref, NULL, &ms, err, sizeof err)) {
        printf("  ex2d_patch:           FAILED: %s\n", err);
    } else if (gw_ex2d_gpu_run(ordinal, &f, 0, &got, &res, NULL, err, sizeof err)) {
        printf("  ex2d_patch:           FAILED: %s\n", err);
    } else if (res.check.code != EX2D_OK) {
        printf("  ex2d_patch:           FAILED: the device validation rejected patch %d: %s\n", res.check.patch,
               ex2d_error_str(res.check.code));
    } else {
        const size_t diff = gw_ex2d_compare(&f, &got, &ref, 0, msg, sizeof msg);
        if (diff)
            printf("  ex2d_patch:           FAILED: differs from ex2d_ref: %s\n", msg);
        else
            printf("  ex2d_patch:           tier S, 1 patch of n = %d: matches ex2d_ref within the tolerances of "
                   "docs/ex2d_patch.md (%.2f ms incl. transfers)%s\n", f.params.max_nspecpad * f.params.m,
                   res.ms_end_to_end, gw_cli_emulated_note());
        gw_ex2d_print_witness(&res, "    ");
        if (!res.witness_violations)
            printf("    witness check: ok (every stage: its launches, its items, %s)\n",
                   gw_cli_emulated() ? "the emulated device's records, as expected of gpuwitness-emu"
                                     : "code for this device's architecture");
        failed = diff != 0 || res.witness_violations != 0;
    }
    ex2d_ref_outputs_free(&got);
    ex2d_ref_outputs_free(&ref);
    ex2d_frame_free(&f);
    return failed;
}
