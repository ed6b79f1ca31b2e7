/* SPDX-License-Identifier: MIT
 * Internals of the gpuwitness CLI shared by its command files (not a library API).
 * Every function returns a status up to main; nothing here calls exit().
 */
#ifndef GW_CLI_H
#define GW_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "grid_d4.h"
#include "gw_device.h"
#include "gw_witness.h"

#ifdef __cplusplus
extern "C" { /* gw_probe.cu is CUDA C++ */
#endif

/* Exit codes, the contract of specs/witness.md and specs/testing.md. */
enum {
    GW_EXIT_OK = 0,    /* everything asked for ran (on the GPU where one was asked for) and checked out */
    GW_EXIT_FAIL = 1,  /* mismatch, witness violation, CUDA error, bad input file, or no GPU under GW_REQUIRE_GPU=1 */
    GW_EXIT_USAGE = 2, /* bad command line */
    GW_EXIT_SKIP = 77  /* the GPU part was skipped: no usable GPU and none required */
};

int gw_cmd_doctor(int argc, char **argv);
int gw_cmd_check(int argc, char **argv);
int gw_cmd_run(int argc, char **argv);

/* ---- command-line helpers (gpuwitness.c) ---- */

/* Matches "--name VALUE" and "--name=VALUE" at argv[*i]; advances *i past the value.
 * Returns 1 on a match with *value set, 0 when argv[*i] is another argument, -1 when the value is missing
 * (message printed, naming the option). */
int gw_cli_option(int argc, char **argv, int *i, const char *cmd, const char *name, const char **value);

/* "cuda", "cuda:N", "cpu" or "auto". */
int gw_cli_device_spec_valid(const char *spec);

/* The device spec in effect: the --device value, else $GW_DEVICE, else "auto". */
const char *gw_cli_effective_device(const char *spec);

/* Resolves the device for command cmd (gw_device_resolve plus the CLI's exit codes). Returns 0 with *choice
 * set (kind CPU for "cpu", or for "auto" that fell back: choice->fell_back and choice->reason); GW_EXIT_SKIP
 * when cuda or cuda:N was asked for but no GPU is usable and GW_REQUIRE_GPU is not 1 (reason in
 * choice->reason, kind CPU); GW_EXIT_USAGE for a malformed spec and GW_EXIT_FAIL otherwise, both after
 * printing the error. */
int gw_cli_select_device(const char *cmd, const char *spec, gw_device_choice *choice);

double gw_cli_now_ms(void);

/* A whole number written in plain decimal digits (no sign, space or base prefix: strtoull alone accepts
 * " -1" as 2^64-1), at most max. 0 when it is one, -1 otherwise. */
int gw_cli_parse_u64(const char *text, unsigned long long max, unsigned long long *value);

/* ---- grid_d4 batches (gw_d4_batch.c) ---- */

/* A packed ragged batch as grid_d4 takes it, on the host. Outputs are separate (gw_d4_out). */
typedef struct gw_d4_batch {
    size_t n_grids;
    uint64_t buf_bytes;
    uint64_t cells; /* sum of height*width: the witness item count */
    int batch_op;   /* used when ops is NULL */
    uint8_t *in;
    uint64_t *offset;
    uint16_t *height, *width;
    uint8_t *ops; /* per-grid op codes, or NULL */
} gw_d4_batch;

typedef struct gw_d4_out {
    uint8_t *cells; /* buf_bytes */
    uint16_t *height, *width;
} gw_d4_out;

/* Allocates n grids' metadata and buf_bytes of cells (zeroed); 0 or -1 (out of memory). */
int gw_d4_batch_alloc(gw_d4_batch *b, size_t n_grids, uint64_t buf_bytes, int per_grid_ops);
void gw_d4_batch_free(gw_d4_batch *b);
int gw_d4_out_alloc(gw_d4_out *o, const gw_d4_batch *b);
void gw_d4_out_free(gw_d4_out *o);
/* Fills every output byte and shape with a poison value (cells: byte, shapes: 0xFFFF is out of range). */
void gw_d4_out_poison(gw_d4_out *o, const gw_d4_batch *b, uint8_t byte);

/* A random batch with shapes drawn from the ARC-AGI-1 training distribution, cells 0..9, and per-grid
 * random ops (per_grid_ops) or batch_op. aligned16: each grid starts on a 16-byte boundary (gaps between
 * grids), else grids are packed back to back. Deterministic for a seed. */
int gw_d4_batch_random(gw_d4_batch *b, size_t n_grids, uint64_t seed, int per_grid_ops, int batch_op,
                       int aligned16);

/* Compares got with the reference want: shapes, every grid's cells, and every gap byte (outside all grids)
 * must still be gap_byte, the poison got was filled with. 0 when identical, 1 with the first difference
 * and the count in msg, -1 out of memory. */
int gw_d4_out_compare(const gw_d4_out *got, const gw_d4_out *want, const gw_d4_batch *b, uint8_t gap_byte,
                      char *msg, size_t msg_size);

/* ---- grid_d4 on the GPU (gw_d4_gpu.c) ---- */

typedef struct gw_gpu_facts {
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    size_t total_mem;
} gw_gpu_facts;

/* Device properties; 0, or -1 with err naming the CUDA error. */
int gw_gpu_facts_get(int ordinal, gw_gpu_facts *f, char *err, size_t err_size);

typedef struct gw_d4_gpu_result {
    gw_witness witness;
    grid_d4_status status;   /* from the device status record */
    size_t status_index;
    double ms_end_to_end;    /* upload + poison + launch + download, host clock */
    double ms_kernel;        /* CUDA events around the launch (status reset, validation, transform) */
    int witness_violations;
    char witness_receipt[256];
    char witness_check[1024]; /* findings of gw_witness_check, empty when clean */
} gw_d4_gpu_result;

/* Device side of one batch: allocated once, then called any number of times. */
typedef struct gw_d4_gpu {
    int ordinal;
    gw_gpu_facts facts;
    void *stream; /* cudaStream_t, kept opaque so this header stays plain C */
    void *ev_start, *ev_stop;
    uint8_t *d_in, *d_out, *d_ops;
    uint64_t *d_offset;
    uint16_t *d_height, *d_width, *d_out_height, *d_out_width;
    grid_d4_status_record *d_status;
    gw_witness *d_witness;
} gw_d4_gpu;

/* cudaSetDevice(ordinal), then allocations sized for b. On error everything is freed. */
int gw_d4_gpu_init(gw_d4_gpu *g, int ordinal, const gw_d4_batch *b, char *err, size_t err_size);
/* One call: upload inputs, poison the device outputs with poison_byte (shapes 0xFFFF), zero the witness,
 * launch once, synchronise, read the status record and the witness, download into out (whose host bytes
 * are poisoned with ~poison_byte first, so a failed download cannot look right), and check the witness
 * against launches=1, items=b->cells and the device's architecture. Returns 0 when every CUDA call
 * succeeded (the status and the witness verdict are in res), -1 with err naming the CUDA error. */
int gw_d4_gpu_call(gw_d4_gpu *g, const gw_d4_batch *b, uint8_t poison_byte, gw_d4_out *out, gw_d4_gpu_result *res,
                   char *err, size_t err_size);
/* Frees everything (safe after a failed init); 0, or -1 with err (may be NULL) naming the first CUDA error. */
int gw_d4_gpu_free(gw_d4_gpu *g, char *err, size_t err_size);

/* ---- probe kernel (gw_probe.cu) ---- */

typedef struct gw_probe_info {
    int binary_version;   /* cudaFuncAttributes.binaryVersion, e.g. 90 */
    int ptx_version;      /* cudaFuncAttributes.ptxVersion */
    unsigned ran_arch;    /* __CUDA_ARCH__ of the code the probe kernel actually ran, e.g. 900 */
    int no_image;         /* set on failure when the binary has no code at all that this device can run */
} gw_probe_info;

/* On device ordinal: cudaFuncGetAttributes of a trivial kernel, then runs it once to learn which
 * compiled variant the driver picked. 0, or -1 with err naming the CUDA error. */
int gw_probe_native(int ordinal, gw_probe_info *info, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* GW_CLI_H */
