/* SPDX-License-Identifier: MIT
 * The benchmark framework of `gpuwitness bench` (not a library API). The method and every JSON key are in
 * docs/benchmarks.md.
 *
 * A run (gw_bench_run) holds the options, the GPU context (NULL when the GPU part is skipped), the
 * measured copy roofline and the JSON rows recorded so far. Each kernel's bench hook
 * (tools/gpuwitness/kernels/<kernel>/<kernel>_bench.c) runs its cases for the size tier and records one row
 * per (kernel, case, implementation) with gw_bench_record; cmd_bench.c walks the kernel table.
 */
#ifndef GW_BENCH_H
#define GW_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "gw_cli.h"
#include "gw_cli_monitor.h"
#include "gw_npy.h"
#include "gw_trace_schedule.h"
#include "gw_witness.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gw_bench_tier {
    GW_BENCH_SMOKE = 0,   /* tiny: the CTest smoke runs */
    GW_BENCH_SMALL = 1,
    GW_BENCH_REALISTIC = 2, /* the default: each spec's realistic case */
    GW_BENCH_FULL = 3       /* the largest realistic batches (grid_d4 4e6 grids, focus_stack N=16) */
} gw_bench_tier;

#define GW_BENCH_WARMUP 3      /* untimed calls before every timed loop: module load, first touch */
#define GW_BENCH_METHOD_REPS 20 /* docs/benchmarks.md: the median of at least this many repetitions */

/* Times in milliseconds; count 0 means not measured (null in the JSON). */
typedef struct gw_bench_stats {
    int count;
    double min, median, max;
} gw_bench_stats;

/* Sorts ms[0..count) and fills s (median of an even count: the mean of the middle two). */
void gw_bench_stats_from(double *ms, int count, gw_bench_stats *s);

/* Times fn(ctx) reps times on the host clock; returns 0, or fn's first non-zero status (s then unset). */
int gw_bench_cpu_time(int reps, int (*fn)(void *ctx), void *ctx, gw_bench_stats *s);

/* ---- the GPU side (gw_bench_gpu.c, gw_bench_cub.cu, gw_bench_fp64.cu) ---- */

typedef struct gw_bench_gpu {
    int ordinal;
    gw_gpu_facts facts;
    size_t l2_bytes;
    int driver_version, runtime_version; /* cudaDriverGetVersion, cudaRuntimeGetVersion */
    void *flush;                         /* device buffer of flush_bytes: memset between repetitions */
    size_t flush_bytes;
} gw_bench_gpu;

/* cudaSetDevice, device facts, the L2 flush buffer (twice the L2 size). 0, or -1 with err. */
int gw_bench_gpu_open(gw_bench_gpu *g, int ordinal, char *err, size_t err_size);
/* 0, or -1 with err (may be NULL) naming the first CUDA error. */
int gw_bench_gpu_close(gw_bench_gpu *g, char *err, size_t err_size);

/* One timed loop. prepare enqueues the untimed set-up of repetition rep on stream (rep < 0: a warm-up
 * call): poisoning outputs, resetting the witness; it may be NULL. launch enqueues the timed work only. */
typedef struct gw_bench_loop {
    void *ctx;
    void *stream; /* cudaStream_t, opaque so that this header stays plain C */
    int reps;
    int (*prepare)(void *ctx, int rep, char *err, size_t err_size);
    int (*launch)(void *ctx, char *err, size_t err_size);
} gw_bench_loop;

/* The one timing loop of the method, kept in one function so that a tracer can wrap it: GW_BENCH_WARMUP
 * calls (prepare, launch), then reps times: prepare, an L2 flush, a start event, launch, a stop event;
 * one synchronisation at the end. ms gets min / median / max of the event times. 0, or -1 with err. */
int gw_bench_gpu_time(gw_bench_gpu *g, const gw_bench_loop *loop, gw_bench_stats *ms, char *err, size_t err_size);

/* The physical limit measured in this run: a device-to-device cudaMemcpyAsync of buffer_bytes, timed like
 * every case; gbps counts the bytes read plus the bytes written, over the median time. */
