/* SPDX-License-Identifier: MIT
 * Planted faults for ex2d_patch (test builds only; never part of kernels/). A canary executable is linked with
 * --wrap=ex2d_patches_launch (gw_wrap_launcher, tests/gw_tests.cmake), so every pipeline call its test makes
 * lands in __wrap_ex2d_patches_launch here, and __real_ex2d_patches_launch is the ex2d_patch library's. One
 * fault per build, chosen by a compile definition; each must be caught by the guard named in
 * tests/ex2d_patch/CMakeLists.txt:
 *
 *   EX2D_PATCH_CANARY_CPU_FALLBACK  copies the inputs, workspace and outputs back, runs ex2d_ref_patches on the
 *                                   host, uploads the results: right answer, no GPU code -> "no GPU code ran"
 *   EX2D_PATCH_CANARY_NO_LAUNCH     returns cudaSuccess and does nothing -> poison and witness
 *   EX2D_PATCH_CANARY_PARTIAL_GRID  runs the real pipeline on the first half of the patches, as a grid sized
 *                                   off by half would -> witness "partial execution"
 *   EX2D_PATCH_CANARY_STALE_OUTPUT  first call real, later calls return cudaSuccess without launching; the test
 *                                   poisons before every call -> "poison"
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "ex2d_patch.h"
#include "ex2d_patch_ref.h"

extern "C" cudaError_t __real_ex2d_patches_launch(const ex2d_params *p, const ex2d_inputs *d_in,
                                                  const double *d_spots, int patch_first, int npatch, int max_batch,
                                                  void *d_ws, size_t ws_bytes, const ex2d_outputs *d_out,
                                                  gw_witness *d_witness, cudaStream_t stream);
extern "C" cudaError_t __wrap_ex2d_patches_launch(const ex2d_params *p, const ex2d_inputs *d_in,
                                                  const double *d_spots, int patch_first, int npatch, int max_batch,
                                                  void *d_ws, size_t ws_bytes, const ex2d_outputs *d_out,
                                                  gw_witness *d_witness, cudaStream_t stream);

#if defined(EX2D_PATCH_CANARY_CPU_FALLBACK) || defined(EX2D_PATCH_CANARY_PARTIAL_GRID)
/* The arguments the real launcher accepts (its rejections are passed through unchanged). */
static bool valid_call(const ex2d_params *p, const ex2d_inputs *d_in, const double *d_spots, int patch_first,
                       int npatch, int max_batch, void *d_ws, size_t ws_bytes, const ex2d_outputs *d_out)
{
    return ex2d_check_args(p, d_in, patch_first, npatch, max_batch, d_ws, ws_bytes) == EX2D_OK && npatch >= 1 &&
           max_batch >= 1 && d_spots && d_out && d_out->flux && d_out->ivar && d_out->rdiags && d_out->chi2pix &&
           d_out->pixmask_fraction && d_out->info;
}
#endif

#if defined(EX2D_PATCH_CANARY_CPU_FALLBACK)

/* A host copy of bytes of device memory; NULL (and *ok = 0) on failure. */
static void *download(const void *d, size_t bytes, int *ok)
{
    void *h = malloc(bytes);
    if (!h || cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) *ok = 0;
    return h;
}

static void upload(void *d, const void *h, size_t bytes, int *ok)
{
    if (*ok && cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) != cudaSuccess) *ok = 0;
}

