/* SPDX-License-Identifier: MIT
 * doctor's lines for the second witness: whether CUPTI can record a ledger here, and whether NVTX has a
 * tool attached. Neither decides doctor's exit status: the ledger is optional evidence (docs/witness.md,
 * layer 3), reported unavailable when it cannot run, never passed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gw_cli.h"
#include "gw_commands.h"
#include "gw_ledger.h"

void gw_doctor_ledger(int gpu_usable)
{
    const uint32_t version = gw_ledger_cupti_version();
    char api[48];
    if (version)
        snprintf(api, sizeof api, "API %u", (unsigned)version);
    else
        snprintf(api, sizeof api, "version unknown (cuptiGetVersion failed)");
    if (gw_cli_emulated()) { /* the emulated device's kernels and copies never reach CUPTI */
        printf("  CUPTI:                %s; not used: the emulated device has no GPU activity to record (trace and "
               "bench --trace skip)\n", api);
    } else if (!gpu_usable) {
        printf("  CUPTI:                %s; ledger not tried: no usable GPU\n", api);
    } else {
        char why[512];
        const gw_ledger_status st = gw_ledger_probe(why, sizeof why);
        if (st == GW_LEDGER_OK)
            printf("  CUPTI:                %s; usable: kernel and copy activity can be recorded (ledger, trace)\n",
                   api);
        else
            printf("  CUPTI:                %s; unavailable: %s (ledger checks are reported unavailable, never "
                   "passed)\n", api, why);
    }
    /* NVTX3 is header-only: the ranges are compiled in and cost nothing until a tool injects itself. */
    const char *injection = getenv("NVTX_INJECTION64_PATH");
    if (injection && *injection)
        printf("  NVTX:                 nvtx3 ranges compiled in; a tool is attached (NVTX_INJECTION64_PATH=%s)\n",
               injection);
    else
        printf("  NVTX:                 nvtx3 ranges compiled in; no tool attached (nsys/ncu show them, trace "
               "records them)\n");
}
