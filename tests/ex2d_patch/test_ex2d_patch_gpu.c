/* SPDX-License-Identifier: MIT
 * GPU tests of kernels/ex2d_patch (docs/ex2d_patch.md, "Argument rules and per-patch statuses" and "Numerics
 * and tolerances") against the CPU reference on the synthetic tiers S (n = 54), M (n = 518) and L (47 patches
 * of one subbundle):
 *   - K1 spots against the reference, the spot invariants ("Invariants"), the pure-Gaussian spot ("Analytic
 *     cases"), degree 8;
 *   - every stage through its own launcher (validation, K3 bit for bit, K4..K7 within "Tolerances"), then the
 *     pipeline launcher, in one chunk and in several, over a whole frame and over a range inside it;
 *   - the invariants on the GPU side alone and the analytic cases (noiseless patch, noisy chi over
 *     tier L, a masked column);
 *   - per-patch failures (a non-positive pivot, a one-sweep Jacobi limit), a NULL witness, determinism;
 *   - bad input: every host rule rejected before any launch, every device rule caught by the validation pass,
 *     and in both cases nothing written.
 *   - suite ex2d_patch_gpu_data (CTest's test_ex2d_patch_gpu.data, $GW_DATA_DIR): the DESI test PSF's spots
 *     against specter's ("Real DESI PSFs"), and a frame through that PSF against the reference at every stage.
 * Every call: poisoned outputs before (all-ones bytes), the witness after, checked by the stage's expected
 * launches and items. The checks live in support/ex2d_gpu_checks.c and print their own words ("still holds
 * the poison", "no GPU code ran", "partial execution"), which is what the canaries
 * (tests/ex2d_patch/ex2d_patch_canaries.cu) are matched against. The canary builds link this file unchanged
 * with ex2d_patches_launch wrapped by a planted fault (--wrap, see tests/ex2d_patch/CMakeLists.txt).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "ex2d_compare.h"
#include "ex2d_gpu_case.h"
#include "ex2d_gpu_checks.h"
#include "ex2d_patch.h"
#include "ex2d_patch_ref.h"
#include "ex2d_psf_golden.h"
#include "ex2d_synth.h"
#include "gw_gpu_test.h"

TestSuite(ex2d_patch_gpu, .init = gw_gpu_test_init, .fini = ex2d_gc_fini);

#define REF_THREADS 0 /* the reference on every core: nthreads changes no bit */

static void expect_success(cudaError_t rc, const char *what)
{
    cr_expect(rc == cudaSuccess, "%s returned %s (%s)", what, cudaGetErrorName(rc), cudaGetErrorString(rc));
}

/* A check word no launcher writes (ex2d_gc_poison_all leaves the word alone: -1 would read as a failed
 * validation). Stream-ordered; a validation pass must overwrite it. */
#define CHECK_WORD_POISON 0x5A5A5A5A
static void poison_check_word(ex2d_gpu_case *t)
{
    static const ex2d_check_word poison = {CHECK_WORD_POISON, CHECK_WORD_POISON};
    GW_CUDA(cudaMemcpyAsync(t->d_w.check, &poison, sizeof poison, cudaMemcpyHostToDevice, t->stream));
}

static void expect_witness(const ex2d_gpu_case *t, int slot, uint64_t launches, uint64_t items, const char *stage)
{
    char msg[1024];
    cr_expect(ex2d_gc_witness(t, slot, launches, items, msg, sizeof msg) == 0, "%s witness: %s", stage, msg);
}

static uint64_t core_bins(const ex2d_gpu_case *t, int first, int count)
{
    const int64_t bins = ex2d_ref_count_core_bins(&t->f.inputs, first, count);
    cr_assert(bins >= 0);
    return (uint64_t)bins;
}

/* The frame outputs without info (K7 reads info). */
static void poison_frame(ex2d_gpu_case *t)
{
    ex2d_gc_poison(t, t->d_out.flux, t->bins * sizeof(double));
    ex2d_gc_poison(t, t->d_out.ivar, t->bins * sizeof(double));
    ex2d_gc_poison(t, t->d_out.rdiags, t->bins * (size_t)t->ndiags * sizeof(double));
    ex2d_gc_poison(t, t->d_out.chi2pix, t->bins * sizeof(double));
    ex2d_gc_poison(t, t->d_out.pixmask_fraction, t->bins * sizeof(double));
}

static void poison_doubles(ex2d_gpu_case *t, double *d_first, size_t stride)
{
    ex2d_gc_poison(t, d_first, stride * (size_t)t->max_batch * sizeof(double));
}

/* ------------------------------------------------------------------ K1 */

static void spots_match_the_reference(const ex2d_frame_config *cfg)
{
    ex2d_gpu_case t;
    ex2d_gc_open(&t, cfg, 1);
    const int entries = (int)t.entries;
    expect_success(ex2d_spots_launch(&t.f.params, &t.d_in, 0, entries, t.d_spots_k1, t.d_witness + EX2D_W_SPOTS,
                                     t.stream),
                   "ex2d_spots_launch");
    ex2d_gc_download(&t);
    cr_expect(ex2d_check_spots(&t, 0, t.entries) == 0, "K1 spots differ from the reference (above)");
    expect_witness(&t, EX2D_W_SPOTS, 1, (uint64_t)entries, "K1");

    /* a sub-range writes its own entries and nothing else */
    const int first = entries / 3, count = entries / 3 + 1;
    ex2d_gc_poison_all(&t);
    expect_success(ex2d_spots_launch(&t.f.params, &t.d_in, first, count, t.d_spots_k1, t.d_witness + EX2D_W_SPOTS,
                                     t.stream),
                   "ex2d_spots_launch on a sub-range");
    ex2d_gc_download(&t);
    cr_expect(ex2d_check_spots(&t, (size_t)first, (size_t)count) == 0, "K1 on entries [%d, %d) (above)", first,
              first + count);
    expect_witness(&t, EX2D_W_SPOTS, 1, (uint64_t)count, "K1 on a sub-range");
    ex2d_gc_close(&t);
}

Test(ex2d_patch_gpu, k1_spots_match_the_reference_on_tier_m_and_a_sub_range_writes_only_its_entries)
{
    const ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_M);
    spots_match_the_reference(&cfg);
}

Test(ex2d_patch_gpu, k1_spots_of_degree_8_in_x_and_y_match_the_reference)
{
    ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_S);
    cfg.gx = cfg.gy = 8; /* coefficients above degree 4 are 0, but every Hermite term is evaluated */
    spots_match_the_reference(&cfg);
}

/* One axis of the pure Gaussian spot: P_0[q] = (erf(u_(q+1)/sqrt 2) - erf(u_q/sqrt 2))/2. */
static void gaussian_axis(double sigma, double offset, int hsize, double *out)
{
    for (int q = 0; q <= 2 * hsize; q++) {
        const double u0 = ((double)(q - hsize) - 0.5 - offset) / sigma, u1 = u0 + 1.0 / sigma;
        out[q] = 0.5 * (erf(u1 * 0.70710678118654752440) - erf(u0 * 0.70710678118654752440));
    }
}

