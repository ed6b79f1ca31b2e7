// SPDX-License-Identifier: MIT
// Compile-only test (C++, -Wpedantic): the public header included alone. Built twice by tests/grid_d4.cmake:
// once for grid_d4.h, once (GW_HEADER_WITNESS) for gw_witness.h. Checks that the C interface works from C++
// (extern "C", no C-only constructs) and keeps its constants and signature.
#ifdef GW_HEADER_WITNESS
#include "gw_witness.h"

static_assert(sizeof(gw_witness) == 6 * 8 + 2 * 4 + 4 * GW_WITNESS_SM_WORDS, "gw_witness layout changed");

unsigned header_test_witness_arch_cpp(const gw_witness *w);
unsigned header_test_witness_arch_cpp(const gw_witness *w) { return gw_witness_arch_min(w); }
#else
#include "grid_d4.h"

static_assert(GRID_D4_ROT90 == 6 && GRID_D4_ROT270 == 5 && GRID_D4_CMIRROR == 7, "op codes differ from docs/grid_d4.md, Semantics");
static_assert(GRID_D4_MAX_DIM == 255, "GRID_D4_MAX_DIM is 255");
static_assert(sizeof(grid_d4_status_record) == 8, "the status record is one 64-bit word");

const char *header_test_status_cpp(grid_d4_status s);
const char *header_test_status_cpp(grid_d4_status s) { return grid_d4_status_str(s); }

#ifdef GW_HAVE_CUDA_RUNTIME
// The exact signature, seen from C++: a drifted declaration fails to compile.
extern "C" {
typedef cudaError_t (*header_test_launch_fn)(const grid_d4_params *, const uint8_t *, uint8_t *, const uint64_t *,
                                             const uint16_t *, const uint16_t *, uint16_t *, uint16_t *,
                                             const uint8_t *, grid_d4_status_record *, gw_witness *, cudaStream_t);
}
header_test_launch_fn header_test_launch_cpp();
header_test_launch_fn header_test_launch_cpp() { return grid_d4_launch; }
#endif
#endif
