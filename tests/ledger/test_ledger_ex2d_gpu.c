/* SPDX-License-Identifier: MIT
 * The driver-level ledger (docs/witness.md, "Layer 3: the ledger") of ex2d_patch's host-buffer path, the CLI's
 * gw_ex2d_gpu_run (tools/gpuwitness/kernels/ex2d_patch/ex2d_patch_gpu.c), recorded by CUPTI and checked against a budget written out here from
 * what the call must do: K1 once, the validation and K3..K7 once per batch, exactly one upload of each input
 * array, one 8-byte read of the validation verdict per batch, one download of the witness records and of each
 * frame output, nothing else. Then the same call's witness and its result against ex2d_ref (docs/ex2d_patch.md, "Tolerances").
 * Like tests/ledger/test_ledger_gpu.c: skipped with the reason, before any allocation, when CUPTI cannot record; the
 * host_path test needs no CUPTI.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "ex2d_patch_ref.h"
#include "ex2d_patch_host.h"
#include "gw_gpu_test.h"
#include "gw_ledger.h"

/* Tier L has 47 patches: batches of 16 make three ex2d_patches_launch calls, the last one short. */
#define BATCH 16
#define BATCHES 3


static int used_gpu;

static void ledger_fini(void)
{
    if (used_gpu) cudaDeviceReset(); /* compute-sanitizer's leak check reports what is still allocated */
}

static void require_ledger(void)
{
    const char *v = getenv("GW_UNDER_SANITIZER");
    if (v && !strcmp(v, "1"))
        cr_skip_test("ledger unavailable: GW_UNDER_SANITIZER=1, compute-sanitizer holds CUPTI's one subscriber "
                     "(the plain GPU pass checks the ledger)");
    char why[512];
    used_gpu = 1;
    const gw_ledger_status st = gw_ledger_probe(why, sizeof why);
    if (st == GW_LEDGER_UNAVAILABLE) cr_skip_test("ledger unavailable: %s", why);
    cr_assert_eq(st, GW_LEDGER_OK, "gw_ledger_probe: %s", why);
}

typedef struct ex2d_ctx {
    ex2d_frame f;
    ex2d_outputs ref, got;
    gw_ex2d_gpu_result res;
    int device;
} ex2d_ctx;

static void ex2d_setup(ex2d_ctx *c, int tier)
{
    char err[1024];
    double ms = 0;
    ex2d_frame_config cfg;
    memset(c, 0, sizeof *c);
    cr_assert_eq(ex2d_frame_config_tier(&cfg, tier), 0);
    cr_assert_eq(ex2d_frame_make(&cfg, &c->f), 0, "ex2d_frame_make");
    cr_assert(ex2d_ref_outputs_alloc(&c->f.params, c->f.npatch, &c->ref) == 0 &&
              ex2d_ref_outputs_alloc(&c->f.params, c->f.npatch, &c->got) == 0, "out of memory");
    gw_ex2d_out_poison(&c->f, &c->ref, 0xFF);
    cr_assert_eq(gw_ex2d_cpu_run(&c->f, 0, &c->ref, NULL, &ms, err, sizeof err), 0, "%s", err);
    GW_CUDA(cudaGetDevice(&c->device));
    used_gpu = 1;
}

static void ex2d_teardown(ex2d_ctx *c)
{
    ex2d_ref_outputs_free(&c->got);
    ex2d_ref_outputs_free(&c->ref);
    ex2d_frame_free(&c->f);
}

static void ex2d_expect_result(ex2d_ctx *c)
{
    char msg[2048];
    cr_expect_eq(c->res.check.code, EX2D_OK, "the device validation rejected patch %d: %s", c->res.check.patch,
                 ex2d_error_str(c->res.check.code));
    cr_expect_eq(c->res.witness_violations, 0, "witness check failed:\n%s", c->res.witness_check);
    cr_expect_eq(gw_ex2d_compare(&c->f, &c->got, &c->ref, 0, msg, sizeof msg), 0, "%s", msg);
}

TestSuite(ledger_ex2d, .init = gw_gpu_test_init, .fini = ledger_fini);