typedef struct gw_bench_roofline {
    size_t buffer_bytes;
    gw_bench_stats ms;
    double gbps;
} gw_bench_roofline;

int gw_bench_gpu_roofline(gw_bench_gpu *g, int reps, gw_bench_roofline *r, char *err, size_t err_size);

/* The FP64 rate reference of FP64-heavy kernels (gw_bench_fp64.cu): a kernel of independent FP64 FMA
 * chains over every SM, timed like every case; gflops counts 2 FLOPs per FMA over the median time. */
typedef struct gw_bench_fp64_rate {
    double flops; /* per call */
    gw_bench_stats ms;
    double gflops;
} gw_bench_fp64_rate;

int gw_bench_gpu_fp64_rate(gw_bench_gpu *g, int reps, gw_bench_fp64_rate *r, char *err, size_t err_size);

/* cub::DeviceMemcpy::Batched over n ragged buffers: src + offset[k] to dst + offset[k], size[k] bytes
 * each. Pointer and size arrays and the temporary storage are made by _init, before any timing. */
typedef struct gw_bench_cub_batched {
    void *d_src_ptrs, *d_dst_ptrs, *d_sizes, *d_temp;
    size_t temp_bytes, n;
} gw_bench_cub_batched;

int gw_bench_cub_batched_init(gw_bench_cub_batched *c, const uint8_t *d_src, uint8_t *d_dst, const uint64_t *offset,
                              const uint16_t *height, const uint16_t *width, size_t n, void *stream, char *err,
                              size_t err_size);
int gw_bench_cub_batched_launch(gw_bench_cub_batched *c, void *stream, char *err, size_t err_size);
int gw_bench_cub_batched_free(gw_bench_cub_batched *c, char *err, size_t err_size);

/* ---- one benchmark run ---- */

/* --trace FILE: a Chrome trace of one extra end-to-end loop of the first GPU case, run after its timed loops
 * (gw_bench_gpu_loops): timings taken while CUPTI records are not benchmark numbers, so none are taken. */
typedef enum gw_bench_trace_status {
    GW_BENCH_TRACE_PENDING, /* no GPU case has finished its timed loops yet */
    GW_BENCH_TRACE_WRITTEN,
    GW_BENCH_TRACE_SKIPPED, /* no GPU case ran, or CUPTI unavailable: nothing written, exit 77 */
    GW_BENCH_TRACE_FAILED   /* the trace could not be recorded or written: exit 1 */
} gw_bench_trace_status;

typedef struct gw_bench_trace {
    const char *path; /* NULL: no trace asked for */
    gw_trace_schedule schedule;
    gw_bench_trace_status status;
    char traced[192];  /* the case traced: "grid_d4 arc-n1000-rot90", or empty */
    char reason[1024]; /* why it was skipped or failed, or empty */
} gw_bench_trace;

typedef struct gw_bench_run {
    gw_bench_tier tier;
    const char *tier_name;
    int reps, cpu_reps;
    uint64_t seed;
    const char *dump_dir;   /* --dump-inputs, or NULL */
    gw_bench_gpu *gpu;      /* NULL: the GPU part is skipped */
    char gpu_skip_reason[512];
    gw_bench_roofline roofline; /* valid when gpu */
    gw_bench_fp64_rate fp64;    /* the FP64 rate reference; gflops 0 until an FP64-heavy case measures it */
    cJSON *measurements;    /* the rows recorded so far */
    cJSON *dumped;          /* manifest entries of --dump-inputs */
    int failures;           /* rows with an error */
    double t0_ms;           /* for the progress lines */
    gw_bench_trace trace;   /* --trace */
    const gw_cli_monitor *monitor; /* the NVML sampler (docs/monitor.md); NULL: no monitor object in the rows */
    uint64_t monitor_mark_us;      /* where the next row's window starts: the previous row's record */
} gw_bench_run;

