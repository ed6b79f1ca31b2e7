/* SPDX-License-Identifier: MIT
 * The emu tier's ThreadSanitizer runs (docs/emu.md, "Races and memory errors"): a kernel's device code, built
 * with -fsanitize=thread (its <k>_emu_tsan twin), runs on the emulated device over inputs of the kind its GPU
 * suite uses, and its outputs must equal the CPU reference's byte for byte. Every fiber is a thread to
 * ThreadSanitizer, ordered only by barriers and warp rendezvous (atomics are relaxed, as on a GPU: they do not
 * race with one another, and order nothing), so two accesses of one block with nothing between them are a
 * race: its report ends the process with exit 66 (TSAN_OPTIONS, CTest).
 * A plain program rather than a Criterion test: Criterion cannot start under ThreadSanitizer (its inheritable
 * arena fails, Snaipe/Criterion#274).
 *
 *   emu_tsan_run grid_d4|grid_objects|focus_stack   0: equal to the reference; 1: a difference (printed)
 *   emu_tsan_run ex2d_patch                          0: within the reference's tolerances (docs/ex2d_patch.md)
 *   emu_tsan_run missing_sync                        the planted race of emu_canary_kernels.cu: must be reported
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "emu_canary_kernels.h"
#include "ex2d_patch.h"
#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"
#include "focus_stack.h"
#include "focus_stack_ref.h"
#include "focus_stack_synth.h"
#include "grid_d4.h"
#include "grid_d4_batch.h"
#include "grid_d4_ref.h"
#include "grid_objects.h"
#include "grid_objects_batch.h"
#include "grid_objects_ref.h"

static void need(int ok, const char *what)
{
    if (ok) return;
    fprintf(stderr, "emu_tsan_run: %s\n", what);
    exit(2);
}

static void cuda(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return;
    fprintf(stderr, "emu_tsan_run: %s: %s\n", what, cudaGetErrorString(e));
    exit(2);
}

static void *upload(const void *host, size_t bytes)
{
    void *d = NULL;
    cuda(cudaMalloc(&d, bytes ? bytes : 1), "cudaMalloc");
    if (host && bytes) cuda(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice), "upload");
    return d;
}

static void download(void *host, const void *d, size_t bytes)
{
    if (bytes) cuda(cudaMemcpy(host, d, bytes, cudaMemcpyDeviceToHost), "download");
}

static int same(const void *got, const void *want, size_t bytes, const char *kernel, const char *what)
{
    if (!memcmp(got, want, bytes)) return 0;
    fprintf(stderr, "emu_tsan_run %s: %s differ from the reference\n", kernel, what);
    return 1;
}

/* ARC-shaped grids in gaps with an op each: every op, both grid-size paths of the kernel. */
static int run_grid_d4(void)
{
    grid_d4_batch b;
    need(grid_d4_batch_arc_sample(&b, 600, GRID_D4_GAPS, 0x75A1u) == 0, "grid_d4_batch_arc_sample failed");
    need(grid_d4_batch_set_ops_random(&b, 0x75A2u) == 0, "grid_d4_batch_set_ops_random failed");
    const grid_d4_params p = grid_d4_batch_params(&b);
    const size_t n = b.n, bytes = (size_t)b.buf_bytes;
    uint8_t *want = malloc(bytes), *got = malloc(bytes);
    uint16_t *dims = malloc(4 * n * sizeof *dims); /* want h, want w, got h, got w */
    need(want && got && dims, "out of memory");
    memset(want, 0xA5, bytes); /* the gaps between grids stay as they were, on both sides */
    need(grid_d4_ref(&p, b.in, want, b.offset, b.height, b.width, dims, dims + n, b.ops) == GRID_D4_OK,
         "grid_d4_ref failed");
    memset(got, 0xA5, bytes);
    uint8_t *d_in = upload(b.in, bytes), *d_out = upload(got, bytes), *d_ops = upload(b.ops, n);
    uint64_t *d_offset = upload(b.offset, n * sizeof *b.offset);
    uint16_t *d_h = upload(b.height, n * 2), *d_w = upload(b.width, n * 2);
    uint16_t *d_oh = upload(NULL, n * 2), *d_ow = upload(NULL, n * 2);
    grid_d4_status_record *d_status = upload(NULL, sizeof *d_status);
    gw_witness *d_witness = upload(NULL, sizeof *d_witness);
    cuda(cudaMemset(d_witness, 0, sizeof *d_witness), "cudaMemset");
    cuda(grid_d4_launch(&p, d_in, d_out, d_offset, d_h, d_w, d_oh, d_ow, d_ops, d_status, d_witness, 0), "grid_d4_launch");
    download(got, d_out, bytes);
    download(dims + 2 * n, d_oh, n * 2);
    download(dims + 3 * n, d_ow, n * 2);
    const int rc = same(got, want, bytes, "grid_d4", "output cells") |
                   same(dims + 2 * n, dims, 2 * n * sizeof *dims, "grid_d4", "output shapes");
    void *d_all[] = {d_in, d_out, d_ops, d_offset, d_h, d_w, d_oh, d_ow, d_status, d_witness};
    for (size_t i = 0; i < sizeof d_all / sizeof d_all[0]; i++) cudaFree(d_all[i]);
    free(want), free(got), free(dims);
    grid_d4_batch_free(&b);
    return rc;
}