Test(ex2d_patch_gpu, k1_pure_gaussian_spots_equal_the_normalised_erf_product)
{
    ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_S);
    cfg.gx = cfg.gy = 0; /* c00 = 1 only */
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 1);
    const ex2d_params *p = &t.f.params;
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1;
    expect_success(ex2d_spots_launch(p, &t.d_in, 0, (int)t.entries, t.d_spots_k1, t.d_witness + EX2D_W_SPOTS,
                                     t.stream),
                   "ex2d_spots_launch");
    ex2d_gc_download(&t);
    expect_witness(&t, EX2D_W_SPOTS, 1, t.entries, "K1");
    ex2d_cmp cmp;
    ex2d_cmp_init(&cmp, "pure Gaussian spot against P0y P0x [entry][pixel]", t.spot_pixels);
    double px[2 * EX2D_MAX_HALF_SIZE + 1], py[2 * EX2D_MAX_HALF_SIZE + 1];
    for (size_t e = 0; e < t.entries; e++) {
        gaussian_axis(t.f.sigx[e], t.f.dx[e], p->hsizex, px);
        gaussian_axis(t.f.sigy[e], t.f.dy[e], p->hsizey, py);
        double sum = 0.0;
        for (int iy = 0; iy < ny; iy++)
            for (int ix = 0; ix < nx; ix++) sum += py[iy] * px[ix];
        for (int iy = 0; iy < ny; iy++)
            for (int ix = 0; ix < nx; ix++) {
                const size_t q = (size_t)(iy * nx + ix);
                ex2d_cmp_close(&cmp, e * t.spot_pixels + q, t.got_spots[e * t.spot_pixels + q], py[iy] * px[ix] / sum,
                               1e-15, 0.0);
            }
    }
    cr_expect(ex2d_cmp_report(&cmp) == 0, "K1 differs from the analytic Gaussian by more than 1e-15 (above)");
    ex2d_gc_close(&t);
}

/* ------------------------------------------------------------------ stage by stage */

/* Validation and K3 on both sides, then K4: shared by the full stage test and the failure tests. icov_k3
 * receives the GPU's iCov slots as K3 left them. */
static void run_validate_and_normal(ex2d_gpu_case *t, double **icov_k3)
{
    const ex2d_params *p = &t->f.params;
    const int np = t->f.npatch;
    cr_assert(np <= t->max_batch, "the stage tests keep every patch in one batch");
    cr_assert(ex2d_ref_validate(p, &t->f.inputs, 0, np, t->ref_ws, t->ws_bytes, t->max_batch, REF_THREADS) == 0);
    expect_success(ex2d_validate_launch(p, &t->d_in, 0, np, t->d_ws, t->ws_bytes, t->max_batch,
                                        t->d_witness + EX2D_W_VALIDATE, t->stream),
                   "ex2d_validate_launch");
    ex2d_gc_download(t);
    cr_expect(ex2d_check_validation_word(t, EX2D_OK, -1) == 0, "validation of a valid frame (above)");
    expect_witness(t, EX2D_W_VALIDATE, 1, (uint64_t)np, "validation");

    ex2d_gc_poison_all(t);
    cr_assert(ex2d_ref_normal(p, &t->f.inputs, t->f.spots, 0, np, t->ref_ws, t->ws_bytes, t->max_batch,
                              REF_THREADS) == 0);
    expect_success(ex2d_normal_launch(p, &t->d_in, t->d_spots, 0, np, t->d_ws, t->ws_bytes, t->max_batch,
                                      t->d_witness + EX2D_W_NORMAL, t->stream),
                   "ex2d_normal_launch");
    ex2d_gc_download(t);
    cr_expect(ex2d_check_normal(t, 0, np) == 0, "K3 is not bit-identical to the reference (above)");
    expect_witness(t, EX2D_W_NORMAL, 1, ex2d_gc_pairs(t, 0, np), "K3");
    const size_t doubles = t->got_w.icov_stride * (size_t)np;
    *icov_k3 = malloc(doubles * sizeof(double));
    cr_assert(*icov_k3);
    memcpy(*icov_k3, t->got_w.icov, doubles * sizeof(double));
}

/* K4..K7 through their own launchers, each against the reference stage on the reference's own previous
 * results (the GPU continues from its own). */
static void run_solve_stages(ex2d_gpu_case *t, const double *icov_k3)
{
    const ex2d_params *p = &t->f.params;
    const ex2d_inputs *in = &t->f.inputs;
    const int np = t->f.npatch;

    ex2d_gc_reset_witness(t);
    poison_doubles(t, t->d_w.xflux, t->d_w.vec_stride);
    ex2d_gc_poison(t, t->d_out.info, (size_t)np * sizeof(ex2d_patch_info));
    cr_assert(ex2d_ref_cholesky(p, in, 0, np, t->ref_ws, t->ws_bytes, t->max_batch, t->ref_out.info, REF_THREADS) ==
              0);
    expect_success(ex2d_cholesky_launch(p, &t->d_in, 0, np, t->d_ws, t->ws_bytes, t->max_batch, t->d_out.info,
                                        t->d_witness + EX2D_W_CHOLESKY, t->stream),
                   "ex2d_cholesky_launch");
    ex2d_gc_download(t);
    cr_expect(ex2d_check_cholesky(t, 0, np, icov_k3) == 0, "K4 (above)");
    expect_witness(t, EX2D_W_CHOLESKY, 1, (uint64_t)np, "K4");
    const uint64_t blocks = ex2d_gc_factorised_blocks(t, 0, np);

    ex2d_gc_reset_witness(t);
    poison_doubles(t, t->d_w.cblk, t->d_w.blk_stride);
    cr_assert(ex2d_ref_cblocks(p, in, 0, np, t->ref_ws, t->ws_bytes, t->max_batch, t->ref_out.info, REF_THREADS) ==
              0);
    expect_success(ex2d_cblocks_launch(p, &t->d_in, 0, np, t->d_ws, t->ws_bytes, t->max_batch, t->d_out.info,
                                       t->d_witness + EX2D_W_CBLOCKS, t->stream),
                   "ex2d_cblocks_launch");
    ex2d_gc_download(t);
    cr_expect(ex2d_check_cblocks(t, 0, np) == 0, "K5 (above)");
    expect_witness(t, EX2D_W_CBLOCKS, 1, blocks, "K5");

    ex2d_gc_reset_witness(t);
    poison_doubles(t, t->d_w.qblk, t->d_w.blk_stride);
    cr_assert(ex2d_ref_jacobi(p, in, 0, np, t->ref_ws, t->ws_bytes, t->max_batch, t->ref_out.info, REF_THREADS) ==
              0);
    expect_success(ex2d_jacobi_launch(p, &t->d_in, 0, np, t->d_ws, t->ws_bytes, t->max_batch, t->d_out.info,
                                      t->d_witness + EX2D_W_JACOBI, t->stream),
                   "ex2d_jacobi_launch");
    ex2d_gc_download(t);
    cr_expect(ex2d_check_jacobi(t, 0, np) == 0, "K6 (above)");
    expect_witness(t, EX2D_W_JACOBI, 1, blocks, "K6");

    ex2d_gc_reset_witness(t);
    poison_frame(t);
    poison_doubles(t, t->d_w.model, t->d_w.model_stride);
    cr_assert(ex2d_ref_outputs(p, in, t->f.spots, 0, np, t->ref_ws, t->ws_bytes, t->max_batch, &t->ref_out,
                               REF_THREADS) == 0);
    expect_success(ex2d_outputs_launch(p, &t->d_in, t->d_spots, 0, np, t->d_ws, t->ws_bytes, t->max_batch, &t->d_out,
                                       t->d_witness + EX2D_W_OUTPUTS, t->stream),
                   "ex2d_outputs_launch");
    ex2d_gc_download(t);
    cr_expect(ex2d_check_frame(t, 0, np) == 0, "K7 frame outputs (above)");
    cr_expect(ex2d_check_model(t, 0, np) == 0, "K7 model (above)");
    expect_witness(t, EX2D_W_OUTPUTS, 1, core_bins(t, 0, np), "K7");
}

