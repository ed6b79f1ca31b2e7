/* SPDX-License-Identifier: MIT
 * Host-side check of a gw_witness record (kernels/gw_witness.h) against what a call should have produced.
 * Plain C, no CUDA: the caller supplies the device facts it knows (compute capability, SM count).
 * Used by the tests and the gpuwitness CLI; not part of any kernel.
 */
#ifndef GW_WITNESS_CHECK_H
#define GW_WITNESS_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "gw_witness.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_witness_expect {
    uint64_t launches;     /* launches the call makes (at least 1 for a GPU call) */
    uint64_t items;        /* outputs the call must produce on the GPU */
    unsigned device_arch;  /* the device's compute capability as __CUDA_ARCH__ (major*100 + minor*10); 0 skips */
    unsigned device_sms;   /* multiprocessor count, for the one-SM warning; 0 skips */
    int emulated;          /* 1: the call ran on gpuwitness' emulated device (lib/emu), whose record says arch 0;
                            * 0: a GPU run, and a record from the emulated device is a violation */
} gw_witness_expect;

/* Writes one line per finding into msg (always NUL-terminated, may be NULL when msg_size is 0):
 * violations first, then warnings prefixed "warning: ". Returns the number of violations; 0 means the
 * record proves the expected GPU execution (warnings do not count). A NULL rec or expect is one violation.
 * A record that only device code writes has a start time and a multiprocessor for every block: an empty SM
 * mask or a zero start time is a violation (a record made on the host). A record from the emulated device
 * (architecture 0) passes only when expect->emulated says that is what ran, and is then never a GPU run. */
int gw_witness_check(const gw_witness *rec, const gw_witness_expect *expect, char *msg, size_t msg_size);

/* The receipt, one line: launches, blocks, items, arch, SMs used and device time ("none" for a NULL rec). */
void gw_witness_format(const gw_witness *rec, char *buf, size_t buf_size);

/* 1 when the record comes from gpuwitness' emulated device (it recorded architecture 0), else 0. */
int gw_witness_emulated(const gw_witness *rec);

/* Number of distinct multiprocessors in sm_mask. */
unsigned gw_witness_sm_count(const gw_witness *rec);

#ifdef __cplusplus
}
#endif

#endif /* GW_WITNESS_CHECK_H */
