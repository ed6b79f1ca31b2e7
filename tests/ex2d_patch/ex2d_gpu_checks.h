/* SPDX-License-Identifier: MIT
 * The ex2d_patch GPU tests' comparisons (docs/ex2d_patch.md, "Numerics and tolerances": its "Tolerances",
 * "Invariants" and "Analytic cases"), stage by stage, between what the GPU wrote (t->got_*, after ex2d_gc_download)
 * and the CPU reference (t->ref_*), over the patches [first, first + count) of one batch (workspace slot b = patch
 * first + b). Each function prints its failures (the first EX2D_CMP_SHOW per quantity, then a count) and returns
 * their number; the caller asserts on it. Besides the values, every function requires that what the stage must
 * write holds no poison and that what it must leave alone (padding of a slot, unused blocks, failed patches, bins
 * outside every core) still does.
 *
 * Tolerances are the header's: K3 bit for bit; xflux 1e-10 of its max; C_bb, Q_b 1e-10 of the block max;
 * model 1e-10 of max(model); flux pull 1e-9; ivar rtol 1e-10; Rdiags 1e-10; chi2pix rtol 1e-8 atol 1e-10;
 * pixmask_fraction 2e-12. Invariants (GPU side alone): L L^T = iCov within 1e-12 max|iCov|; Q symmetric and
 * Q C Q = I within 1e-10; rows of R sum to 1 within 1e-13; sweeps in 1..jacobi_max_sweeps; no clipping.
 */
#ifndef EX2D_GPU_CHECKS_H
#define EX2D_GPU_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "ex2d_gpu_case.h"

/* The check word at the start of the GPU's workspace. */
size_t ex2d_check_validation_word(const ex2d_gpu_case *t, int code, int patch);

/* K1 over entries [first, first + count): |spot - ref| <= 1e-14, spots >= 0, sum 1 within 1e-14, centroid
 * within [-0.7, 0.7) of the centre pixel; entries outside the range untouched. */
size_t ex2d_check_spots(const ex2d_gpu_case *t, size_t first, size_t count);

size_t ex2d_check_normal(const ex2d_gpu_case *t, int first, int count);

/* icov_k3: the GPU's icov slots as K3 left them (count * icov_stride doubles, copied before K4). */
size_t ex2d_check_cholesky(const ex2d_gpu_case *t, int first, int count, const double *icov_k3);

size_t ex2d_check_cblocks(const ex2d_gpu_case *t, int first, int count);
size_t ex2d_check_jacobi(const ex2d_gpu_case *t, int first, int count);
size_t ex2d_check_model(const ex2d_gpu_case *t, int first, int count);

/* Frame outputs and info of patches [first, first + count) against the reference; bins outside their cores
 * untouched. Needs no workspace, so it also checks pipelines run in several chunks. */
size_t ex2d_check_frame(const ex2d_gpu_case *t, int first, int count);

/* The noiseless patch of docs/ex2d_patch.md, "Analytic cases" (image = A f_true, ivar 1):
 * |flux - R f_true| < 1e-9 |R f_true| for every core bin (R from the GPU's Q), |A xflux - image| < 1e-6 on
 * every unmasked box pixel; and rows of R sum to 1. */
size_t ex2d_check_noiseless(const ex2d_gpu_case *t, int first, int count);

/* Everything ex2d_gc_poison_all poisoned still holds the poison, except info[] of the patches of [not_run_first,
 * not_run_first + not_run_count), which must read {EX2D_PATCH_NOT_RUN, 0, 0, 0} (a range the validation pass
 * rejected; count 0 for a call rejected on the host). */
size_t ex2d_check_untouched(const ex2d_gpu_case *t, int not_run_first, int not_run_count);

/* The seven witness records of ex2d_patches_launch over [first, first + count) run in chunks of max_batch:
 * validation one launch, count patches; K1's record untouched; every other stage one launch per chunk with
 * the reference's items, or 0 items each when validation failed (validated = 0). */
size_t ex2d_check_pipeline_witness(const ex2d_gpu_case *t, int first, int count, int max_batch, int validated);

#endif /* EX2D_GPU_CHECKS_H */