/* One measured (kernel, case, implementation). Fill it, then hand it to gw_bench_record. */
typedef struct gw_bench_row {
    const char *kernel;         /* "grid_d4" */
    char case_id[96];           /* stable and file-name safe: "arc-n1000000-rot90" */
    char label[160];            /* for people */
    const char *implementation; /* "grid_d4_launch", "cub::DeviceMemcpy::Batched", ... */
    int is_kernel;              /* 1: our kernel (the guard applies); 0: a baseline in the same run */
    cJSON *params;              /* case parameters; owned by the row, taken by gw_bench_record */
    double work;                /* grids, voxels, ...: work_unit */
    const char *work_unit;
    uint64_t bytes_moved;       /* each input read once, each output written once */
    double flops;               /* FP64-heavy kernels: FLOPs of one call (a model, docs/benchmarks.md); 0: none.
                                   Such a row is compute-bound: --min-roofline reads its % of the FP64 rate */
    double cpu_1t_work;         /* work of the single-threaded reference when it runs a subset; 0: all of work */
    gw_bench_stats kernel_ms, kernel_no_witness_ms, end_to_end_ms, cpu_1t_ms, cpu_mt_ms;
    int cpu_mt_threads;         /* 0: no multithreaded figure */
    int gpu_ran;                /* the GPU part ran to the end */
    int validated;              /* -1 not checked (no GPU), 0 mismatch, 1 outputs equal the reference */
    char witness[256];          /* the receipt of the last timed loop, or empty */
    char error[768];            /* the first thing that went wrong, or empty */
} gw_bench_row;

