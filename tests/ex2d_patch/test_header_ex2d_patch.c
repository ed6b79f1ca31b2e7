/* SPDX-License-Identifier: MIT
 * Compile-only test (C11, -Wpedantic): kernels/ex2d_patch/ex2d_patch.h included alone, first and only. A header
 * that needs another include first, or drifts from the documented limits, codes, layouts and launcher signatures,
 * breaks the build (tests/ex2d_patch/CMakeLists.txt builds it with `all`).
 */
#include "ex2d_patch.h"

/* docs/ex2d_patch.md, "Launch limits" and "Argument rules and per-patch statuses": limits, per-patch statuses
 * and errors in the order the checks run. */
_Static_assert(EX2D_MAX_DEGREE == 8 && EX2D_MAX_N == 1024 && EX2D_MAX_M == 112, "limits differ from the spec");
_Static_assert(EX2D_PATCH_OK == 0 && EX2D_PATCH_NOT_POSDEF == 1 && EX2D_PATCH_NOT_CONVERGED == 2 &&
                   EX2D_PATCH_NOT_RUN == 3,
               "per-patch statuses changed");
_Static_assert(EX2D_OK == 0 && EX2D_ERR_NULL == 1 && EX2D_ERR_SIZE == 2 && EX2D_ERR_DEGREE == 3 &&
                   EX2D_ERR_LIMIT == 4 && EX2D_ERR_RANGE == 5 && EX2D_ERR_PARAM == 6 && EX2D_ERR_WORKSPACE == 7 &&
                   EX2D_ERR_PATCH_TABLE == 8 && EX2D_ERR_BOX == 9 && EX2D_ERR_FOOTPRINT == 10 &&
                   EX2D_ERR_IVAR == 11 && EX2D_ERR_IMAGE == 12,
               "error codes must follow the order of the checks");
_Static_assert(EX2D_W_VALIDATE == 0 && EX2D_W_OUTPUTS == 6 && EX2D_WITNESS_SLOTS == 7, "witness slots changed");
/* Uploaded as is and read by the device: these layouts are ABI. */
_Static_assert(sizeof(ex2d_patch_desc) == 12 * sizeof(int32_t), "ex2d_patch_desc is twelve int32");
_Static_assert(sizeof(ex2d_patch_info) == 4 * sizeof(int32_t), "ex2d_patch_info is four int32");
_Static_assert(sizeof(ex2d_check_word) == 8, "the check word is one 64-bit word {code, patch}");
_Static_assert(EX2D_WORKSPACE_ALIGN % sizeof(ex2d_check_word) == 0, "the check word heads an aligned workspace");

const char *header_test_ex2d_strings(int code);
const char *header_test_ex2d_strings(int code)
{
    return code < 0 ? ex2d_patch_status_str(-code) : ex2d_error_str(code);
}

int header_test_ex2d_check(void);
int header_test_ex2d_check(void)
{
    /* A params-only check of tier M's sizes with the default numerics. */
    ex2d_params p = {.nspec_tab = 7, .nwave_tab = 98, .hsizex = 8, .hsizey = 5, .npix_x = 120, .npix_y = 160,
                     .nspec_out = 5, .nwave_out = 50, .m = 74, .wavepad = 12, .max_nspecpad = 7, .max_ncore = 5,
                     .max_box_pixels = 7200, .gx = 4, .gy = 4};
    ex2d_params_set_numerics_default(&p);
    ex2d_workspace ws;
    return ex2d_check_args(&p, NULL, 0, 0, 0, NULL, 0) + (int)(ex2d_workspace_bytes(&p, 1) > 0) +
           ex2d_workspace_carve(&p, 1, NULL, &ws);
}

#ifdef GW_HAVE_CUDA_RUNTIME
/* The launchers' exact signatures: any drift is a compile error here. */
cudaError_t (*const header_test_ex2d_validate)(const ex2d_params *, const ex2d_inputs *, int, int, void *, size_t, int,
                                               gw_witness *, cudaStream_t) = ex2d_validate_launch;
cudaError_t (*const header_test_ex2d_spots)(const ex2d_params *, const ex2d_inputs *, int, int, double *, gw_witness *,
                                            cudaStream_t) = ex2d_spots_launch;
cudaError_t (*const header_test_ex2d_normal)(const ex2d_params *, const ex2d_inputs *, const double *, int, int, void *,
                                             size_t, int, gw_witness *, cudaStream_t) = ex2d_normal_launch;
cudaError_t (*const header_test_ex2d_cholesky)(const ex2d_params *, const ex2d_inputs *, int, int, void *, size_t, int,
                                               ex2d_patch_info *, gw_witness *, cudaStream_t) = ex2d_cholesky_launch;
cudaError_t (*const header_test_ex2d_cblocks)(const ex2d_params *, const ex2d_inputs *, int, int, void *, size_t, int,
                                              const ex2d_patch_info *, gw_witness *,
                                              cudaStream_t) = ex2d_cblocks_launch;
cudaError_t (*const header_test_ex2d_jacobi)(const ex2d_params *, const ex2d_inputs *, int, int, void *, size_t, int,
                                             ex2d_patch_info *, gw_witness *, cudaStream_t) = ex2d_jacobi_launch;
cudaError_t (*const header_test_ex2d_outputs)(const ex2d_params *, const ex2d_inputs *, const double *, int, int,
                                              void *, size_t, int, const ex2d_outputs *, gw_witness *,
                                              cudaStream_t) = ex2d_outputs_launch;
cudaError_t (*const header_test_ex2d_patches)(const ex2d_params *, const ex2d_inputs *, const double *, int, int, int,
                                              void *, size_t, const ex2d_outputs *, gw_witness *,
                                              cudaStream_t) = ex2d_patches_launch;
#endif