static void every_stage_matches_the_reference(int tier)
{
    const ex2d_frame_config cfg = ex2d_gc_tier_config(tier);
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 1);
    double *icov_k3 = NULL;
    run_validate_and_normal(&t, &icov_k3);
    run_solve_stages(&t, icov_k3);
    /* tiers S and M are noiseless single patches with ivar 1 ("Analytic cases") */
    cr_expect(ex2d_check_noiseless(&t, 0, t.f.npatch) == 0, "noiseless patch (above)");
    free(icov_k3);
    ex2d_gc_close(&t);
}

Test(ex2d_patch_gpu, every_stage_matches_the_reference_on_tier_s)
{
    every_stage_matches_the_reference(EX2D_TIER_S);
}

Test(ex2d_patch_gpu, every_stage_matches_the_reference_on_tier_m)
{
    every_stage_matches_the_reference(EX2D_TIER_M);
}

Test(ex2d_patch_gpu, a_non_positive_pivot_marks_the_patch_and_zeroes_its_core)
{
    const ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_S);
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 1);
    double *icov_k3 = NULL;
    run_validate_and_normal(&t, &icov_k3);
    /* the same non-positive first pivot on both sides: K4 stops at column 0 */
    const double negative = -1.0;
    t.ref_w.icov[0] = negative;
    GW_CUDA(cudaMemcpy(t.d_w.icov, &negative, sizeof negative, cudaMemcpyHostToDevice));
    run_solve_stages(&t, icov_k3);
    cr_expect(t.ref_out.info[0].status == EX2D_PATCH_NOT_POSDEF && t.got_out.info[0].status == EX2D_PATCH_NOT_POSDEF,
              "status %d on the GPU, %d in the reference; both must be EX2D_PATCH_NOT_POSDEF (%d)",
              t.got_out.info[0].status, t.ref_out.info[0].status, EX2D_PATCH_NOT_POSDEF);
    free(icov_k3);
    ex2d_gc_close(&t);
}

/* ------------------------------------------------------------------ the pipeline */

/* ex2d_patches_launch over [first, first + count) in chunks of max_batch (<= the case's), after poisoning
 * everything; then the check word, the frame outputs against the reference (ex2d_ref_patches must have run
 * on the same range) and the seven witness records. */
static void run_pipeline(ex2d_gpu_case *t, int first, int count, int max_batch, gw_witness *d_witness)
{
    ex2d_gc_poison_all(t);
    expect_success(ex2d_patches_launch(&t->f.params, &t->d_in, t->d_spots, first, count, max_batch, t->d_ws,
                                       t->ws_bytes, &t->d_out, d_witness, t->stream),
                   "ex2d_patches_launch");
    ex2d_gc_download(t);
}

static void reference_pipeline(ex2d_gpu_case *t, int first, int count)
{
    const int rc = ex2d_ref_patches(&t->f.params, &t->f.inputs, t->f.spots, first, count, t->max_batch, t->ref_ws,
                                    t->ws_bytes, &t->ref_out, REF_THREADS);
    cr_assert(rc == 0, "ex2d_ref_patches: %s", ex2d_error_str(rc));
}

static void expect_pipeline_matches(const ex2d_gpu_case *t, int first, int count, int max_batch)
{
    cr_expect(ex2d_check_validation_word(t, EX2D_OK, -1) == 0, "validation of a valid frame (above)");
    cr_expect(ex2d_check_frame(t, first, count) == 0, "pipeline frame outputs (above)");
    cr_expect(ex2d_check_pipeline_witness(t, first, count, max_batch, 1) == 0, "pipeline witness (above)");
}

Test(ex2d_patch_gpu, pipeline_on_tier_s_matches_the_reference)
{
    const ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_S);
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 1);
    reference_pipeline(&t, 0, t.f.npatch);
    run_pipeline(&t, 0, t.f.npatch, 1, t.d_witness);
    expect_pipeline_matches(&t, 0, t.f.npatch, 1);
    cr_expect(ex2d_check_model(&t, 0, t.f.npatch) == 0, "pipeline model (above)");
    cr_expect(ex2d_check_noiseless(&t, 0, t.f.npatch) == 0, "noiseless patch (above)");
    ex2d_gc_close(&t);
}

Test(ex2d_patch_gpu, pipeline_on_tier_m_matches_the_reference_and_the_noiseless_truth)
{
    const ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_M);
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 1);
    reference_pipeline(&t, 0, t.f.npatch);
    run_pipeline(&t, 0, t.f.npatch, 1, t.d_witness);
    expect_pipeline_matches(&t, 0, t.f.npatch, 1);
    cr_expect(ex2d_check_model(&t, 0, t.f.npatch) == 0, "pipeline model (above)");
    cr_expect(ex2d_check_noiseless(&t, 0, t.f.npatch) == 0, "noiseless patch (above)");
    ex2d_gc_close(&t);
}

/* Copies of what one run wrote, for bit-for-bit comparisons between runs. */
typedef struct run_copy {
    void *ws;
    double *frame; /* flux, ivar, chi2pix, pixmask_fraction, rdiags */
    ex2d_patch_info *info;
} run_copy;

static void copy_run(const ex2d_gpu_case *t, run_copy *c)
{
    const size_t frame = t->bins * (4 + (size_t)t->ndiags);
    c->ws = malloc(t->ws_bytes);
    c->frame = malloc(frame * sizeof(double));
    c->info = malloc((size_t)t->f.npatch * sizeof(ex2d_patch_info));
    cr_assert(c->ws && c->frame && c->info);
    memcpy(c->ws, t->got_ws, t->ws_bytes);
    const double *arrays[] = {t->got_out.flux, t->got_out.ivar, t->got_out.chi2pix, t->got_out.pixmask_fraction};
    for (size_t a = 0; a < 4; a++) memcpy(c->frame + a * t->bins, arrays[a], t->bins * sizeof(double));
    memcpy(c->frame + 4 * t->bins, t->got_out.rdiags, t->bins * (size_t)t->ndiags * sizeof(double));
    memcpy(c->info, t->got_out.info, (size_t)t->f.npatch * sizeof(ex2d_patch_info));
}

static void free_copy(run_copy *c)
{
    free(c->ws);
    free(c->frame);
    free(c->info);
}

/* Tier L (ex2d_gc_tier_config); on the emulated device (GW_GPU_EMULATED) its first 12 patches, from the
 * camera's first wavelength: the same subbundle, stages and chunking at a quarter of the cost; and its first 4,
 * one chunk, under GW_EX2D_QUICK=1 (the emulated canaries: two calls and a half grid are all they need). */
static int tier_l_patches(void)
{
    const char *quick = getenv("GW_EX2D_QUICK");
    return !GW_GPU_EMULATED ? 47 : quick && !strcmp(quick, "1") ? 4 : 12;
}
static ex2d_frame_config tier_l_config(void)
{
    ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_L);
    if (GW_GPU_EMULATED) cfg.nwave = tier_l_patches() * cfg.nwavestep;
    return cfg;
}