/* Starts a row of kernel measured through implementation (fields zeroed, validated -1). */
void gw_bench_row_init(gw_bench_row *row, const char *kernel, const char *implementation, int is_kernel);
/* Sets row->error once (the first problem is the one to report); later calls are ignored. */
void gw_bench_row_fail(gw_bench_row *row, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Derives GB/s, % of roofline, overhead and speedups, adds the "monitor" object (NVML's samples and our
 * device memory high-water since the previous row was recorded: this row's case), appends the row to
 * run->measurements, prints one result line (and a "monitor:" line), counts a failure when row->error is set, and takes row->params. Returns 0, -1 out of memory. */
int gw_bench_record(gw_bench_run *run, gw_bench_row *row);

/* A kernel's cases for one tier: count elements of the case type of its bench_<kernel>.c. */
typedef struct gw_bench_cases {
    const void *cases;
    size_t count;
} gw_bench_cases;
#define GW_BENCH_CASES(array) {(array), sizeof(array) / sizeof(array)[0]}

/* Runs one_case on each case of by_tier[run->tier] (indexed by gw_bench_tier, elements of case_size bytes)
 * in order, so that every kernel maps the tiers to its case tables the same way. 0, or -1 as soon as
 * one_case returns non-zero (the run cannot go on). */
int gw_bench_run_cases(gw_bench_run *run, const gw_bench_cases by_tier[4], size_t case_size,
                       int (*one_case)(gw_bench_run *run, const void *c));

/* The GPU loops of every kernel case, in the order they run: end to end first (it uploads the inputs that
 * the kernel-only loops then find on the device), then the kernel with the witness and without it. */
typedef enum gw_bench_mode { GW_BENCH_END_TO_END, GW_BENCH_KERNEL, GW_BENCH_KERNEL_NO_WITNESS } gw_bench_mode;

/* A kernel case's side of gw_bench_gpu_loops. */
typedef struct gw_bench_case_gpu {
    const char *what;   /* the kernel in progress lines: "grid_d4" */
    const char *detail; /* after the loop name in progress lines: ", max_batch 64", or "" */
    void *ctx;
    /* Sets ctx up for mode's loop (host buffers it downloads into poisoned) and returns the loop to time. */
    gw_bench_loop (*start)(void *ctx, gw_bench_mode mode, int reps);
    /* After a timed loop: the outputs against the reference and the witness; failures go to row. */
    void (*verify)(void *ctx, gw_bench_row *row, const char *loop_name);
} gw_bench_case_gpu;

/* Times the three loops into row's end_to_end_ms, kernel_ms and kernel_no_witness_ms, each after a progress
 * line and followed by verify, until the row fails; sets row->gpu_ran. Under --trace, the first case whose
 * loops succeed then runs one more, untimed, end-to-end loop of wait + warmup + active iterations under
 * CUPTI, verified like the others ("traced loop": a failure fails row), and writes run->trace.path. */
void gw_bench_gpu_loops(gw_bench_run *run, const gw_bench_case_gpu *k, gw_bench_row *row);

/* After a timed loop of a kernel with one witness record: w must prove reps launches of items each on the
 * device of facts, or row fails; its receipt goes to row->witness either way. */
void gw_bench_witness_verify(gw_bench_row *row, const char *loop_name, const gw_witness *w, int reps, uint64_t items,
                             const gw_gpu_facts *facts);

/* "bench [12.3 s] grid_d4 ...": one line on stderr per step of a case, so a long run shows where it is. */
void gw_bench_progress(const gw_bench_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Under --dump-inputs: creates DIR/<kernel>.<case_id>/ and fills path (the directory) for the case's files.
 * 0; 1 when not dumping; -1 with err. */
int gw_bench_dump_dir(const gw_bench_run *run, const char *kernel, const char *case_id, char *path, size_t size,
                      char *err, size_t err_size);
/* Writes dir/<prefix><key>.npy and lists it in files as key: "<prefix><key>.npy". 0, or -1 with err. */
int gw_bench_dump_npy(const char *dir, const char *prefix, const char *key, gw_npy_dtype dtype, int ndim,
                      const int64_t *shape, const void *data, cJSON *files, char *err, size_t err_size);
/* Ends a case's dump. rc 0: adds the case to the manifest, where inputs and reference (taken) map names to
 * file names inside the case directory; rc != 0: frees them and fails row with err. Out of memory fails row. */
void gw_bench_dump_finish(gw_bench_run *run, gw_bench_row *row, int rc, cJSON *inputs, cJSON *reference,
                          const char *err);

/* The "monitor" object of a row for the window [t0_us, t1_us] (keys: docs/monitor.md); m NULL or off gives
 * status "off". text (may be NULL) gets the dmon-like line. */
cJSON *gw_bench_monitor_json(const gw_cli_monitor *m, uint64_t t0_us, uint64_t t1_us, char *text, size_t text_size);

/* The Markdown table of every recorded row, on stdout. */
void gw_bench_print_table(const gw_bench_run *run);
/* The regression guard over the kernel rows that ran on the GPU; a bound < 0 is not requested. Returns the
 * JSON "guard" object (NULL: out of memory); *failed is 1 when a row is below a bound. */
cJSON *gw_bench_guard(const gw_bench_run *run, double min_speedup, double min_roofline, int *failed);

/* Threads the multithreaded CPU references get: OpenMP's default team size (1 without OpenMP). */
int gw_bench_cpu_threads(void);
/* The "environment" object: GPU, CUDA versions, CPU, build, git commit (gw_bench_env.c). */
cJSON *gw_bench_environment(const gw_bench_run *run);

/* --html (gw_bench_html.c): the page is made by bench/report.py (Python 3, matplotlib, Jinja2), run by
 * python3: $GW_PYTHON, else /usr/bin/python3 (Debian's, where the packages go), else python3 on PATH; the script
 * is $GW_BENCH_REPORT, else GW_REPORT_RELPATH from the directory of this executable (share/gpuwitness/report.py
 * beside bin/ when installed; the build tree holds a copy at the same place relative to tools/). */
typedef struct gw_bench_html {
    char python[4096], script[4096];
} gw_bench_html;
/* Finds both and checks that the script's imports work, before any work. 0, or -1 with err naming what is
 * missing (python3, report.py, or the modules with their Debian packages). */
int gw_bench_html_prepare(gw_bench_html *h, char *err, size_t err_size);
/* Runs report.py --check on the bench result at json_path (the --baseline), its refusal on stderr: 0 when
 * the page can be made from it, -1 with err otherwise. */
int gw_bench_html_check(const gw_bench_html *h, const char *json_path, char *err, size_t err_size);

/* Runs report.py on the bench JSON text (fed on its stdin), with an optional baseline file, its page going to
 * out_fd (a staged gw_outfile). 0, or -1 with err. */
int gw_bench_html_render(const gw_bench_html *h, const char *json_text, const char *baseline, int out_fd, char *err,
                         size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* GW_BENCH_H */
