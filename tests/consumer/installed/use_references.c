/* SPDX-License-Identifier: MIT
 * The CPU half of an installed gpuwitness, as a downstream program uses it (docs/install.md): the grid_d4
 * reference and validator, and the witness check, through the installed headers and libraries.
 * Exit status: 0 every check passed, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "grid_d4_ref.h"
#include "gw_witness_check.h"

int main(void)
{
    int bad = 0;
    /* The example of grid_d4.h on the CPU: a 2x3 grid turned clockwise. */
    const uint8_t in[6] = {1, 2, 3, 4, 5, 6};
    const uint64_t offset[1] = {0};
    const uint16_t height[1] = {2}, width[1] = {3};
    uint8_t out[6] = {0};
    uint16_t out_height[1] = {0}, out_width[1] = {0};
    const grid_d4_params p = {.n_grids = 1, .buf_bytes = 6, .batch_op = GRID_D4_ROT90, .flags = 0};
    static const uint8_t want[6] = {4, 1, 5, 2, 6, 3};
    int rc = grid_d4_ref(&p, in, out, offset, height, width, out_height, out_width, NULL);
    if (rc != GRID_D4_OK || memcmp(out, want, sizeof want) != 0 || out_height[0] != 3 || out_width[0] != 2) {
        fprintf(stderr, "grid_d4_ref: status %d, result {%u,%u, %u,%u, %u,%u} in %ux%u; want {4,1, 5,2, 6,3} in 3x2\n",
                rc, out[0], out[1], out[2], out[3], out[4], out[5], out_height[0], out_width[0]);
        bad = 1;
    }

    /* The validator names the rule a batch breaks: a grid that runs past the end of the buffer. */
    const uint64_t past_end[1] = {1};
    size_t bad_index = 99;
    grid_d4_status s = grid_d4_validate(&p, in, out, past_end, height, width, out_height, out_width, NULL, &bad_index);
    if (s != GRID_D4_ERR_BOUNDS || bad_index != 0) {
        fprintf(stderr, "grid_d4_validate: got '%s' at grid %zu, want the bounds rule at grid 0\n",
                grid_d4_status_str(s), bad_index);
        bad = 1;
    }

    /* A zeroed record is what a CPU fallback leaves behind: the check must refuse it in words. */
    const gw_witness nothing = {0};
    const gw_witness_expect expect = {.launches = 1, .items = 6, .device_arch = 900, .device_sms = 0};
    char findings[512];
    if (gw_witness_check(&nothing, &expect, findings, sizeof findings) == 0 ||
        !strstr(findings, "no GPU code ran")) {
        fprintf(stderr, "gw_witness_check accepted an empty record or did not say why:\n%s\n", findings);
        bad = 1;
    }
    if (!bad) printf("installed references and witness check: ok\n");
    return bad;
}
