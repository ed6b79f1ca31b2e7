/* SPDX-License-Identifier: MIT
 * The commands of gpuwitness, each called by main with argv from its own name on; each returns an exit
 * code (gw_cli.h). They learn about kernels only through the kernel table (gw_kernel.h).
 */
#ifndef GW_COMMANDS_H
#define GW_COMMANDS_H

#include "gw_cli.h"

int gw_cmd_doctor(int argc, char **argv);
int gw_cmd_check(int argc, char **argv);
int gw_cmd_run(int argc, char **argv);
int gw_cmd_bench(int argc, char **argv);
int gw_cmd_trace(int argc, char **argv);
int gw_cmd_synth(int argc, char **argv);

/* doctor's CUPTI and NVTX lines (gw_ledger_doctor.c): CUPTI's version and, when a GPU is usable, whether an
 * activity recording can start here (else why not); whether NVTX has a tool attached. */
void gw_doctor_ledger(int gpu_usable);

#endif /* GW_COMMANDS_H */