/* The frame outputs and info of two runs are the same bits; with_ws: the workspaces too. */
static void expect_same_bits(const run_copy *a, const run_copy *b, const ex2d_gpu_case *t, int with_ws,
                             const char *what)
{
    const size_t frame = t->bins * (4 + (size_t)t->ndiags);
    cr_expect(memcmp(a->frame, b->frame, frame * sizeof(double)) == 0, "%s: frame outputs differ", what);
    cr_expect(memcmp(a->info, b->info, (size_t)t->f.npatch * sizeof(ex2d_patch_info)) == 0, "%s: info differs", what);
    if (with_ws) cr_expect(memcmp(a->ws, b->ws, t->ws_bytes) == 0, "%s: workspaces differ", what);
}

/* The canaries run this test: two pipeline calls on the same buffers, each poisoned first and checked. */
Test(ex2d_patch_gpu, pipeline_on_tier_l_in_chunks_matches_the_reference_and_repeats_bit_for_bit)
{
    gw_skip_under_sanitizer("tier L (47 patches)");
    const ex2d_frame_config cfg = tier_l_config();
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 10); /* 47 patches: chunks of 10, 10, 10, 10, 7 (emulated, 12: 10 and 2; quick, 4) */
    reference_pipeline(&t, 0, t.f.npatch);
    run_copy first, second;
    run_pipeline(&t, 0, t.f.npatch, 10, t.d_witness);
    expect_pipeline_matches(&t, 0, t.f.npatch, 10);
    copy_run(&t, &first);
    run_pipeline(&t, 0, t.f.npatch, 10, t.d_witness);
    expect_pipeline_matches(&t, 0, t.f.npatch, 10);
    copy_run(&t, &second);
    expect_same_bits(&first, &second, &t, 1, "two runs of the pipeline");
    free_copy(&first);
    free_copy(&second);
    ex2d_gc_close(&t);
}

Test(ex2d_patch_gpu, tier_l_noisy_chi_has_unit_scatter_and_batching_changes_no_bit)
{
    gw_skip_under_sanitizer("tier L (47 patches)");
    const ex2d_frame_config cfg = tier_l_config();
    ex2d_gpu_case t;
    const int patches = tier_l_patches();
    ex2d_gc_open(&t, &cfg, patches);
    const ex2d_params *p = &t.f.params;
    const int np = t.f.npatch, m = p->m;
    cr_assert(np == patches, "tier L has %d patches, expected %d", np, patches);
    reference_pipeline(&t, 0, np);
    run_pipeline(&t, 0, np, np, t.d_witness);
    expect_pipeline_matches(&t, 0, np, np);
    cr_expect(ex2d_check_model(&t, 0, np) == 0, "pipeline model (above)");

    /* "Analytic cases": chi = (flux - R f_true) sqrt(ivar) over every core bin, R from the GPU's Q (one batch: every
     * patch's Q is still in the workspace). */
    double sum = 0.0, sum2 = 0.0;
    size_t count = 0;
    for (int b = 0; b < np; b++) {
        const ex2d_patch_desc *d = &t.f.patches[b];
        const ex2d_gc_slot s = ex2d_gc_slot_of(&t, &t.got_w, b);
        for (int c = 0; c < d->ncore; c++) {
            const double *q = s.qblk + (size_t)c * m * m;
            const size_t spec = (size_t)(d->spec_first + d->core_first + c);
            for (int j = 0; j < d->ncore_wave; j++) {
                const int r = p->wavepad + j;
                double rowsum = 0.0, rf = 0.0;
                for (int k = 0; k < m; k++) rowsum += q[r * m + k];
                for (int k = 0; k < m; k++)
                    rf += q[r * m + k] / rowsum * t.f.f_true[spec * p->nwave_tab + d->wave_first + k];
                const size_t at = (size_t)(d->out_spec_first + c) * p->nwave_out + d->out_wave_first + j;
                const double chi = (t.got_out.flux[at] - rf) * sqrt(t.got_out.ivar[at]);
                sum += chi, sum2 += chi * chi, count++;
            }
        }
    }
    const double mean = sum / (double)count, sd = sqrt(sum2 / (double)count - mean * mean);
    cr_expect(count >= 2000 && fabs(sd - 1.0) < 0.1,
              "noisy chi over %zu core bins: mean %.4f, std %.4f (want >= 2000 bins and |std - 1| < 0.1)", count, mean,
              sd);

    /* the same frame in chunks of 10 over the same workspace: each patch is computed alone, so no bit moves */
    run_copy one_batch, chunks;
    copy_run(&t, &one_batch);
    run_pipeline(&t, 0, np, 10, t.d_witness);
    cr_expect(ex2d_check_pipeline_witness(&t, 0, np, 10, 1) == 0, "witness in chunks of 10 (above)");
    copy_run(&t, &chunks);
    expect_same_bits(&one_batch, &chunks, &t, 0, "one batch against chunks of 10");
    free_copy(&one_batch);
    free_copy(&chunks);
    ex2d_gc_close(&t);
}

Test(ex2d_patch_gpu, a_patch_range_inside_the_frame_writes_only_its_cores)
{
    gw_skip_under_sanitizer("tier L (47 patches)");
    const ex2d_frame_config cfg = tier_l_config();
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 10);
    /* patches 10..24 in chunks of 10 and 5 (emulated: 2..8 in chunks of 4 and 3) */
    const int first = GW_GPU_EMULATED ? 2 : 10, count = GW_GPU_EMULATED ? 7 : 15, chunk = GW_GPU_EMULATED ? 4 : 10;
    reference_pipeline(&t, first, count);
    run_pipeline(&t, first, count, chunk, t.d_witness);
    expect_pipeline_matches(&t, first, count, chunk);
    ex2d_gc_close(&t);
}

