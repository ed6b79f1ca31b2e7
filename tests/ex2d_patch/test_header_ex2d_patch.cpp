// SPDX-License-Identifier: MIT
// Compile-only test (C++11, -Wpedantic): kernels/ex2d_patch/ex2d_patch.h included alone. Checks that the C
// interface works from C++ (extern "C", no C-only constructs: the static inline helpers compile as C++ too)
// and keeps its constants, layouts and signatures.
#include "ex2d_patch.h"

static_assert(EX2D_MAX_N == 1024 && EX2D_MAX_M == 112, "limits differ from the spec");
static_assert(EX2D_ERR_WORKSPACE == 7 && EX2D_ERR_IMAGE == 12, "error codes differ from the spec");
static_assert(sizeof(ex2d_patch_desc) == 48 && sizeof(ex2d_patch_info) == 16 && sizeof(ex2d_check_word) == 8,
              "uploaded layouts changed");

const char *header_test_ex2d_status_cpp(int s);
const char *header_test_ex2d_status_cpp(int s) { return ex2d_patch_status_str(s); }

size_t header_test_ex2d_workspace_cpp();
size_t header_test_ex2d_workspace_cpp()
{
    ex2d_params p = ex2d_params();  // value-initialised: all zero, as in C
    p.m = 74;
    p.max_nspecpad = 7;
    p.max_ncore = 5;
    p.max_box_pixels = 7200;
    ex2d_params_set_numerics_default(&p);
    ex2d_workspace ws;
    return ex2d_workspace_bytes(&p, 47) + (size_t)ex2d_workspace_carve(&p, 47, nullptr, &ws) +
           (size_t)ex2d_check_args(&p, nullptr, 0, 0, 0, nullptr, 0);
}

#ifdef GW_HAVE_CUDA_RUNTIME
// The pipeline's exact signature, seen from C++: a drifted declaration fails to compile.
extern "C" {
typedef cudaError_t (*header_test_ex2d_patches_fn)(const ex2d_params *, const ex2d_inputs *, const double *, int, int,
                                                   int, void *, size_t, const ex2d_outputs *, gw_witness *,
                                                   cudaStream_t);
}
header_test_ex2d_patches_fn header_test_ex2d_patches_cpp();
header_test_ex2d_patches_fn header_test_ex2d_patches_cpp() { return ex2d_patches_launch; }
#endif
