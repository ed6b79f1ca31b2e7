/* SPDX-License-Identifier: MIT
 * The ledger's recorder: CUPTI activity records of what the device did between gw_ledger_begin and
 * gw_ledger_end (kernels through CONCURRENT_KERNEL, which does not serialise them; memcpys), plus our
 * NVTX ranges (gw_trace_range.h) timed on the host with CUPTI's clock while recording. Check the result
 * with gw_ledger_check (gw_ledger_check.h), or write it as a trace (gw_trace.h).
 *
 *   char why[256];
 *   if (gw_ledger_begin(why, sizeof why) == GW_LEDGER_UNAVAILABLE) ... report "unavailable: <why>", skip
 *   ... the call: upload, launch, download ...
 *   gw_activity_log log = {0};
 *   if (gw_ledger_end(&log, why, sizeof why) != GW_LEDGER_OK) ... fail with why
 *
 * CUPTI (through CUDA 13.2) takes one subscriber per process: under compute-sanitizer, Nsight Systems or
 * Nsight Compute, or without a usable driver, gw_ledger_begin reports GW_LEDGER_UNAVAILABLE with CUPTI's
 * reason. That is never a pass: tests skip, the CLI says so. One recording at a time per process.
 * Kernel names are recorded as CUPTI gives them, mangled for CUDA C++; gw_kernel_base_name compares
 * them with the source names.
 */
#ifndef GW_LEDGER_H
#define GW_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "gw_ledger_check.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gw_ledger_status {
    GW_LEDGER_OK = 0,
    GW_LEDGER_UNAVAILABLE = 1, /* CUPTI could not start: not a pass, not a failure of the code under test */
    GW_LEDGER_FAILED = 2       /* misuse, or the recording broke after it started */
} gw_ledger_status;

/* Starts recording (registering CUPTI's buffer callbacks on first use). UNAVAILABLE or FAILED with the
 * reason in why ("cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_..."); nothing is left enabled. */
gw_ledger_status gw_ledger_begin(char *why, size_t why_size);

/* Synchronises the current device (so every recorded launch and copy has finished), flushes CUPTI's
 * buffers, stops recording and appends the records to log (ranges still open are cut here). OK, or
 * FAILED with why; the records gathered so far are appended either way. */
gw_ledger_status gw_ledger_end(gw_activity_log *log, char *why, size_t why_size);

/* Begin and end with nothing between: whether a ledger can be recorded here. OK or UNAVAILABLE/FAILED. */
gw_ledger_status gw_ledger_probe(char *why, size_t why_size);

/* CUPTI's clock in ns (the records' time base); 0 when CUPTI cannot read it. */
uint64_t gw_ledger_now(void);

/* The CUPTI API version of the loaded library (cuptiGetVersion), 0 when it cannot be read. */
uint32_t gw_ledger_cupti_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GW_LEDGER_H */