Test(ledger_ex2d, host_path_uploads_once_launches_each_stage_per_batch_and_downloads_once, .timeout = 300)
{
    require_ledger();
    ex2d_ctx c;
    ex2d_setup(&c, EX2D_TIER_L);
    cr_assert_eq(c.f.npatch, 47, "tier L is one subbundle of 47 patches");
    const ex2d_params *p = &c.f.params;
    const uint64_t npix = (uint64_t)p->npix_x * p->npix_y, ntab = (uint64_t)p->nspec_tab * p->nwave_tab;
    const uint64_t nc = ntab * (uint64_t)(p->gx + 1) * (uint64_t)(p->gy + 1);
    const uint64_t nframe = (uint64_t)p->nspec_out * p->nwave_out, nrdiag = nframe * (uint64_t)(2 * p->ndiag + 1);
    const uint64_t npatch = (uint64_t)c.f.npatch;
    static const gw_kernel_expect kernels[] = {
        {"ex2d_spots_kernel", 1},        {"ex2d_validate_kernel", BATCHES}, {"ex2d_normal_kernel", BATCHES},
        {"ex2d_cholesky_kernel", BATCHES}, {"ex2d_cblocks_kernel", BATCHES}, {"ex2d_jacobi_kernel", BATCHES},
        {"ex2d_outputs_kernel", BATCHES}};
    const gw_copy_expect copies[] = {
        {GW_COPY_HTOD, npix * 8, "image"},
        {GW_COPY_HTOD, npix * 8, "ivar"},
        {GW_COPY_HTOD, ntab * 8, "psf_sigx"},
        {GW_COPY_HTOD, ntab * 8, "psf_sigy"},
        {GW_COPY_HTOD, ntab * 8, "psf_dx"},
        {GW_COPY_HTOD, ntab * 8, "psf_dy"},
        {GW_COPY_HTOD, nc * 8, "psf_c"},
        {GW_COPY_HTOD, ntab * 4, "psf_xc"},
        {GW_COPY_HTOD, ntab * 4, "psf_yc"},
        {GW_COPY_HTOD, npatch * sizeof(ex2d_patch_desc), "patches"},
        {GW_COPY_DTOH, sizeof(ex2d_check_word), "check word, batch 1"},
        {GW_COPY_DTOH, sizeof(ex2d_check_word), "check word, batch 2"},
        {GW_COPY_DTOH, sizeof(ex2d_check_word), "check word, batch 3"},
        {GW_COPY_DTOH, EX2D_WITNESS_SLOTS * sizeof(gw_witness), "witness"},
        {GW_COPY_DTOH, nframe * 8, "flux"},
        {GW_COPY_DTOH, nframe * 8, "ivar"},
        {GW_COPY_DTOH, nrdiag * 8, "rdiags"},
        {GW_COPY_DTOH, nframe * 8, "chi2pix"},
        {GW_COPY_DTOH, nframe * 8, "pixmask_fraction"},
        {GW_COPY_DTOH, npatch * sizeof(ex2d_patch_info), "info"}};
    const gw_ledger_budget budget = {kernels, sizeof kernels / sizeof kernels[0], copies,
                                     sizeof copies / sizeof copies[0]};
    gw_activity_log log = {0};
    char why[512], err[1024] = "", msg[4096], receipt[512];
    cr_assert_eq(gw_ledger_begin(why, sizeof why), GW_LEDGER_OK, "gw_ledger_begin: %s", why);
    const int rc = gw_ex2d_gpu_run(c.device, &c.f, BATCH, &c.got, &c.res, NULL, err, sizeof err);
    const gw_ledger_status st = gw_ledger_end(&log, why, sizeof why);
    cr_assert_eq(rc, 0, "the host path failed: %s", err);
    cr_assert_eq(st, GW_LEDGER_OK, "gw_ledger_end: %s", why);
    cr_expect_eq(c.res.batches, BATCHES, "%d batches of up to %d", c.res.batches, c.res.max_batch);
    gw_ledger_format(&log, receipt, sizeof receipt);
    const int violations = gw_ledger_check(&log, &budget, msg, sizeof msg);
    cr_expect_eq(violations, 0, "ledger check failed (%d violations):\n%s%s", violations, msg, receipt);
    ex2d_expect_result(&c);
    /* the NVTX ranges of the host stages were recorded, each closed */
    static const char *const stages[] = {"ex2d/upload", "ex2d/K1 spots", "ex2d/K3-K7 batch", "ex2d/download"};
    for (size_t s = 0; s < sizeof stages / sizeof stages[0]; s++) {
        int found = 0;
        for (size_t i = 0; i < log.count; i++)
            if (log.items[i].kind == GW_ACTIVITY_RANGE && !strcmp(log.items[i].name, stages[s]) &&
                log.items[i].start_ns < log.items[i].end_ns)
                found++;
        cr_expect_eq(found, strcmp(stages[s], "ex2d/K3-K7 batch") ? 1 : BATCHES, "NVTX range %s: %d recorded",
                     stages[s], found);
    }
    gw_activity_log_free(&log);
    ex2d_teardown(&c);
}

TestSuite(host_path_ex2d, .init = gw_gpu_test_init, .fini = ledger_fini);

Test(host_path_ex2d, tier_s_call_matches_the_reference_with_a_good_witness)
{
    ex2d_ctx c;
    char err[1024];
    ex2d_setup(&c, EX2D_TIER_S);
    cr_assert_eq(gw_ex2d_gpu_run(c.device, &c.f, 0, &c.got, &c.res, NULL, err, sizeof err), 0, "%s", err);
    cr_expect_eq(c.res.batches, 1);
    ex2d_expect_result(&c);
    ex2d_teardown(&c);
}