/* One batch: a grid of each path (at most 1024 cells in shared memory, more labelled in place in global
 * memory, where the union-find's atomics meet), 3 colours so that objects touch. */
static int run_grid_objects(void)
{
    static const uint16_t h[] = {30, 64, 1, 33, 7, 40, 255};
    static const uint16_t w[] = {30, 64, 255, 40, 5, 26, 3};
    const size_t n = sizeof h / sizeof h[0];
    grid_d4_batch b;
    need(grid_d4_batch_make(&b, n, h, w, GRID_D4_GAPS, 0x0B1u, "emu_tsan_run shapes") == 0,
         "grid_d4_batch_make failed");
    grid_d4_batch_fill_random(&b, 2, 0x0B2u);
    need(grid_d4_batch_set_ops_random(&b, 0x0B3u) == 0, "grid_d4_batch_set_ops_random failed");
    const grid_objects_params p = grid_objects_batch_params(&b, GRID_OBJECTS_TIE_ARC_DSL);
    grid_objects_result want, got;
    need(grid_objects_result_init(&want, n, b.buf_bytes) == 0 && grid_objects_result_init(&got, n, b.buf_bytes) == 0,
         "out of memory");
    need(grid_objects_batch_ref(&b, GRID_OBJECTS_TIE_ARC_DSL, 0, &want) == GRID_OBJECTS_OK, "grid_objects_ref failed");
    grid_objects_result_poison(&got, 0x5Au); /* what grid_objects_result_compare expects outside the grids */
    const size_t entries = (size_t)got.out_entries;
    uint8_t *d_in = upload(b.in, (size_t)b.buf_bytes), *d_variants = upload(b.ops, n);
    uint64_t *d_offset = upload(b.offset, n * sizeof *b.offset);
    uint16_t *d_h = upload(b.height, n * 2), *d_w = upload(b.width, n * 2);
    uint16_t *d_labels = upload(got.labels, entries * sizeof *got.labels);
    grid_objects_object *d_objects = upload(got.objects, entries * sizeof *got.objects);
    uint32_t *d_n_objects = upload(got.n_objects, n * sizeof *got.n_objects);
    int16_t *d_bg = upload(got.bg, n * sizeof *got.bg);
    grid_objects_status_record *d_status = upload(NULL, sizeof *d_status);
    gw_witness *d_witness = upload(NULL, sizeof *d_witness);
    cuda(cudaMemset(d_witness, 0, sizeof *d_witness), "cudaMemset");
    cuda(grid_objects_launch(&p, d_in, d_offset, d_h, d_w, d_variants, d_labels, d_objects, d_n_objects, d_bg,
                             d_status, d_witness, 0),
         "grid_objects_launch");
    download(got.labels, d_labels, entries * sizeof *got.labels);
    download(got.objects, d_objects, entries * sizeof *got.objects);
    download(got.n_objects, d_n_objects, n * sizeof *got.n_objects);
    download(got.bg, d_bg, n * sizeof *got.bg);
    char msg[512] = "";
    const int rc = grid_objects_result_compare(&got, &want, &b, msg, sizeof msg) != 0;
    if (rc) fprintf(stderr, "emu_tsan_run grid_objects: differs from the reference: %s\n", msg);
    void *d_all[] = {d_in, d_variants, d_offset, d_h, d_w, d_labels, d_objects, d_n_objects, d_bg, d_status, d_witness};
    for (size_t i = 0; i < sizeof d_all / sizeof d_all[0]; i++) cudaFree(d_all[i]);
    grid_objects_result_free(&want);
    grid_objects_result_free(&got);
    grid_d4_batch_free(&b);
    return rc;
}

/* Two stacks with tiles cut at both edges, through the fast kernel (the defaults, focus given) and the
 * general one (LAP k=5, REFLECT101, window 3). */
