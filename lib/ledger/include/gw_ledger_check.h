/* SPDX-License-Identifier: MIT
 * The driver-level ledger (docs/witness.md, "Layer 3: the ledger"), pure C: the activity records the CUPTI
 * recorder (gw_ledger.h) fills, and the budget check that compares them with what one call should have done:
 * the expected kernels and launch counts, exactly the expected host-to-device and device-to-host copies,
 * nothing else. No CUDA here, so the check is unit-tested on hand-made records on machines without a GPU.
 *
 *   gw_kernel_expect kernels[] = {{"grid_d4_validate_kernel", 1}, {"grid_d4_transform_kernel", 1}};
 *   gw_copy_expect copies[] = {{GW_COPY_HTOD, in_bytes, "in"}, {GW_COPY_DTOH, out_bytes, "out"}};
 *   gw_ledger_budget budget = {kernels, 2, copies, 2};
 *   if (gw_ledger_check(&log, &budget, msg, sizeof msg)) ... msg explains every violation, one per line
 */
#ifndef GW_LEDGER_CHECK_H
#define GW_LEDGER_CHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gw_activity_kind {
    GW_ACTIVITY_KERNEL = 1, /* a kernel that ran on the device */
    GW_ACTIVITY_COPY,       /* a memcpy the device (or its copy engines) executed */
    GW_ACTIVITY_RANGE       /* one of our NVTX ranges, timed on the host (gw_trace_range.h) */
} gw_activity_kind;

typedef enum gw_copy_kind {
    GW_COPY_HTOD = 1, /* host to device */
    GW_COPY_DTOH,     /* device to host */
    GW_COPY_DTOD,     /* device to device, same device */
    GW_COPY_HTOH,     /* host to host through the CUDA API */
    GW_COPY_OTHER     /* arrays, peer to peer, anything else */
} gw_copy_kind;

enum { GW_ACTIVITY_NAME_SIZE = 256 };

/* One record. Times are CUPTI's clock in ns (0 when CUPTI could not time it). */
typedef struct gw_activity {
    gw_activity_kind kind;
    char name[GW_ACTIVITY_NAME_SIZE]; /* kernel: the name CUPTI gives (usually mangled); range: its name */
    gw_copy_kind copy_kind;           /* copies only */
    uint64_t bytes;                   /* copies only */
    uint64_t start_ns, end_ns;
    uint32_t device_id, stream_id; /* kernels and copies */
    int32_t grid[3], block[3];     /* kernels only */
    int depth;                     /* ranges only: nesting depth, 0 outermost */
    long iteration;                /* the trace schedule's iteration, -1 outside a schedule */
} gw_activity;

/* A growable array of records. Zero-initialise; free with gw_activity_log_free. */
typedef struct gw_activity_log {
    gw_activity *items;
    size_t count, capacity;
    uint64_t dropped; /* records CUPTI dropped or we could not store: the ledger is then incomplete */
} gw_activity_log;

/* Appends a copy of a; 0, or -1 when out of memory (then dropped is incremented instead). */
int gw_activity_log_push(gw_activity_log *log, const gw_activity *a);
void gw_activity_log_free(gw_activity_log *log);

typedef struct gw_kernel_expect {
    const char *name;  /* the kernel's identifier as written in the source, e.g. "grid_d4_transform_kernel" */
    uint64_t launches; /* exactly this many launches */
} gw_kernel_expect;

typedef struct gw_copy_expect {
    gw_copy_kind kind;
    uint64_t bytes;
    const char *what; /* names the buffer in messages, e.g. "in" */
} gw_copy_expect;

/* What one call may do on the device. Every kernel and copy in the log must be in the budget, and every
 * budget entry must be in the log, as often as listed (copies are matched one to one by direction and
 * size). Ranges are not budgeted. */
typedef struct gw_ledger_budget {
    const gw_kernel_expect *kernels;
    size_t n_kernels;
    const gw_copy_expect *copies;
    size_t n_copies;
} gw_ledger_budget;

/* Compares log with budget. Writes one line per violation into msg (always NUL-terminated; may be NULL
 * when msg_size is 0) and returns their number; 0 means the log is exactly the budget. Unexpected copies
 * in both directions are also named a round trip through the host, the signature of "copy back, compute
 * on the CPU, upload the result". Returns -1 (and says so in msg) when the budget's own arrays are bad. */
int gw_ledger_check(const gw_activity_log *log, const gw_ledger_budget *budget, char *msg, size_t msg_size);

/* The source identifier in a kernel name as CUPTI reports it, into out (NUL-terminated):
 * "grid_d4_transform_kernel" from "_Z24grid_d4_transform_kernelmmiPKh..." (Itanium C++ mangling, which
 * nvcc uses for every __global__ function not declared extern "C"), from "_ZN..._INTERNAL_..4name...E..."
 * (nested names, static kernels: the innermost name), from a demangled "name(args)" or from a plain C
 * name. Returns out. */
const char *gw_kernel_base_name(const char *recorded, char *out, size_t out_size);

/* "host-to-device", "device-to-host", ...; and the short "HtoD", "DtoH", ... used in traces. */
const char *gw_copy_kind_text(gw_copy_kind kind);
const char *gw_copy_kind_short(gw_copy_kind kind);

/* One line: "ledger: 2 kernels (grid_d4_validate_kernel x1, ...), 5 host-to-device copies (1234 bytes),
 * 5 device-to-host copies (5678 bytes)" of what the log holds. */
void gw_ledger_format(const gw_activity_log *log, char *buf, size_t buf_size);

#ifdef __cplusplus
}
#endif

#endif /* GW_LEDGER_CHECK_H */