Test(ex2d_patch_gpu, a_masked_column_keeps_every_result_and_pixmask_is_positive_exactly_where_spots_touch_it)
{
    /* the column under the middle core fibre at the middle core bin, from an unmasked frame */
    ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_M);
    ex2d_frame probe;
    cr_assert(ex2d_frame_make(&cfg, &probe) == 0);
    const int fibre = cfg.fibre_first + cfg.nfibre / 2, bin = probe.params.wavepad + cfg.nwave / 2;
    const size_t e_mid = (size_t)(fibre - probe.tab_fibre_first) * probe.params.nwave_tab + (size_t)bin;
    const int column = (int)floor(probe.trace_x[e_mid] + 0.5);
    ex2d_frame_free(&probe);
    cfg.nmasked_cols = 1;
    cfg.masked_cols[0] = column;

    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 1);
    const ex2d_params *p = &t.f.params;
    reference_pipeline(&t, 0, t.f.npatch);
    run_pipeline(&t, 0, t.f.npatch, 1, t.d_witness);
    expect_pipeline_matches(&t, 0, t.f.npatch, 1);
    cr_expect(ex2d_check_model(&t, 0, t.f.npatch) == 0, "pipeline model (above)");
    cr_expect(ex2d_check_noiseless(&t, 0, t.f.npatch) == 0, "noiseless patch with a masked column (above)");

    /* pixmask_fraction > 0 exactly for the core bins whose spot has weight in the column */
    const int nx = 2 * p->hsizex + 1, ny = 2 * p->hsizey + 1, x_image = column - t.f.image_x0;
    const ex2d_patch_desc *d = &t.f.patches[0];
    int touched = 0, clear = 0, wrong = 0;
    for (int c = 0; c < d->ncore; c++)
        for (int j = 0; j < d->ncore_wave; j++) {
            const size_t e = (size_t)(d->spec_first + d->core_first + c) * p->nwave_tab + d->wave_first +
                             p->wavepad + j;
            const double *spot = t.f.spots + e * t.spot_pixels;
            double weight = 0.0;
            if (x_image >= t.f.xc[e] && x_image < t.f.xc[e] + nx)
                for (int iy = 0; iy < ny; iy++) weight += spot[iy * nx + (x_image - t.f.xc[e])];
            const double mask = t.got_out.pixmask_fraction[(size_t)(d->out_spec_first + c) * p->nwave_out +
                                                           d->out_wave_first + j];
            if (weight > 0.0) touched++; else clear++;
            if ((mask > 0.0) != (weight > 0.0) && ++wrong <= EX2D_CMP_SHOW)
                fprintf(stderr, "  core bin (%d, %d): pixmask_fraction %.3g, spot weight in the column %.3g\n", c, j,
                        mask, weight);
        }
    cr_expect(wrong == 0, "%d core bins have pixmask_fraction > 0 where no spot weight lies in the column, or "
                          "the reverse", wrong);
    cr_expect(touched > 0 && clear > 0, "the masked column %d touches %d core bins and misses %d: pick one that "
                                        "does both", column, touched, clear);
    ex2d_gc_close(&t);
}

Test(ex2d_patch_gpu, a_one_sweep_jacobi_limit_marks_the_patch_not_converged_and_zeroes_its_core)
{
    const ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_S);
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 1);
    t.f.params.jacobi_max_sweeps = 1; /* both sides read this struct */
    reference_pipeline(&t, 0, t.f.npatch);
    cr_assert(t.ref_out.info[0].status == EX2D_PATCH_NOT_CONVERGED,
              "the reference converged in one sweep (status %d): this test needs a block that does not",
              t.ref_out.info[0].status);
    run_pipeline(&t, 0, t.f.npatch, 1, t.d_witness);
    expect_pipeline_matches(&t, 0, t.f.npatch, 1);
    cr_expect(ex2d_check_model(&t, 0, t.f.npatch) == 0, "a failed patch leaves its model slot alone (above)");
    ex2d_gc_close(&t);
}

Test(ex2d_patch_gpu, a_null_witness_turns_recording_off_and_changes_no_bit)
{
    const ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_S);
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 1);
    reference_pipeline(&t, 0, t.f.npatch);
    run_copy witnessed, silent;
    run_pipeline(&t, 0, t.f.npatch, 1, t.d_witness);
    expect_pipeline_matches(&t, 0, t.f.npatch, 1);
    copy_run(&t, &witnessed);
    run_pipeline(&t, 0, t.f.npatch, 1, NULL);
    cr_expect(ex2d_check_frame(&t, 0, t.f.npatch) == 0, "pipeline frame outputs without a witness (above)");
    for (int slot = 0; slot < EX2D_WITNESS_SLOTS; slot++) expect_witness(&t, slot, 0, 0, "a NULL witness");
    copy_run(&t, &silent);
    expect_same_bits(&witnessed, &silent, &t, 1, "with and without a witness");
    free_copy(&witnessed);
    free_copy(&silent);
    ex2d_gc_close(&t);
}

/* ------------------------------------------------------------------ bad input: host rules */

enum { L_VALIDATE, L_NORMAL, L_CHOLESKY, L_CBLOCKS, L_JACOBI, L_OUTPUTS, L_PATCHES, L_COUNT };
static const char *const launcher_name[L_COUNT] = {
    "ex2d_validate_launch", "ex2d_normal_launch", "ex2d_cholesky_launch", "ex2d_cblocks_launch",
    "ex2d_jacobi_launch",   "ex2d_outputs_launch", "ex2d_patches_launch"};
#define ALL_LAUNCHERS ((1u << L_COUNT) - 1u)
#define BATCH_STAGES ((1u << L_NORMAL) | (1u << L_CHOLESKY) | (1u << L_CBLOCKS) | (1u << L_JACOBI) | (1u << L_OUTPUTS))

typedef struct call_args {
    ex2d_params params;
    ex2d_inputs in;
    ex2d_outputs out;
    const ex2d_params *p;
    const ex2d_inputs *d_in;
    const double *d_spots;
    int first, count, max_batch;
    void *d_ws;
    size_t ws_bytes;
    ex2d_patch_info *d_info;
    const ex2d_outputs *d_out;
} call_args;

static cudaError_t call_launcher(int launcher, const call_args *a, ex2d_gpu_case *t)
{
    gw_witness *w = t->d_witness;
    switch (launcher) {
    case L_VALIDATE:
        return ex2d_validate_launch(a->p, a->d_in, a->first, a->count, a->d_ws, a->ws_bytes, a->max_batch,
                                    w + EX2D_W_VALIDATE, t->stream);
    case L_NORMAL:
        return ex2d_normal_launch(a->p, a->d_in, a->d_spots, a->first, a->count, a->d_ws, a->ws_bytes, a->max_batch,
                                  w + EX2D_W_NORMAL, t->stream);
    case L_CHOLESKY:
        return ex2d_cholesky_launch(a->p, a->d_in, a->first, a->count, a->d_ws, a->ws_bytes, a->max_batch, a->d_info,
                                    w + EX2D_W_CHOLESKY, t->stream);
    case L_CBLOCKS:
        return ex2d_cblocks_launch(a->p, a->d_in, a->first, a->count, a->d_ws, a->ws_bytes, a->max_batch, a->d_info,
                                   w + EX2D_W_CBLOCKS, t->stream);
    case L_JACOBI:
        return ex2d_jacobi_launch(a->p, a->d_in, a->first, a->count, a->d_ws, a->ws_bytes, a->max_batch, a->d_info,
                                  w + EX2D_W_JACOBI, t->stream);
    case L_OUTPUTS:
        return ex2d_outputs_launch(a->p, a->d_in, a->d_spots, a->first, a->count, a->d_ws, a->ws_bytes, a->max_batch,
                                   a->d_out, w + EX2D_W_OUTPUTS, t->stream);
    default:
        return ex2d_patches_launch(a->p, a->d_in, a->d_spots, a->first, a->count, a->max_batch, a->d_ws, a->ws_bytes,
                                   a->d_out, w, t->stream);
    }
}

/* A valid call over the first max_batch patches; the pointers point into a itself. */
static void good_call(ex2d_gpu_case *t, call_args *a)
{
    memset(a, 0, sizeof *a);
    a->params = t->f.params;
    a->in = t->d_in;
    a->out = t->d_out;
    a->p = &a->params;
    a->d_in = &a->in;
    a->d_out = &a->out;
    a->d_spots = t->d_spots;
    a->first = 0;
    a->count = t->max_batch;
    a->max_batch = t->max_batch;
    a->d_ws = t->d_ws;
    a->ws_bytes = t->ws_bytes;
    a->d_info = t->d_out.info;
}

