// SPDX-License-Identifier: MIT
// Compile-only test (C++, -Wpedantic): kernels/focus_stack/focus_stack.h included alone. Checks that the C
// interface works from C++ (extern "C", no C-only constructs) and keeps its constants and signature.
#include "focus_stack.h"

static_assert(FOCUS_STACK_LAP_ABS == 1 && FOCUS_STACK_BORDER_REFLECT101 == 2, "enum values differ from the docs");
static_assert(FOCUS_STACK_ERR_NULL == 1 && FOCUS_STACK_ERR_OVERFLOW == 6, "status codes differ from the docs");
static_assert(FOCUS_STACK_MAX_Z == 255 && FOCUS_STACK_MAX_WINDOW == 7567, "limits differ from the docs");

const char *header_test_fs_status_cpp(int s);
const char *header_test_fs_status_cpp(int s) { return focus_stack_status_str(s); }

int header_test_fs_check_cpp();
int header_test_fs_check_cpp()
{
    focus_stack_params p = focus_stack_params();  // value-initialised: all zero, as in C
    p.n = p.z = p.y = p.x = 1;
    p.ksize = 3;
    const char one = 0;
    return focus_stack_check(&p, &one, &one, &one);
}

#ifdef GW_HAVE_CUDA_RUNTIME
// The exact signature, seen from C++: a drifted declaration fails to compile.
extern "C" {
typedef cudaError_t (*header_test_fs_launch_fn)(const focus_stack_params *, const uint16_t *, uint8_t *, uint16_t *,
                                                float *, float *, gw_witness *, cudaStream_t);
}
header_test_fs_launch_fn header_test_fs_launch_cpp();
header_test_fs_launch_fn header_test_fs_launch_cpp() { return focus_stack_launch; }
#endif
