/* SPDX-License-Identifier: MIT
 * ex2d_patch's host side in the CLI (not a library API): the two paths that run, check, doctor, trace, the
 * ledger tests and the load tests share. The GPU path takes a synthetic frame built on the host
 * (reference/ex2d_patch/ex2d_synth.h), uploads its inputs, runs K1 over the PSF table and ex2d_patches_launch
 * over the patches in batches sized from free device memory, downloads the frame outputs and checks each
 * stage's witness. The CPU path runs ex2d_ref_patches (threads over patches). Every function returns a status
 * up to main.
 */
#ifndef EX2D_PATCH_HOST_H
#define EX2D_PATCH_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "ex2d_patch.h"
#include "ex2d_synth.h"
#include "gw_cli.h"
#include "gw_witness.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- host side (ex2d_patch_host.c) ---- */

/* Element counts of the frame outputs of f: flux-like arrays [nspec_out][nwave_out], rdiags
 * [nspec_out][2*ndiag+1][nwave_out], info [npatch]. */
size_t gw_ex2d_frame_elems(const ex2d_frame *f);
size_t gw_ex2d_rdiag_elems(const ex2d_frame *f);

/* Every byte of every output array set to byte (0xFF: NaN doubles, info -1). */
void gw_ex2d_out_poison(const ex2d_frame *f, const ex2d_outputs *out, uint8_t byte);

/* Progress on stderr for long runs: one line at most every 2 s (patches done / total, patches/s, time left). */
typedef struct gw_ex2d_progress {
    const char *label; /* "gpuwitness run ex2d" */
    int total;
    double t0_ms, last_ms;
    int enabled;
} gw_ex2d_progress;
void gw_ex2d_progress_start(gw_ex2d_progress *pr, const char *label, int total, int enabled);
void gw_ex2d_progress_update(gw_ex2d_progress *pr, int done);

/* ex2d_ref_patches over every patch of f into out, in chunks, nthreads as the reference takes it (0: every
 * core). 0, or an ex2d_error / EX2D_REF_ERR_ALLOC with err naming it (and the first bad patch for a
 * validation failure); *ms gets the wall time. */
int gw_ex2d_cpu_run(const ex2d_frame *f, int nthreads, ex2d_outputs *out, gw_ex2d_progress *pr, double *ms, char *err,
                    size_t err_size);

/* got against the reference want (docs/ex2d_patch.md, "Numerics and tolerances"): flux pull 1e-9, ivar rtol 1e-10,
 * Rdiags 1e-10, chi2pix rtol 1e-8 atol 1e-10, pixmask_fraction 2e-12, info statuses equal. bitwise: every byte equal
 * instead (the reference against its threaded twin). 0 when it passes; otherwise the number of mismatches, with the
 * first of each array and the counts in msg. */
size_t gw_ex2d_compare(const ex2d_frame *f, const ex2d_outputs *got, const ex2d_outputs *want, int bitwise, char *msg,
                       size_t msg_size);

/* Patches whose info status is not EX2D_PATCH_OK; the first one in *first (-1 when none). */
int gw_ex2d_failed_patches(const ex2d_frame *f, const ex2d_outputs *out, int *first);

/* The extraction of every patch of f on dev (ex2d_patch_extract.c): on a GPU gw_ex2d_gpu_run, its
 * validation verdict and witness, and up to 47 patches compared with the reference; on the CPU the reference.
 * label prefixes the messages. GW_EXIT_OK, or GW_EXIT_FAIL with the reason printed. */
int gw_ex2d_extract(const char *label, const ex2d_frame *f, const gw_device_choice *dev, int threads,
                    ex2d_outputs *out);

/* What `run` makes of an extraction's patches (docs/ex2d_patch.md, "When patches fail"): a patch failed when
 * its status is not ok, when a core output is not finite (the sums overflowed), or when no core bin has
 * information (every ivar 0: the pixels under its spots masked, or the spots zero). A failed patch's core is
 * zeroed (flux, ivar, Rdiags, chi2pix) and failed[i] set (failed holds f->npatch entries). The count and the
 * first failed patch's cause, with the remedy that fits it, are printed after cmd; zeroed_as says what the
 * outputs hold for a failed patch. regularize: the run's --regularize, or < 0 for a command without that
 * option. 0 when there is a frame to write, or -1 when every patch failed (a frame of zeros is no result). */
int gw_ex2d_judge_patches(const char *cmd, const char *zeroed_as, const ex2d_frame *f, ex2d_outputs *out,
                          double regularize, unsigned char *failed);

/* `gpuwitness run ex2d --psf ...` and `gpuwitness synth ex2d ...` on DESI files (ex2d_patch_desi.c). */
int gw_ex2d_run_desi(int argc, char **argv);
int gw_ex2d_patch_synth(int argc, char **argv);

/* ---- the GPU path (ex2d_patch_gpu.c) ---- */

typedef struct gw_ex2d_gpu_result {
    gw_witness witness[EX2D_WITNESS_SLOTS];
    ex2d_check_word check;  /* the device validation's verdict (code 0: every patch passed) */
    int max_batch, batches; /* patches per ex2d_patches_launch call, calls made */
    double ms_end_to_end;   /* upload + K1 + batches + download, host clock (allocation excluded) */
    double ms_kernel;       /* CUDA events from before K1 to after the last batch */
    int witness_violations;
    char witness_receipt[EX2D_WITNESS_SLOTS][200];
    char witness_check[2048]; /* findings of gw_witness_check per stage, empty when clean */
} gw_ex2d_gpu_result;

/* One witnessed extraction of every patch of f on device ordinal: allocates, uploads image, ivar, the PSF
 * table and the patch table, poisons the device outputs (0xFF), K1 over the table, ex2d_patches_launch in
 * batches of max_batch (0: as many as free device memory holds), downloads every frame output and info into
 * out (host bytes poisoned with 0xA5 first, so a missed download cannot look right), checks each stage's
 * witness against the counts of reference/ex2d_patch/ex2d_patch_ref.h, and frees everything on every path. 0 when every
 * CUDA call succeeded (the validation verdict and the witness verdict are in res), -1 with err. */
int gw_ex2d_gpu_run(int ordinal, const ex2d_frame *f, int max_batch, ex2d_outputs *out, gw_ex2d_gpu_result *res,
                    gw_ex2d_progress *pr, char *err, size_t err_size);

/* Prints res's witness receipts (one line per stage, prefixed by indent) and its findings. */
void gw_ex2d_print_witness(const gw_ex2d_gpu_result *res, const char *indent);

#ifdef __cplusplus
}
#endif

#endif /* EX2D_PATCH_HOST_H */
