/* SPDX-License-Identifier: MIT
 * Compile-only test (C11, -Wpedantic): kernels/focus_stack/focus_stack.h included alone, first and only.
 * A header that needs another include first, or drifts from the documented constants, codes and launcher
 * signature (docs/focus_stack.md, "Parameters and arrays" and "Errors"), breaks the build
 * (tests/focus_stack/CMakeLists.txt builds it with `all`).
 */
#include "focus_stack.h"

/* The enum values, limits and status codes of docs/focus_stack.md ("Parameters and arrays", "Errors"), the
 * codes in the order the checks run. */
_Static_assert(FOCUS_STACK_LOG_ABS == 0 && FOCUS_STACK_LAP_ABS == 1,
               "measure values differ from docs/focus_stack.md, \"Parameters and arrays\"");
_Static_assert(FOCUS_STACK_BORDER_ZERO == 0 && FOCUS_STACK_BORDER_REPLICATE == 1 && FOCUS_STACK_BORDER_REFLECT101 == 2,
               "border values differ from docs/focus_stack.md, \"Parameters and arrays\"");
_Static_assert(FOCUS_STACK_OK == 0 && FOCUS_STACK_ERR_NULL == 1 && FOCUS_STACK_ERR_DIM == 2 &&
                   FOCUS_STACK_ERR_KSIZE == 3 && FOCUS_STACK_ERR_WINDOW == 4 && FOCUS_STACK_ERR_ENUM == 5 &&
                   FOCUS_STACK_ERR_OVERFLOW == 6,
               "status codes must follow the table order of docs/focus_stack.md, \"Errors\"");
_Static_assert(FOCUS_STACK_MAX_Z == 255 && FOCUS_STACK_MAX_WINDOW == 7567,
               "limits differ from docs/focus_stack.md, \"Parameters and arrays\"");
_Static_assert(sizeof(focus_stack_params) == 8 * sizeof(int), "focus_stack_params is eight ints");

const char *header_test_fs_status(int s);
const char *header_test_fs_status(int s) { return focus_stack_status_str(s); }

int header_test_fs_check(void);
int header_test_fs_check(void)
{
    /* A zero-initialised struct with the sizes and ksize 3 is the morphseq configuration. */
    const focus_stack_params p = {.n = 1, .z = 1, .y = 1, .x = 1, .ksize = 3};
    const char one = 0;
    return focus_stack_check(&p, &one, &one, &one);
}

#ifdef GW_HAVE_CUDA_RUNTIME
/* The launcher's exact signature, the project's convention (cudaError_t, const params *, device pointers,
 * stream last): any drift is a compile error here. */
cudaError_t (*const header_test_fs_launch)(const focus_stack_params *, const uint16_t *, uint8_t *, uint16_t *,
                                           float *, float *, gw_witness *, cudaStream_t) = focus_stack_launch;
#endif