typedef struct host_rule {
    const char *rule;
    unsigned launchers; /* the launchers that take the argument */
    int check_code;     /* what ex2d_check_args says (EX2D_OK: a rule of the launchers alone) */
} host_rule;

static const host_rule host_rules[] = {
    {"params NULL", ALL_LAUNCHERS, EX2D_ERR_NULL},
    {"inputs NULL", ALL_LAUNCHERS, EX2D_ERR_NULL},
    {"image NULL", ALL_LAUNCHERS, EX2D_ERR_NULL},
    {"patch table NULL", ALL_LAUNCHERS, EX2D_ERR_NULL},
    {"nspec_out 0", ALL_LAUNCHERS, EX2D_ERR_SIZE},
    {"gx 9", ALL_LAUNCHERS, EX2D_ERR_DEGREE},
    {"m 113", ALL_LAUNCHERS, EX2D_ERR_LIMIT},
    {"hsizey 16", ALL_LAUNCHERS, EX2D_ERR_LIMIT},
    {"2 wavepad >= m", ALL_LAUNCHERS, EX2D_ERR_LIMIT},
    {"patch range past the table", ALL_LAUNCHERS, EX2D_ERR_RANGE},
    {"patch_first -1", ALL_LAUNCHERS, EX2D_ERR_RANGE},
    {"regularize NaN", ALL_LAUNCHERS, EX2D_ERR_PARAM},
    {"psferr -1", ALL_LAUNCHERS, EX2D_ERR_PARAM},
    {"jacobi_tol 0", ALL_LAUNCHERS, EX2D_ERR_PARAM},
    {"jacobi_max_sweeps 101", ALL_LAUNCHERS, EX2D_ERR_PARAM},
    {"ndiag = m", ALL_LAUNCHERS, EX2D_ERR_PARAM},
    {"workspace NULL", ALL_LAUNCHERS, EX2D_ERR_WORKSPACE},
    {"workspace one byte short", ALL_LAUNCHERS, EX2D_ERR_WORKSPACE},
    {"workspace misaligned", ALL_LAUNCHERS, EX2D_ERR_WORKSPACE},
    {"patch count 0", ALL_LAUNCHERS, EX2D_OK},
    {"max_batch 0", ALL_LAUNCHERS, EX2D_OK},
    {"batch larger than max_batch", BATCH_STAGES, EX2D_OK},
    {"spots NULL", (1u << L_NORMAL) | (1u << L_OUTPUTS) | (1u << L_PATCHES), EX2D_OK},
    {"info NULL", (1u << L_CHOLESKY) | (1u << L_CBLOCKS) | (1u << L_JACOBI), EX2D_OK},
    {"outputs NULL", (1u << L_OUTPUTS) | (1u << L_PATCHES), EX2D_OK},
    {"chi2pix NULL", (1u << L_OUTPUTS) | (1u << L_PATCHES), EX2D_OK},
};

static void break_rule(size_t rule, call_args *a, const ex2d_gpu_case *t)
{
    switch (rule) {
    case 0: a->p = NULL; break;
    case 1: a->d_in = NULL; break;
    case 2: a->in.image = NULL; break;
    case 3: a->in.patches = NULL; break;
    case 4: a->params.nspec_out = 0; break;
    case 5: a->params.gx = 9; break;
    case 6: a->params.m = 113; break;
    case 7: a->params.hsizey = 16; break;
    case 8: a->params.wavepad = a->params.m / 2; break;
    case 9: a->first = t->f.npatch - a->count + 1; break;
    case 10: a->first = -1; break;
    case 11: a->params.regularize = NAN; break;
    case 12: a->params.psferr = -1.0; break;
    case 13: a->params.jacobi_tol = 0.0; break;
    case 14: a->params.jacobi_max_sweeps = 101; break;
    case 15: a->params.ndiag = a->params.m; break;
    case 16: a->d_ws = NULL; break;
    case 17: a->ws_bytes -= 1; break;
    case 18: a->d_ws = (char *)a->d_ws + 8, a->ws_bytes -= 8; break;
    case 19: a->count = 0; break;
    case 20: a->max_batch = 0; break;
    case 21: a->count = a->max_batch + 1; break;
    case 22: a->d_spots = NULL; break;
    case 23: a->d_info = NULL; break;
    case 24: a->d_out = NULL; break;
    default: a->out.chi2pix = NULL; break;
    }
}

/* The launch order (docs/architecture.md, "The launcher convention") on a real runtime: an error left pending
 * by someone else's call is returned as it is, still pending, and the pipeline launcher enqueues none of its
 * stages: every output keeps its poison and every stage's witness stays zero. Then the same call works. */
Test(ex2d_patch_gpu, an_error_pending_on_entry_is_returned_untouched_and_nothing_is_enqueued)
{
    const ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_S);
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 1);
    const ex2d_params *p = &t.f.params;
    ex2d_gc_poison_all(&t);
    poison_check_word(&t);
    GW_CUDA(cudaStreamSynchronize(t.stream));

    const cudaError_t pending = gw_plant_pending_error();
    const cudaError_t err = ex2d_patches_launch(p, &t.d_in, t.d_spots, 0, t.f.npatch, t.max_batch, t.d_ws, t.ws_bytes,
                                                &t.d_out, t.d_witness, t.stream);
    cr_expect_eq(err, pending, "ex2d_patches_launch returned %s, want the pending %s", cudaGetErrorName(err),
                 cudaGetErrorName(pending));
    const cudaError_t still = cudaGetLastError(); /* reads and clears it */
    cr_expect_eq(still, pending, "after the call the pending error is %s, want %s untouched", cudaGetErrorName(still),
                 cudaGetErrorName(pending));
    ex2d_gc_download(&t);
    cr_expect(ex2d_check_untouched(&t, 0, 0) == 0, "a stage ran with an error pending (above)");
    cr_expect(t.got_w.check->code == CHECK_WORD_POISON && t.got_w.check->patch == CHECK_WORD_POISON,
              "the check word changed to {%d, %d}: the validation pass was enqueued with an error pending",
              t.got_w.check->code, t.got_w.check->patch);
    char msg[1024];
    for (int slot = 0; slot < EX2D_WITNESS_SLOTS; slot++)
        cr_expect(ex2d_gc_witness(&t, slot, 0, 0, msg, sizeof msg) == 0, "stage %d ran with an error pending: %s",
                  slot, msg);

    ex2d_gc_poison_all(&t); /* nothing pending now: the same call goes through */
    expect_success(ex2d_patches_launch(p, &t.d_in, t.d_spots, 0, t.f.npatch, t.max_batch, t.d_ws, t.ws_bytes,
                                       &t.d_out, t.d_witness, t.stream),
                   "the same call with nothing pending");
    ex2d_gc_download(&t);
    cr_expect(ex2d_check_validation_word(&t, EX2D_OK, -1) == 0, "validation after the retry (above)");
    ex2d_gc_close(&t);
}