static int run_focus_stack(void)
{
    int rc = 0;
    for (int pass = 0; pass < 2; pass++) {
        focus_stack_params p = {.n = 2, .z = 5, .y = 61, .x = 83};
        if (pass) p.ksize = 5, p.measure = FOCUS_STACK_LAP_ABS, p.border = FOCUS_STACK_BORDER_REFLECT101, p.window = 3;
        else p.ksize = 3;
        const size_t plane = (size_t)p.y * p.x, images = (size_t)p.n * plane, voxels = images * (size_t)p.z;
        uint16_t *in = malloc(voxels * 2), *ff = malloc(2 * images * 2);
        uint8_t *idx = malloc(2 * images);
        float *best = malloc(2 * images * sizeof *best), *focus = malloc(2 * voxels * sizeof *focus);
        need(in && ff && idx && best && focus, "out of memory");
        focus_stack_random_u16(in, voxels, 0xF5u + (uint64_t)pass, 65535);
        need(focus_stack_ref(&p, in, idx, ff, best, focus, 1) == FOCUS_STACK_OK, "focus_stack_ref failed");
        uint16_t *d_in = upload(in, voxels * 2), *d_ff = upload(NULL, images * 2);
        uint8_t *d_idx = upload(NULL, images);
        float *d_best = upload(NULL, images * sizeof *best), *d_focus = upload(NULL, voxels * sizeof *focus);
        gw_witness *d_witness = upload(NULL, sizeof *d_witness);
        cuda(cudaMemset(d_witness, 0, sizeof *d_witness), "cudaMemset");
        cuda(focus_stack_launch(&p, d_in, d_idx, d_ff, d_best, d_focus, d_witness, 0), "focus_stack_launch");
        download(idx + images, d_idx, images);
        download(ff + images, d_ff, images * 2);
        download(best + images, d_best, images * sizeof *best);
        download(focus + voxels, d_focus, voxels * sizeof *focus);
        rc |= same(idx + images, idx, images, "focus_stack", "idx") | same(ff + images, ff, images * 2, "focus_stack", "ff") |
              same(best + images, best, images * sizeof *best, "focus_stack", "best") |
              same(focus + voxels, focus, voxels * sizeof *focus, "focus_stack", "focus");
        void *d_all[] = {d_in, d_ff, d_idx, d_best, d_focus, d_witness};
        for (size_t i = 0; i < sizeof d_all / sizeof d_all[0]; i++) cudaFree(d_all[i]);
        free(in), free(ff), free(idx), free(best), free(focus);
    }
    return rc;
}

/* Tier M (one subbundle, 7 x 74 unknowns): K1's spots against the reference's within 1e-12 of the largest,
 * then K3-K7 on the reference's spots, every patch ok and every core flux within a pull of 1e-9 of the
 * reference's (docs/ex2d_patch.md, "Numerics and tolerances"). */
