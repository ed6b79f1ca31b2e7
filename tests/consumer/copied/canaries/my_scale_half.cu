/* SPDX-License-Identifier: MIT
 * Canary for docs/guard-your-kernel.md: a launcher that does only the first half of the work (the fault an
 * off-by-one grid size causes) and still returns success. The test is built against it with
 * -Dmy_scale_launch=canary_my_scale_launch; its witness check must fail with "partial execution".
 */
#include "my_scale.h"

extern "C" cudaError_t canary_my_scale_launch(const my_scale_params *p, const float *d_in, float *d_out,
                                              gw_witness *d_witness, cudaStream_t stream)
{
    if (!p) return cudaErrorInvalidValue;
    my_scale_params half = *p;
    half.n = p->n / 2;
    return my_scale_launch(&half, d_in, d_out, d_witness, stream);
}