Test(ex2d_patch_gpu, host_rules_reject_bad_arguments_before_any_launch_and_write_nothing)
{
    const ex2d_frame_config cfg = tier_l_config();
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 10);
    cr_assert(t.f.npatch > 10, "the batch-size rule needs more patches than max_batch");
    ex2d_gc_poison_all(&t);
    const size_t rules = sizeof host_rules / sizeof host_rules[0];
    for (size_t r = 0; r < rules; r++) {
        call_args a;
        good_call(&t, &a);
        break_rule(r, &a, &t);
        const int code = ex2d_check_args(a.p, a.d_in, a.first, a.count, a.max_batch, a.d_ws, a.ws_bytes);
        cr_expect(code == host_rules[r].check_code, "%s: ex2d_check_args gave %d (%s), expected %d (%s)",
                  host_rules[r].rule, code, ex2d_error_str(code), host_rules[r].check_code,
                  ex2d_error_str(host_rules[r].check_code));
        for (int l = 0; l < L_COUNT; l++) {
            if (!(host_rules[r].launchers & (1u << l))) continue;
            const cudaError_t rc = call_launcher(l, &a, &t);
            cr_expect(rc == cudaErrorInvalidValue, "%s with %s returned %s, expected cudaErrorInvalidValue",
                      launcher_name[l], host_rules[r].rule, cudaGetErrorName(rc));
        }
    }

    /* K1's own rules */
    const ex2d_params *p = &t.f.params;
    ex2d_params bad_degree = *p;
    bad_degree.gx = 9;
    ex2d_inputs no_c = t.d_in, no_dy = t.d_in;
    no_c.psf_c = NULL;
    no_dy.psf_dy = NULL;
    const int entries = (int)t.entries;
    const struct {
        const char *rule;
        const ex2d_params *p;
        const ex2d_inputs *in;
        int first, count;
        double *spots;
    } k1_rules[] = {
        {"params NULL", NULL, &t.d_in, 0, entries, t.d_spots_k1},
        {"inputs NULL", p, NULL, 0, entries, t.d_spots_k1},
        {"psf_c NULL", p, &no_c, 0, entries, t.d_spots_k1},
        {"psf_dy NULL", p, &no_dy, 0, entries, t.d_spots_k1},
        {"spots NULL", p, &t.d_in, 0, entries, NULL},
        {"count 0", p, &t.d_in, 0, 0, t.d_spots_k1},
        {"entry_first -1", p, &t.d_in, -1, entries, t.d_spots_k1},
        {"entries past the table", p, &t.d_in, 1, entries, t.d_spots_k1},
        {"gx 9", &bad_degree, &t.d_in, 0, entries, t.d_spots_k1},
    };
    for (size_t r = 0; r < sizeof k1_rules / sizeof k1_rules[0]; r++) {
        const cudaError_t rc = ex2d_spots_launch(k1_rules[r].p, k1_rules[r].in, k1_rules[r].first,
                                                 k1_rules[r].count, k1_rules[r].spots, t.d_witness + EX2D_W_SPOTS,
                                                 t.stream);
        cr_expect(rc == cudaErrorInvalidValue, "ex2d_spots_launch with %s returned %s, expected cudaErrorInvalidValue",
                  k1_rules[r].rule, cudaGetErrorName(rc));
    }

    ex2d_gc_download(&t);
    cr_expect(ex2d_check_untouched(&t, 0, 0) == 0, "a rejected call wrote (above)");
    for (int slot = 0; slot < EX2D_WITNESS_SLOTS; slot++) expect_witness(&t, slot, 0, 0, "rejected calls");
    ex2d_gc_close(&t);
}

/* ------------------------------------------------------------------ bad input: device rules */

/* A pixel of patch k's box that lies in no box of patches 0..k-1 (so k is the first patch it can fail). */
static size_t pixel_first_in(const ex2d_gpu_case *t, int k)
{
    const ex2d_patch_desc *d = &t->f.patches[k];
    for (int y = d->ymax - 1; y >= d->ymin; y--)
        for (int x = d->xmin; x < d->xmax; x++) {
            int earlier = 0;
            for (int j = 0; j < k && !earlier; j++) {
                const ex2d_patch_desc *o = &t->f.patches[j];
                earlier = x >= o->xmin && x < o->xmax && y >= o->ymin && y < o->ymax;
            }
            if (!earlier) return (size_t)y * t->f.params.npix_x + x;
        }
    cr_assert_fail("every pixel of patch %d's box lies in an earlier patch's box", k);
    return 0;
}

enum { BAD_PATCH = 5, LATER_PATCH = 9 };

typedef struct device_rule {
    const char *rule;
    int code; /* the check word's code; its patch is always BAD_PATCH */
} device_rule;

static const device_rule device_rules[] = {
    {"box past the image's right edge (and a bad table entry in a later patch)", EX2D_ERR_BOX},
    {"box starting at row -1", EX2D_ERR_BOX},
    {"box inside the image but larger than max_box_pixels", EX2D_ERR_BOX},
    {"box one column short of a footprint", EX2D_ERR_FOOTPRINT},
    {"ncore_wave above m - 2 wavepad", EX2D_ERR_PATCH_TABLE},
    {"core past the frame outputs", EX2D_ERR_PATCH_TABLE},
    {"nspecpad above max_nspecpad", EX2D_ERR_PATCH_TABLE},
    {"negative ivar in the box", EX2D_ERR_IVAR},
    {"NaN ivar in the box", EX2D_ERR_IVAR},
    {"infinite image value in the box", EX2D_ERR_IMAGE},
    {"negative ivar and a NaN image value at one pixel", EX2D_ERR_IVAR},
    {"NaN image value here and negative ivar in a later patch only", EX2D_ERR_IMAGE},
};

static void break_device_rule(size_t rule, ex2d_gpu_case *t)
{
    ex2d_patch_desc *d = &t->f.patches[BAD_PATCH];
    const ex2d_params *p = &t->f.params;
    switch (rule) {
    case 0:
        d->xmax = p->npix_x + 1;
        t->f.patches[LATER_PATCH].spec_first = p->nspec_tab;
        break;
    case 1: d->ymin = -1; break;
    case 2: d->xmin = 0, d->xmax = p->npix_x, d->ymin = 0, d->ymax = p->npix_y; break;
    case 3: d->xmin += 1; break;
    case 4: d->ncore_wave = p->m - 2 * p->wavepad + 1; break;
    case 5: d->out_wave_first = p->nwave_out; break;
    case 6: d->nspecpad = p->max_nspecpad + 1; break;
    case 7: t->f.ivar[pixel_first_in(t, BAD_PATCH)] = -1.0; break;
    case 8: t->f.ivar[pixel_first_in(t, BAD_PATCH)] = NAN; break;
    case 9: t->f.image[pixel_first_in(t, BAD_PATCH)] = INFINITY; break;
    case 10: {
        const size_t pix = pixel_first_in(t, BAD_PATCH);
        t->f.ivar[pix] = -1.0;
        t->f.image[pix] = NAN;
        break;
    }
    default: {
        const size_t later = pixel_first_in(t, LATER_PATCH);
        cr_assert(later != pixel_first_in(t, BAD_PATCH));
        t->f.image[pixel_first_in(t, BAD_PATCH)] = NAN;
        t->f.ivar[later] = -1.0;
        break;
    }
    }
}

