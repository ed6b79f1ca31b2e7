/* SPDX-License-Identifier: MIT
 * The usage example of kernels/ex2d_patch/ex2d_patch.h, compiled and run on tier L (one subbundle, 47
 * patches; emulated, 47 patches of tier S's single fibre): the lines between example-begin and example-end are the header's, verbatim, with the setup its
 * comments describe around them (support/ex2d_gpu_case.c builds and uploads the frame). The example passes NULL
 * for the witness, so the call is repeated with witness records to prove that it ran on the GPU.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>

#include "ex2d_compare.h"
#include "ex2d_gpu_case.h"
#include "ex2d_patch.h"
#include "ex2d_patch_ref.h"
#include "gw_gpu_test.h"

TestSuite(ex2d_patch_example, .init = gw_gpu_test_init, .fini = ex2d_gc_fini);

/* What the header promises after synchronising: the check word {0, -1}, every patch OK, every frame
 * element written (the cores tile the frame). */
static void expect_extraction(ex2d_gpu_case *t, const char *when)
{
    ex2d_gc_download(t);
    const ex2d_check_word *w = t->got_w.check;
    cr_expect(w->code == 0 && w->patch == -1, "%s: check word {%d, %d}, the header says {0, -1}", when, w->code,
              w->patch);
    for (int i = 0; i < t->f.npatch; i++)
        cr_expect(t->got_out.info[i].status == EX2D_PATCH_OK, "%s: patch %d has status %d (%s)", when, i,
                  t->got_out.info[i].status, ex2d_patch_status_str(t->got_out.info[i].status));
    ex2d_cmp written;
    ex2d_cmp_init(&written, "frame outputs [array * bins + bin]", 0);
    const double *arrays[] = {t->got_out.flux, t->got_out.ivar, t->got_out.chi2pix, t->got_out.pixmask_fraction};
    for (size_t a = 0; a < 4; a++)
        for (size_t i = 0; i < t->bins; i++) ex2d_cmp_written(&written, a * t->bins + i, arrays[a][i]);
    for (size_t i = 0; i < t->bins * (size_t)t->ndiags; i++)
        ex2d_cmp_written(&written, 4 * t->bins + i, t->got_out.rdiags[i]);
    cr_expect(ex2d_cmp_report(&written) == 0, "%s: frame elements not written (above)", when);
}

static void expect_witness(const gw_witness *d_record, uint64_t launches, uint64_t items, const char *stage)
{
    char msg[1024];
    cr_expect(gw_check_witness(d_record, launches, items, msg, sizeof msg) == 0, "%s witness: %s", stage, msg);
}

Test(ex2d_patch_example, the_header_example_extracts_one_subbundle)
{
    gw_skip_under_sanitizer("tier L (47 patches)");
    ex2d_frame_config cfg = ex2d_gc_tier_config(EX2D_TIER_L);
    if (GW_GPU_EMULATED) { /* 47 patches of tier S's single fibre: the same calls at a 200th of the cost */
        cfg = ex2d_gc_tier_config(EX2D_TIER_S);
        cfg.nwave = 47 * cfg.nwavestep, cfg.image_kind = EX2D_IMAGE_FRAME;
    }
    ex2d_gpu_case t;
    ex2d_gc_open(&t, &cfg, 47);
    cr_assert(t.f.npatch == 47, "the frame has %d patches; the example assumes one subbundle of 47", t.f.npatch);
    const ex2d_params p = t.f.params;
    const ex2d_inputs d_in = t.d_in;
    double *d_spots = t.d_spots_k1;
    void *d_ws = t.d_ws; /* ex2d_workspace_bytes(&p, 47) bytes */
    const ex2d_outputs d_out = t.d_out;
    cudaStream_t stream = t.stream;

    // example-begin
    // p, the host PSF table and patches come from reference/ex2d_patch/ex2d_synth.h (or your own PSF evaluation);
    // d_in holds the same arrays uploaded (device pointers), d_out the frame outputs
    size_t ws_bytes = ex2d_workspace_bytes(&p, 47);      // 47 patches per batch: one subbundle
    // cudaMalloc(&d_ws, ws_bytes) once, outside any loop; d_spots: nspec_tab*nwave_tab*ny*nx doubles
    cudaError_t rc = ex2d_spots_launch(&p, &d_in, 0, p.nspec_tab * p.nwave_tab, d_spots, NULL, stream);
    if (rc == cudaSuccess)
        rc = ex2d_patches_launch(&p, &d_in, d_spots, 0, d_in.npatch, 47, d_ws, ws_bytes, &d_out, NULL, stream);
    // rc == cudaSuccess; after cudaStreamSynchronize the frame outputs hold the extraction, and the
    // check word at the start of the workspace is {0, -1}; info[i].status is EX2D_PATCH_OK per patch
    // example-end

    cr_assert(ws_bytes == t.ws_bytes, "the example's workspace size differs from the one allocated");
    cr_expect(rc == cudaSuccess, "the example returned %s (%s)", cudaGetErrorName(rc), cudaGetErrorString(rc));
    expect_extraction(&t, "the example as written");

    /* The same calls with witness records, everything poisoned again. */
    ex2d_gc_poison_all(&t);
    gw_witness *d_spots_witness = gw_witness_new();
    rc = ex2d_spots_launch(&p, &d_in, 0, p.nspec_tab * p.nwave_tab, d_spots, d_spots_witness, stream);
    if (rc == cudaSuccess)
        rc = ex2d_patches_launch(&p, &d_in, d_spots, 0, d_in.npatch, 47, d_ws, ws_bytes, &d_out, t.d_witness, stream);
    cr_expect(rc == cudaSuccess, "the witnessed repeat returned %s", cudaGetErrorName(rc));
    expect_extraction(&t, "the witnessed repeat");

    uint64_t pairs = 0, blocks = 0, bins = 0;
    for (int i = 0; i < t.f.npatch; i++) {
        const ex2d_patch_desc *d = &t.f.patches[i];
        const int64_t n = ex2d_ref_count_pairs(&t.f.params, &t.f.inputs, i);
        cr_assert(n >= 0);
        pairs += (uint64_t)n;
        blocks += (uint64_t)d->ncore;
        bins += (uint64_t)d->ncore * (uint64_t)d->ncore_wave;
    }
    expect_witness(d_spots_witness, 1, t.entries, "K1");
    expect_witness(t.d_witness + EX2D_W_VALIDATE, 1, (uint64_t)t.f.npatch, "validation");
    expect_witness(t.d_witness + EX2D_W_SPOTS, 0, 0, "the pipeline's (unused) K1 record");
    expect_witness(t.d_witness + EX2D_W_NORMAL, 1, pairs, "K3");
    expect_witness(t.d_witness + EX2D_W_CHOLESKY, 1, (uint64_t)t.f.npatch, "K4");
    expect_witness(t.d_witness + EX2D_W_CBLOCKS, 1, blocks, "K5");
    expect_witness(t.d_witness + EX2D_W_JACOBI, 1, blocks, "K6");
    expect_witness(t.d_witness + EX2D_W_OUTPUTS, 1, bins, "K7");
    cudaFree(d_spots_witness);
    ex2d_gc_close(&t);
}
