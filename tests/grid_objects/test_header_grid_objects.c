/* SPDX-License-Identifier: MIT
 * Compile-only test (C11, -Wpedantic): grid_objects.h included alone, first and only. A header that needs
 * another include first, or drifts from the constants, layout and signature documented in
 * docs/grid_objects.md, breaks the build.
 */
#include "grid_objects.h"

/* Variant bits follow the ARC solvers' o_g(grid, t) numbering (docs/grid_objects.md, "Semantics"). */
_Static_assert(GRID_OBJECTS_WITHOUT_BG == 1 && GRID_OBJECTS_DIAGONAL == 2 && GRID_OBJECTS_UNIVALUED == 4,
               "variant bits differ from o_g's numbering");
_Static_assert(GRID_OBJECTS_MAX_DIM == 255 && GRID_OBJECTS_NO_OBJECT == 0xFFFFu, "limits changed");
_Static_assert(GRID_OBJECTS_OK == 0 && GRID_OBJECTS_ERR_NULL == 1 && GRID_OBJECTS_ERR_VARIANT == 2 &&
                   GRID_OBJECTS_ERR_ALIAS == 3 && GRID_OBJECTS_ERR_EMPTY == 4 && GRID_OBJECTS_ERR_TOO_LARGE == 5 &&
                   GRID_OBJECTS_ERR_BOUNDS == 6 && GRID_OBJECTS_ERR_OVERLAP == 7 && GRID_OBJECTS_ERR_BG_TIE == 8 &&
                   GRID_OBJECTS_ERR_FLAGS == 9 && GRID_OBJECTS_ERR_PADDING == 10,
               "status codes must match docs/grid_objects.md, \"Bad input\"");
/* The object record is read by host code and written by the device: its layout is ABI. */
_Static_assert(sizeof(grid_objects_object) == 14 && _Alignof(grid_objects_object) == 2, "record layout changed");
_Static_assert(sizeof(grid_objects_status_record) == 8, "the status record is one 64-bit word");

const char *header_test_status(int s);
const char *header_test_status(int s) { return grid_objects_status_str((grid_objects_status)s); }
/* The padded size is a header function, usable without the kernel library. */
uint64_t header_test_out_entries(uint64_t buf_bytes);
uint64_t header_test_out_entries(uint64_t buf_bytes) { return grid_objects_out_entries(buf_bytes); }

#ifdef GW_HAVE_CUDA_RUNTIME
/* The launcher's exact signature: any drift is a compile error here. */
cudaError_t (*const header_test_launch)(const grid_objects_params *, const uint8_t *, const uint64_t *,
                                        const uint16_t *, const uint16_t *, const uint8_t *, uint16_t *,
                                        grid_objects_object *, uint32_t *, int16_t *, grid_objects_status_record *,
                                        gw_witness *, cudaStream_t) = grid_objects_launch;
#endif