Test(ex2d_patch_gpu, device_validation_reports_the_first_bad_patch_and_marks_the_range_not_run)
{
    const ex2d_frame_config cfg = tier_l_config();
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 10);
    const ex2d_params *p = &t.f.params;
    const int np = t.f.npatch;
    cr_assert(np > LATER_PATCH);
    const size_t pixels = (size_t)p->npix_x * p->npix_y;
    ex2d_patch_desc *patches = malloc((size_t)np * sizeof *patches);
    double *image = malloc(pixels * sizeof(double)), *ivar = malloc(pixels * sizeof(double));
    cr_assert(patches && image && ivar);
    memcpy(patches, t.f.patches, (size_t)np * sizeof *patches);
    memcpy(image, t.f.image, pixels * sizeof(double));
    memcpy(ivar, t.f.ivar, pixels * sizeof(double));

    for (size_t r = 0; r < sizeof device_rules / sizeof device_rules[0]; r++) {
        break_device_rule(r, &t);
        ex2d_gc_upload_inputs(&t);
        const int ref = ex2d_ref_validate(p, &t.f.inputs, 0, np, t.ref_ws, t.ws_bytes, t.max_batch, REF_THREADS);
        cr_expect(ref == device_rules[r].code && t.ref_w.check->patch == BAD_PATCH,
                  "%s: the reference found {%d, %d}, expected {%d, %d}", device_rules[r].rule, ref,
                  t.ref_w.check->patch, device_rules[r].code, BAD_PATCH);
        ex2d_gc_poison_all(&t);
        expect_success(ex2d_patches_launch(p, &t.d_in, t.d_spots, 0, np, 10, t.d_ws, t.ws_bytes, &t.d_out,
                                           t.d_witness, t.stream),
                       device_rules[r].rule);
        ex2d_gc_download(&t);
        cr_expect(ex2d_check_validation_word(&t, device_rules[r].code, BAD_PATCH) == 0, "%s (above)",
                  device_rules[r].rule);
        cr_expect(ex2d_check_untouched(&t, 0, np) == 0,
                  "%s: a stage wrote after validation failed, or info is not EX2D_PATCH_NOT_RUN (above)",
                  device_rules[r].rule);
        cr_expect(ex2d_check_pipeline_witness(&t, 0, np, 10, 0) == 0, "%s: witness (above)", device_rules[r].rule);
        if (r == 0) { /* a range inside the frame: its patches, and only those, read EX2D_PATCH_NOT_RUN */
            const int first = BAD_PATCH - 2, count = np - first;
            ex2d_gc_poison_all(&t);
            poison_check_word(&t); /* the full-range call left the same verdict there */
            expect_success(ex2d_patches_launch(p, &t.d_in, t.d_spots, first, count, 10, t.d_ws, t.ws_bytes, &t.d_out,
                                               t.d_witness, t.stream),
                           "the same rule over a range inside the frame");
            ex2d_gc_download(&t);
            cr_expect(ex2d_check_validation_word(&t, device_rules[r].code, BAD_PATCH) == 0, "range (above)");
            cr_expect(ex2d_check_untouched(&t, first, count) == 0, "range [%d, %d): info or outputs (above)", first,
                      np);
            cr_expect(ex2d_check_pipeline_witness(&t, first, count, 10, 0) == 0, "range [%d, %d): witness (above)",
                      first, np);
        }
        memcpy(t.f.patches, patches, (size_t)np * sizeof *patches);
        memcpy(t.f.image, image, pixels * sizeof(double));
        memcpy(t.f.ivar, ivar, pixels * sizeof(double));
    }
    ex2d_gc_upload_inputs(&t);
    free(patches);
    free(image);
    free(ivar);
    ex2d_gc_close(&t);
}

/* ------------------------------------------------------------------ a real DESI PSF ($GW_DATA_DIR/desi) */

TestSuite(ex2d_patch_gpu_data, .init = gw_gpu_test_init, .fini = ex2d_gc_fini);

Test(ex2d_patch_gpu_data, k1_spots_of_the_desi_test_psf_match_specters_within_1e_12)
{
    ex2d_golden g;
    ex2d_golden_load(&g);
    const size_t n = (size_t)g.nspot, spot = (size_t)(2 * g.psf.hsizex + 1) * (2 * g.psf.hsizey + 1);
    const size_t ncoef = (size_t)(g.psf.gx + 1) * (g.psf.gy + 1);
    double *d[6], *d_spots;
    const double *host[6] = {g.sigx, g.sigy, g.dx, g.dy, g.c, g.tail};
    const size_t count[6] = {n, n, n, n, n * ncoef, n * EX2D_TAIL_TERMS};
    for (int i = 0; i < 6; i++) {
        GW_CUDA(cudaMalloc((void **)&d[i], count[i] * sizeof(double)));
        GW_CUDA(cudaMemcpy(d[i], host[i], count[i] * sizeof(double), cudaMemcpyHostToDevice));
    }
    GW_CUDA(cudaMalloc((void **)&d_spots, n * spot * sizeof(double)));
    GW_CUDA(cudaMemset(d_spots, 0xFF, n * spot * sizeof(double)));
    const ex2d_inputs in = {.psf_sigx = d[0], .psf_sigy = d[1], .psf_dx = d[2], .psf_dy = d[3], .psf_c = d[4],
                            .psf_tail = d[5]};
    gw_witness *d_w = gw_witness_new();
    expect_success(ex2d_spots_launch(&g.params, &in, 0, (int)n, d_spots, d_w, 0), "ex2d_spots_launch");
    GW_CUDA(cudaDeviceSynchronize());
    double *spots = malloc(n * spot * sizeof(double));
    cr_assert(spots);
    GW_CUDA(cudaMemcpy(spots, d_spots, n * spot * sizeof(double), cudaMemcpyDeviceToHost));
    gw_assert_witness(d_w, 1, n);
    double worst;
    ex2d_golden_check_spots(&g, spots, "ex2d_spots_launch", &worst);
    cr_log_info("GPU K1: %zu spots of the DESI test PSF, largest |difference| from specter %.3g", n, worst);
    free(spots);
    for (int i = 0; i < 6; i++) cudaFree(d[i]);
    cudaFree(d_spots);
    cudaFree(d_w);
    ex2d_golden_free(&g);
}

Test(ex2d_patch_gpu_data, a_frame_through_the_desi_test_psf_matches_the_reference_at_every_stage)
{
    ex2d_golden g; /* only its PSF */
    ex2d_golden_load(&g);
    ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_L);
    ex2d_frame_config_use_psf(&cfg, &g.psf);
    /* fibres 0..4, 500 bins of 0.8 A from 6000 A (10 patches), noise: the reference's round-trip test */
    cfg.fibre_first = 0, cfg.nfibre = 5, cfg.wave_min = 6000.0, cfg.wave_step = 0.8;
    cfg.nwave_camera = 500, cfg.wave_first = 0, cfg.nwave = 500, cfg.crop_to_boxes = 1;
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 4);
    cr_assert(t.d_in.psf_tail != NULL, "the real PSF's tail was not uploaded");
    expect_success(ex2d_spots_launch(&t.f.params, &t.d_in, 0, (int)t.entries, t.d_spots_k1,
                                     t.d_witness + EX2D_W_SPOTS, t.stream),
                   "ex2d_spots_launch");
    ex2d_gc_download(&t);
    cr_expect(ex2d_check_spots(&t, 0, t.entries) == 0, "K1 spots of the real PSF differ from the reference (above)");
    reference_pipeline(&t, 0, t.f.npatch);
    run_pipeline(&t, 0, t.f.npatch, 4, t.d_witness);
    expect_pipeline_matches(&t, 0, t.f.npatch, 4);
    ex2d_gc_close(&t);
    ex2d_golden_free(&g);
}