static int run_ex2d_patch(void)
{
    ex2d_frame_config cfg;
    need(ex2d_frame_config_tier(&cfg, EX2D_TIER_M) == 0, "ex2d_frame_config_tier failed");
    ex2d_frame f;
    need(ex2d_frame_make(&cfg, &f) == 0, "ex2d_frame_make failed");
    const ex2d_params *p = &f.params;
    const int np = f.npatch;
    const size_t entries = (size_t)p->nspec_tab * p->nwave_tab, pixels = (size_t)p->npix_x * p->npix_y;
    const size_t spot = (size_t)(2 * p->hsizex + 1) * (2 * p->hsizey + 1), coef = (size_t)(p->gx + 1) * (p->gy + 1);
    const size_t bins = (size_t)p->nspec_out * p->nwave_out, diags = (size_t)(2 * p->ndiag + 1);
    void *ws = NULL;
    size_t ws_bytes = 0;
    ex2d_outputs want, got;
    need(ex2d_ref_workspace_alloc(p, np, &ws, &ws_bytes) == 0 && ex2d_ref_outputs_alloc(p, np, &want) == 0 &&
             ex2d_ref_outputs_alloc(p, np, &got) == 0, "out of memory");
    need(ex2d_ref_patches(p, &f.inputs, f.spots, 0, np, np, ws, ws_bytes, &want, 1) == 0, "ex2d_ref_patches failed");
    ex2d_inputs d_in = {.image = upload(f.image, pixels * 8), .ivar = upload(f.ivar, pixels * 8),
                        .psf_sigx = upload(f.sigx, entries * 8), .psf_sigy = upload(f.sigy, entries * 8),
                        .psf_dx = upload(f.dx, entries * 8), .psf_dy = upload(f.dy, entries * 8),
                        .psf_c = upload(f.psf_c, entries * coef * 8), .psf_xc = upload(f.xc, entries * 4),
                        .psf_yc = upload(f.yc, entries * 4),
                        .patches = upload(f.patches, (size_t)np * sizeof *f.patches), .npatch = np};
    double *d_spots = upload(f.spots, entries * spot * 8), *d_spots_k1 = upload(NULL, entries * spot * 8);
    void *d_ws = upload(NULL, ws_bytes);
    ex2d_outputs d_out = {.flux = upload(NULL, bins * 8), .ivar = upload(NULL, bins * 8),
                          .rdiags = upload(NULL, bins * diags * 8), .chi2pix = upload(NULL, bins * 8),
                          .pixmask_fraction = upload(NULL, bins * 8),
                          .info = upload(NULL, (size_t)np * sizeof *got.info)};
    gw_witness *d_witness = upload(NULL, EX2D_WITNESS_SLOTS * sizeof *d_witness); /* a record per stage */
    cuda(cudaMemset(d_witness, 0, EX2D_WITNESS_SLOTS * sizeof *d_witness), "cudaMemset");
    cuda(ex2d_spots_launch(p, &d_in, 0, (int)entries, d_spots_k1, d_witness + EX2D_W_SPOTS, 0), "ex2d_spots_launch");
    cuda(ex2d_patches_launch(p, &d_in, d_spots, 0, np, np, d_ws, ws_bytes, &d_out, d_witness, 0),
         "ex2d_patches_launch");
    double *k1 = malloc(entries * spot * 8);
    need(k1 != NULL, "out of memory");
    download(k1, d_spots_k1, entries * spot * 8);
    download(got.flux, d_out.flux, bins * 8);
    download(got.info, d_out.info, (size_t)np * sizeof *got.info);
    /* NaN-safe maxima: device memory starts as NaN here, so a value never written must count against us */
    double largest = 0.0, worst_spot = 0.0, worst_pull = 0.0;
    for (size_t i = 0; i < entries * spot; i++) largest = fmax(largest, fabs(f.spots[i]));
    for (size_t i = 0; i < entries * spot; i++) {
        const double d = fabs(k1[i] - f.spots[i]);
        if (!(d <= worst_spot)) worst_spot = d;
    }
    int rc = 0;
    for (int i = 0; i < np; i++)
        if (got.info[i].status != EX2D_PATCH_OK) rc = 1, fprintf(stderr, "emu_tsan_run ex2d_patch: patch %d failed\n", i);
    for (size_t i = 0; i < bins; i++)
        if (want.ivar[i] > 0.0) {
            const double pull = fabs(got.flux[i] - want.flux[i]) * sqrt(want.ivar[i]);
            if (!(pull <= worst_pull)) worst_pull = pull;
        }
    if (!(worst_spot <= 1e-12 * largest) || !(worst_pull <= 1e-9)) {
        fprintf(stderr, "emu_tsan_run ex2d_patch: K1 spots off by %g (of %g), flux pulls up to %g\n", worst_spot,
                largest, worst_pull);
        rc = 1;
    }
    const void *d_all[] = {d_in.image, d_in.ivar, d_in.psf_sigx, d_in.psf_sigy, d_in.psf_dx, d_in.psf_dy, d_in.psf_c,
                           d_in.psf_xc, d_in.psf_yc, d_in.patches, d_spots, d_spots_k1, d_ws, d_out.flux, d_out.ivar,
                           d_out.rdiags, d_out.chi2pix, d_out.pixmask_fraction, d_out.info, d_witness};
    for (size_t i = 0; i < sizeof d_all / sizeof d_all[0]; i++) cudaFree((void *)d_all[i]);
    free(k1);
    free(ws);
    ex2d_ref_outputs_free(&want);
    ex2d_ref_outputs_free(&got);
    ex2d_frame_free(&f);
    return rc;
}

static int run_missing_sync(void)
{
    int *d_out = upload(NULL, 64 * sizeof *d_out), out[64];
    cuda(emu_missing_sync(d_out), "emu_missing_sync");
    download(out, d_out, sizeof out);
    cudaFree(d_out);
    return 0; /* the values are whatever the interleaving gave: only ThreadSanitizer's report counts */
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(void);
    } runs[] = {{"grid_d4", run_grid_d4}, {"grid_objects", run_grid_objects}, {"focus_stack", run_focus_stack},
                {"ex2d_patch", run_ex2d_patch}, {"missing_sync", run_missing_sync}};
    for (size_t i = 0; argc == 2 && i < sizeof runs / sizeof runs[0]; i++) {
        if (strcmp(argv[1], runs[i].name)) continue;
        const int rc = runs[i].run();
        if (!rc) printf("emu_tsan_run %s: matches the reference, no race reported\n", argv[1]);
        return rc;
    }
    fprintf(stderr, "usage: emu_tsan_run grid_d4|grid_objects|focus_stack|ex2d_patch|missing_sync\n");
    return 2;
}
