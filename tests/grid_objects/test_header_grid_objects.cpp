// SPDX-License-Identifier: MIT
// Compile-only test (C++, -Wpedantic): grid_objects.h included alone. Checks that the C interface works from
// C++ (extern "C", no C-only constructs) and keeps its constants, record layout and signature.
#include "grid_objects.h"

static_assert(GRID_OBJECTS_WITHOUT_BG == 1 && GRID_OBJECTS_DIAGONAL == 2 && GRID_OBJECTS_UNIVALUED == 4,
              "variant bits differ from o_g's numbering");
static_assert(sizeof(grid_objects_object) == 14 && alignof(grid_objects_object) == 2, "record layout changed");
static_assert(sizeof(grid_objects_status_record) == 8, "the status record is one 64-bit word");

const char *header_test_status_cpp(grid_objects_status s);
const char *header_test_status_cpp(grid_objects_status s) { return grid_objects_status_str(s); }

#ifdef GW_HAVE_CUDA_RUNTIME
// The exact signature, seen from C++: a drifted declaration fails to compile.
extern "C" {
typedef cudaError_t (*header_test_launch_fn)(const grid_objects_params *, const uint8_t *, const uint64_t *,
                                             const uint16_t *, const uint16_t *, const uint8_t *, uint16_t *,
                                             grid_objects_object *, uint32_t *, int16_t *,
                                             grid_objects_status_record *, gw_witness *, cudaStream_t);
}
header_test_launch_fn header_test_launch_cpp();
header_test_launch_fn header_test_launch_cpp() { return grid_objects_launch; }
#endif
