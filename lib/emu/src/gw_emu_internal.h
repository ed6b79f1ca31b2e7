/* SPDX-License-Identifier: MIT
 * Between the emulator's runtime (gw_emu_runtime.c: memory, the queue, streams, errors) and its executor
 * (gw_emu_block.c: blocks, fibers, barriers, warps). Private to lib/emu.
 */
#ifndef GW_EMU_INTERNAL_H
#define GW_EMU_INTERNAL_H

#include <stddef.h>

#include "gw_emu.h"

/* Runs the launch's blocks in the order drawn from the seed, the first `blocks` of that order (all of them, or
 * fewer for a planted fault); the runtime holds its lock: one launch at a time in the process, so a static
 * __shared__ variable is the one block's. 0, or -1 with the device error in why. */
int gw_emu_run(const gw_emu_launch_desc *d, unsigned long long blocks, char *why, size_t why_size);

/* cudaDeviceReset: the launches are counted from 0 again, so that a seed draws the same interleavings. */
void gw_emu_reset_launches(void);

#endif /* GW_EMU_INTERNAL_H */
