/* SPDX-License-Identifier: MIT
 * The CLI core: exit codes, option parsing, the --device policy, the clock, device facts and the native-code
 * probe. Linked by the commands, the kernels' CLI glue and the tests (the gw_cli_core library); it calls no
 * command and no kernel. Every function returns a status up to main; nothing here calls exit().
 */
#ifndef GW_CLI_H
#define GW_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "gw_device.h"

#ifdef __cplusplus
extern "C" { /* gw_probe.cu is CUDA C++ */
#endif

/* Exit codes, the contract of docs/witness.md and docs/testing.md. */
enum {
    GW_EXIT_OK = 0,    /* everything asked for ran (on the GPU where one was asked for) and checked out */
    GW_EXIT_FAIL = 1,  /* mismatch, witness violation, CUDA error, bad input file, or no GPU under GW_REQUIRE_GPU=1 */
    GW_EXIT_USAGE = 2, /* bad command line */
    GW_EXIT_SKIP = 77  /* the GPU part was skipped: no usable GPU and none required */
};

/* ---- command-line helpers (gw_cli.c) ---- */

/* Matches "--name VALUE" and "--name=VALUE" at argv[*i]; advances *i past the value.
 * Returns 1 on a match with *value set, 0 when argv[*i] is another argument, -1 when the value is missing
 * (message printed, naming the option). */
int gw_cli_option(int argc, char **argv, int *i, const char *cmd, const char *name, const char **value);

/* The device spec in effect: the --device value, else $GW_DEVICE, else "auto". */
const char *gw_cli_effective_device(const char *spec);

/* Resolves the device for command cmd (gw_device_resolve plus the CLI's exit codes). Returns 0 with *choice
 * set (kind CPU for "cpu", or for "auto" that fell back: choice->fell_back and choice->reason); GW_EXIT_SKIP
 * when cuda or cuda:N was asked for but no GPU is usable and GW_REQUIRE_GPU is not 1 (reason in
 * choice->reason, kind CPU); GW_EXIT_USAGE for a malformed spec and GW_EXIT_FAIL otherwise, both after
 * printing the error. */
int gw_cli_select_device(const char *cmd, const char *spec, gw_device_choice *choice);

double gw_cli_now_ms(void);

/* The most threads any CPU path of the CLI runs (--threads' limit, and OMP_NUM_THREADS's here). */
#define GW_CLI_MAX_THREADS 1024

/* Caps the OpenMP team size that OMP_NUM_THREADS asks for at GW_CLI_MAX_THREADS, saying so on stderr: libgomp
 * starts every thread asked for and, at tens of thousands, fails or crashes inside the first parallel region.
 * Called once by main, before any command. */
void gw_cli_cap_openmp_threads(void);

/* A whole number written in plain decimal digits (no sign, space or base prefix: strtoull alone accepts
 * " -1" as 2^64-1), at most max. 0 when it is one, -1 otherwise. */
int gw_cli_parse_u64(const char *text, unsigned long long max, unsigned long long *value);

/* "FIRST:COUNT": two whole numbers in plain decimal digits, COUNT >= 1 and FIRST + COUNT within int. 0 when
 * text is one, -1 otherwise (the caller names the option and what the range selects). */
int gw_cli_parse_range(const char *text, int *first, int *count);

/* Each line of text (newline-separated; cut up in place) on its own line of out after prefix. */
void gw_cli_print_lines(FILE *out, char *text, const char *prefix);

/* The witness verdict of a `run` command's GPU call: with violations, each finding on stderr after
 * "CMD: witness violation: " and the refusal ("nothing written"), GW_EXIT_FAIL; otherwise any findings
 * (warnings) on stdout after "  witness ", GW_EXIT_OK. findings is cut up. */
int gw_cli_run_witness(const char *cmd, char *findings, int violations);

/* A single witnessed call's lines, as doctor prints them under indent: its receipt, then every finding of the
 * witness check ("witness check: violation: ..." when the call broke a rule, "witness check: ..." for a
 * warning), or, when there is none, "witness check: ok (1 launch, ITEMS items, ...)". findings is cut up. */
void gw_cli_print_call_witness(const char *indent, const char *receipt, char *findings, int violations,
                               unsigned long long items);

/* ---- device facts (gw_cli.c) ---- */

typedef struct gw_gpu_facts {
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    int sm_count;
    size_t total_mem;
    int emulated; /* gw_cli_emulated(): the device is gpuwitness' emulated one, on the CPU (docs/emu.md) */
} gw_gpu_facts;

/* Device properties; 0, or -1 with err naming the CUDA error. */
int gw_gpu_facts_get(int ordinal, gw_gpu_facts *f, char *err, size_t err_size);

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

/* 1 when this program's device code was built for the emulated device (gpuwitness-emu), else 0: the build of
 * the device code says it, not the device's name. */
int gw_cli_emulated(void);

/* What gpuwitness-emu's lines say of the device where a GPU build's say nothing (docs/emu.md, "The CLI"): the
 * label of a line of device times ("gpu:     " / "emulated:"), and a note ending a line of results
 * ("" / " [emulated on the CPU, not a GPU]"). */
const char *gw_cli_gpu_label(void);
const char *gw_cli_emulated_note(void);

/* In gpuwitness-emu under GW_REQUIRE_GPU=1 (a run that must prove a GPU): says why on stderr after
 * "gpuwitness CMD: " and returns 1; otherwise 0. gw_cli_select_device and doctor ask it first. */
int gw_cli_require_gpu_refuses_emulation(const char *cmd);

#ifdef __cplusplus
}
#endif

#endif /* GW_CLI_H */
