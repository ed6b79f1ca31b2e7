/* SPDX-License-Identifier: MIT
 * Compile-only test (C11, -Wpedantic): the public header included alone, first and only. Built twice by
 * tests/grid_d4/CMakeLists.txt: once for grid_d4.h, once (GW_HEADER_WITNESS) for gw_witness.h. A header that needs
 * another include first, or drifts from the constants and signature documented in docs/grid_d4.md
 * ("Semantics", "Interface", "Bad input"), breaks the build.
 */
#ifdef GW_HEADER_WITNESS
#include "gw_witness.h"

/* The record is shared by every kernel and read by host code: its layout is ABI. */
_Static_assert(sizeof(gw_witness) == 6 * 8 + 2 * 4 + 4 * GW_WITNESS_SM_WORDS, "gw_witness layout changed");

unsigned header_test_witness_arch(const gw_witness *w);
unsigned header_test_witness_arch(const gw_witness *w) { return gw_witness_arch_min(w) + (unsigned)gw_witness_t_first(w); }
#else
#include "grid_d4.h"

/* Op codes are 4*swap + 2*fr + fc (docs/grid_d4.md, "Semantics"). */
_Static_assert(GRID_D4_IDENTITY == 0 && GRID_D4_VMIRROR == 1 && GRID_D4_HMIRROR == 2 && GRID_D4_ROT180 == 3 &&
                   GRID_D4_DMIRROR == 4 && GRID_D4_ROT270 == 5 && GRID_D4_ROT90 == 6 && GRID_D4_CMIRROR == 7,
               "op codes differ from docs/grid_d4.md, \"Semantics\"");
_Static_assert(GRID_D4_MAX_DIM == 255, "GRID_D4_MAX_DIM is 255");
_Static_assert(GRID_D4_OK == 0 && GRID_D4_ERR_NULL == 1 && GRID_D4_ERR_OP == 2 && GRID_D4_ERR_ALIAS == 3 &&
                   GRID_D4_ERR_EMPTY == 4 && GRID_D4_ERR_TOO_LARGE == 5 && GRID_D4_ERR_BOUNDS == 6 &&
                   GRID_D4_ERR_OVERLAP == 7,
               "status codes must follow the check order of docs/grid_d4.md, \"Bad input\"");
_Static_assert(sizeof(grid_d4_status_record) == 8, "the status record is one 64-bit word");

const char *header_test_status(int s);
const char *header_test_status(int s) { return grid_d4_status_str((grid_d4_status)s); }

#ifdef GW_HAVE_CUDA_RUNTIME
/* The launcher's exact signature: any drift is a compile error here. */
cudaError_t (*const header_test_launch)(const grid_d4_params *, const uint8_t *, uint8_t *, const uint64_t *,
                                        const uint16_t *, const uint16_t *, uint16_t *, uint16_t *, const uint8_t *,
                                        grid_d4_status_record *, gw_witness *, cudaStream_t) = grid_d4_launch;
#endif
#endif
