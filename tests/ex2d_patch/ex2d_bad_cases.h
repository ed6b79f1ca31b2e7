/* SPDX-License-Identifier: MIT
 * The ex2d_patch bad-input table, shared by the CPU test (ex2d_check_args, the reference's validation pass,
 * stages and driver, test_bad_input_ex2d.c) and the launcher test (the ex2d_*_launch host checks,
 * test_bad_input_ex2d_launch.c). Each row starts from one valid call on a small two-patch frame (tier S with
 * 20 core bins: one fibre, two wavelength steps, n = 54) and breaks one thing (or two, to pin the order of
 * the rules); `fns` says which public functions must refuse it with `code`, and ex2d_error_str(code) must
 * hold every word of `words`. Rows with a patch (>= 0) are device-validation rules: the check word must read
 * {code, patch}.
 */
#ifndef EX2D_BAD_CASES_H
#define EX2D_BAD_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "ex2d_patch.h"
#include "ex2d_patch_ref.h"
#include "ex2d_synth.h"

/* The public functions a row applies to (launchers: the ex2d_*_launch of the same stage). */
enum {
    EX2D_FN_CHECK = 1 << 0,    /* ex2d_check_args */
    EX2D_FN_VALIDATE = 1 << 1, /* ex2d_ref_validate, ex2d_validate_launch */
    EX2D_FN_SPOTS = 1 << 2,    /* ex2d_ref_spots, ex2d_spots_launch */
    EX2D_FN_NORMAL = 1 << 3,   /* ex2d_ref_normal, ex2d_normal_launch */
    EX2D_FN_CHOLESKY = 1 << 4, /* ex2d_ref_cholesky, ex2d_cholesky_launch */
    EX2D_FN_CBLOCKS = 1 << 5,  /* ex2d_ref_cblocks, ex2d_cblocks_launch */
    EX2D_FN_JACOBI = 1 << 6,   /* ex2d_ref_jacobi, ex2d_jacobi_launch */
    EX2D_FN_OUTPUTS = 1 << 7,  /* ex2d_ref_outputs, ex2d_outputs_launch */
    EX2D_FN_PATCHES = 1 << 8,  /* ex2d_ref_patches, ex2d_patches_launch */
    EX2D_FN_STAGES = EX2D_FN_NORMAL | EX2D_FN_CHOLESKY | EX2D_FN_CBLOCKS | EX2D_FN_JACOBI | EX2D_FN_OUTPUTS,
    EX2D_FN_RANGED = EX2D_FN_CHECK | EX2D_FN_VALIDATE | EX2D_FN_STAGES | EX2D_FN_PATCHES, /* take patches + ws */
    EX2D_FN_PARAMS = EX2D_FN_RANGED | EX2D_FN_SPOTS                                      /* params-only rules */
};

/* The valid call's arrays. Inputs are private copies the rows may break; outputs start as the sentinel. */
typedef struct ex2d_arena {
    ex2d_frame f;
    ex2d_patch_desc *patches; /* f.npatch */
    double *image, *ivar;     /* npix_y*npix_x */
    void *ws;                 /* ex2d_workspace_bytes(p, 2), 256-B aligned */
    size_t ws_bytes;
    ex2d_outputs out;
    double *spots_out;        /* K1 output, every table entry */
    size_t spots_doubles;
} ex2d_arena;

typedef struct ex2d_args {
    ex2d_params params;
    const ex2d_params *p; /* &params, or NULL */
    ex2d_inputs inputs;
    const ex2d_inputs *in; /* &inputs, or NULL */
    int patch_first, npatch, max_batch;
    void *ws;
    size_t ws_bytes;
    const double *spots;       /* K3, K7 input: the frame's spots */
    ex2d_patch_info *info;     /* K4..K6: out.info */
    ex2d_outputs outputs;
    const ex2d_outputs *out;   /* &outputs, or NULL */
    int entry_first, count;    /* K1: every table entry */
    double *spots_out;
} ex2d_args;

/* ex2d_bad_case.patch of a row that plants the check word a failed validation leaves (read on the host by the
 * reference, on the device by a launcher) */
#define EX2D_CHECK_WORD_ROW (-2)

typedef struct ex2d_bad_case {
    const char *name;
    void (*breaks)(ex2d_args *a, ex2d_arena *ar);
    unsigned fns;      /* EX2D_FN_* that must refuse it */
    int code;          /* ex2d_error */
    int patch;         /* the check word's patch for a validation rule; -1 for a host rule; EX2D_CHECK_WORD_ROW */
    const char *words; /* '|'-separated words ex2d_error_str(code) must hold */
} ex2d_bad_case;

extern const ex2d_bad_case ex2d_bad_cases[];
extern const size_t ex2d_bad_case_count;

/* Builds the frame and the buffers (Criterion-asserts on failure); free with ex2d_arena_close. */
void ex2d_arena_open(ex2d_arena *ar);
void ex2d_arena_close(ex2d_arena *ar);
/* Restores the inputs, fills every output and the whole workspace with the sentinel byte 0xA5, and sets *a
 * to the valid call: patches [0, 2), max_batch 2, the exact workspace. */
void ex2d_arena_reset(ex2d_arena *ar, ex2d_args *a);

/* Rows of ex2d_bad_cases that apply to fn. */
size_t ex2d_bad_rows_for(unsigned fn);

#endif /* EX2D_BAD_CASES_H */