/* The "GPU function that computes on the CPU" of docs/witness.md: correct bytes, no kernel, empty witness. */
extern "C" cudaError_t __wrap_ex2d_patches_launch(const ex2d_params *p, const ex2d_inputs *d_in,
                                                  const double *d_spots, int patch_first, int npatch, int max_batch,
                                                  void *d_ws, size_t ws_bytes, const ex2d_outputs *d_out,
                                                  gw_witness *d_witness, cudaStream_t stream)
{
    if (!valid_call(p, d_in, d_spots, patch_first, npatch, max_batch, d_ws, ws_bytes, d_out))
        return __real_ex2d_patches_launch(p, d_in, d_spots, patch_first, npatch, max_batch, d_ws, ws_bytes, d_out,
                                   d_witness, stream);
    if (cudaStreamSynchronize(stream) != cudaSuccess) return cudaErrorUnknown;
    const size_t pixels = (size_t)p->npix_x * p->npix_y, entries = (size_t)p->nspec_tab * p->nwave_tab;
    const size_t coef = (size_t)(p->gx + 1) * (p->gy + 1), spot = (size_t)(2 * p->hsizex + 1) * (2 * p->hsizey + 1);
    const size_t bins = (size_t)p->nspec_out * p->nwave_out, ndiags = (size_t)(2 * p->ndiag + 1);
    const size_t ws_used = ex2d_workspace_bytes(p, max_batch), info = (size_t)d_in->npatch * sizeof(ex2d_patch_info);
    int ok = 1;
    ex2d_inputs in = *d_in;
    in.image = (const double *)download(d_in->image, pixels * 8, &ok);
    in.ivar = (const double *)download(d_in->ivar, pixels * 8, &ok);
    in.psf_sigx = (const double *)download(d_in->psf_sigx, entries * 8, &ok);
    in.psf_sigy = (const double *)download(d_in->psf_sigy, entries * 8, &ok);
    in.psf_dx = (const double *)download(d_in->psf_dx, entries * 8, &ok);
    in.psf_dy = (const double *)download(d_in->psf_dy, entries * 8, &ok);
    in.psf_c = (const double *)download(d_in->psf_c, entries * coef * 8, &ok);
    in.psf_xc = (const int32_t *)download(d_in->psf_xc, entries * 4, &ok);
    in.psf_yc = (const int32_t *)download(d_in->psf_yc, entries * 4, &ok);
    in.patches = (const ex2d_patch_desc *)download(d_in->patches, (size_t)d_in->npatch * sizeof(ex2d_patch_desc), &ok);
    double *spots = (double *)download(d_spots, entries * spot * 8, &ok);
    /* the host workspace must be 256-B aligned: copy into one from ex2d_ref_workspace_alloc */
    void *ws = NULL;
    size_t ws_host = 0;
    if (ex2d_ref_workspace_alloc(p, max_batch, &ws, &ws_host) != EX2D_OK) ok = 0;
    if (ok && cudaMemcpy(ws, d_ws, ws_used, cudaMemcpyDeviceToHost) != cudaSuccess) ok = 0;
    /* the outputs as they are, so that whatever the range does not cover keeps its bytes */
    ex2d_outputs out;
    out.flux = (double *)download(d_out->flux, bins * 8, &ok);
    out.ivar = (double *)download(d_out->ivar, bins * 8, &ok);
    out.rdiags = (double *)download(d_out->rdiags, bins * ndiags * 8, &ok);
    out.chi2pix = (double *)download(d_out->chi2pix, bins * 8, &ok);
    out.pixmask_fraction = (double *)download(d_out->pixmask_fraction, bins * 8, &ok);
    out.info = (ex2d_patch_info *)download(d_out->info, info, &ok);

    /* a validation failure is a result (the check word), not an error of the call */
    if (ok) {
        const int rc = ex2d_ref_patches(p, &in, spots, patch_first, npatch, max_batch, ws, ws_used, &out, 0);
        ok = rc == EX2D_OK || rc >= EX2D_ERR_PATCH_TABLE;
    }
    upload(d_ws, ws, ws_used, &ok);
    upload(d_out->flux, out.flux, bins * 8, &ok);
    upload(d_out->ivar, out.ivar, bins * 8, &ok);
    upload(d_out->rdiags, out.rdiags, bins * ndiags * 8, &ok);
    upload(d_out->chi2pix, out.chi2pix, bins * 8, &ok);
    upload(d_out->pixmask_fraction, out.pixmask_fraction, bins * 8, &ok);
    upload(d_out->info, out.info, info, &ok);

    void *host[] = {(void *)in.image, (void *)in.ivar, (void *)in.psf_sigx, (void *)in.psf_sigy, (void *)in.psf_dx,
                    (void *)in.psf_dy, (void *)in.psf_c, (void *)in.psf_xc, (void *)in.psf_yc, (void *)in.patches,
                    spots, ws, out.flux, out.ivar, out.rdiags, out.chi2pix, out.pixmask_fraction, out.info};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) free(host[i]);
    return ok ? cudaSuccess : cudaErrorUnknown;
}

#elif defined(EX2D_PATCH_CANARY_NO_LAUNCH)

extern "C" cudaError_t __wrap_ex2d_patches_launch(const ex2d_params *, const ex2d_inputs *, const double *, int, int,
                                                  int, void *, size_t, const ex2d_outputs *, gw_witness *,
                                                  cudaStream_t)
{
    return cudaSuccess;
}

#elif defined(EX2D_PATCH_CANARY_PARTIAL_GRID)

extern "C" cudaError_t __wrap_ex2d_patches_launch(const ex2d_params *p, const ex2d_inputs *d_in,
                                                  const double *d_spots, int patch_first, int npatch, int max_batch,
                                                  void *d_ws, size_t ws_bytes, const ex2d_outputs *d_out,
                                                  gw_witness *d_witness, cudaStream_t stream)
{
    /* the first half of the patches: the other half's cores are never written */
    if (valid_call(p, d_in, d_spots, patch_first, npatch, max_batch, d_ws, ws_bytes, d_out) && npatch >= 2)
        npatch /= 2;
    return __real_ex2d_patches_launch(p, d_in, d_spots, patch_first, npatch, max_batch, d_ws, ws_bytes, d_out, d_witness,
                               stream);
}

#elif defined(EX2D_PATCH_CANARY_STALE_OUTPUT)

extern "C" cudaError_t __wrap_ex2d_patches_launch(const ex2d_params *p, const ex2d_inputs *d_in,
                                                  const double *d_spots, int patch_first, int npatch, int max_batch,
                                                  void *d_ws, size_t ws_bytes, const ex2d_outputs *d_out,
                                                  gw_witness *d_witness, cudaStream_t stream)
{
    static int calls; /* per test process: Criterion runs each test in its own */
    if (calls++ == 0)
        return __real_ex2d_patches_launch(p, d_in, d_spots, patch_first, npatch, max_batch, d_ws, ws_bytes, d_out,
                                   d_witness, stream);
    return cudaSuccess;
}

#else
#error "define one of EX2D_PATCH_CANARY_CPU_FALLBACK, _NO_LAUNCH, _PARTIAL_GRID, _STALE_OUTPUT"
#endif
