/* SPDX-License-Identifier: MIT
 * Internal to the ex2d_patch CPU reference (reference/ex2d_*.c): per-patch stage functions, the shared
 * argument check of the batched stages, and the thread helpers. Not a public header.
 */
#ifndef EX2D_REF_INTERNAL_H
#define EX2D_REF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ex2d_patch.h"

#ifdef _OPENMP
#include <omp.h>
#define EX2D_OMP(directive) _Pragma(#directive)
#else
#define EX2D_OMP(directive)
#endif

/* nthreads: 1 = single, <= 0 = every core, otherwise that many (OpenMP builds; else always one). */
int ex2d_ref_thread_count(int nthreads);

/* One patch's workspace slot (pointers into the carved workspace, leading dimension ld of icov). */
typedef struct ex2d_slot {
    double *icov, *y, *fluxweight, *xflux, *cblk, *qblk, *model, *xscr;
    size_t ld;
} ex2d_slot;

ex2d_slot ex2d_ref_slot(const ex2d_params *p, const ex2d_workspace *ws, int b);

/* The argument rules of every batched stage: ex2d_check_args, then nbatch and max_batch >= 1 (SIZE),
 * nbatch <= max_batch (RANGE); then carves ws. Returns 0 or the ex2d_error. */
int ex2d_ref_stage_args(const ex2d_params *p, const ex2d_inputs *in, int patch_first, int nbatch, void *ws,
                        size_t ws_bytes, int max_batch, ex2d_workspace *carved);

/* Per patch, on validated inputs. */
void ex2d_ref_patch_normal(const ex2d_params *p, const ex2d_inputs *in, const double *spots,
                           const ex2d_patch_desc *d, const ex2d_slot *s);
int ex2d_ref_patch_cholesky(const ex2d_params *p, const ex2d_patch_desc *d, const ex2d_slot *s);
void ex2d_ref_patch_cblocks(const ex2d_params *p, const ex2d_patch_desc *d, const ex2d_slot *s);
int ex2d_ref_patch_jacobi(const ex2d_params *p, const ex2d_patch_desc *d, const ex2d_slot *s,
                          ex2d_patch_info *info);
void ex2d_ref_patch_outputs(const ex2d_params *p, const ex2d_inputs *in, const double *spots,
                            const ex2d_patch_desc *d, const ex2d_slot *s, int status, const ex2d_outputs *out);

/* K3's regularisation of one patch (shared by the overlap and the dense form). */
void ex2d_ref_regularise(const ex2d_params *p, int n, const double *fluxweight, double *icov, size_t ld);

#endif /* EX2D_REF_INTERNAL_H */
