/* SPDX-License-Identifier: MIT
 * gpuwitness run focus_stack: all-in-focus images from Z stacks in .npy or TIFF files. Everything is
 * checked before anything is written: the command line and the parameters (through focus_stack_check),
 * the output locations, the input file, and on the GPU the witness, the outputs' own consistency and (up to
 * 64 Mi voxels by default) the result against focus_stack_ref. Outputs are staged as temporary files and
 * renamed into place only when all of them were written.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "focus_stack_ref.h"
#include "focus_stack_host.h"
#include "gw_kernel.h"
#include "gw_cli_files.h"
#include "gw_infile.h"
#include "gw_npy.h"
#include "gw_tiff.h"

#define VERIFY_DEFAULT_MAX_VOXELS ((size_t)64 << 20)

static const char *const run_value_options[] = {"--ksize", "--measure", "--border", "--window", "--out-ff",
                                                "--out-idx", "--out-best", "--out-focus", NULL};

const gw_kernel_info gw_focus_stack_info = {
    .name = "focus_stack",
    .run_usage = "gpuwitness run focus_stack [--device D] [--ksize 3|5|7] [--measure log|lap] [--border B]\n"
                 "                           [--window W] [--out-ff F] [--out-idx F] [--out-best F] [--out-focus F] INPUT\n"
                 "  all-in-focus images from Z stacks in .npy or 16-bit TIFF files",
    .run_value_options = run_value_options,
    .check_help = "realistic: N=1, Z=17, 512x512 (small: N=2, Z=5, 136x130) synthetic textured stack whose\n"
                  "in-focus slice is known per 64x64 cell, at morphseq's defaults, the known answer checked too;\n"
                  "then ksize 7, reflect101, window 9 on full-range random values, N=2, Z=5, 259x263 (small:\n"
                  "N=1, Z=3, 61x67). All four outputs; a second GPU call with idx and ff only (poison 0xA5) must\n"
                  "give the same idx and ff; bit for bit against focus_stack_ref.",
    .bench_help = "B1 (N=1, Z=17, 2189x2189) and B2 (N=4, Z=17, 2189x1152) at morphseq's defaults, plus B3\n"
                  "(N=16) in the full tier; smoke and small keep N and shrink the images",
    .trace_help = "check --size small's known-focus stack (N=2, Z=5, 136x130) at morphseq's defaults",
};

static const char focus_help[] =
    "usage: gpuwitness run focus_stack [--device cuda|cuda:N|cpu|auto] [--ksize 3|5|7] [--measure log|lap]\n"
    "                                  [--border zero|replicate|reflect101] [--window W] [--verify|--no-verify]\n"
    "                                  [--out-ff F] [--out-idx F] [--out-best F] [--out-focus F] INPUT\n"
    "\n"
    "All-in-focus images from microscope Z stacks (docs/focus_stack.md): per pixel, each slice is scored with\n"
    "|Laplacian of Gaussian| (or |Laplacian|), optionally summed over a W x W window; idx is the first slice\n"
    "with the best score and ff the input value there. The defaults reproduce morphseq's LoG_focus_stacker.\n"
    "\n"
    "INPUT   a .npy file, uint16 ('<u2'), C order, shape [Z][Y][X] or [N][Z][Y][X] (N stacks); or a multi-page\n"
    "        16-bit unsigned grayscale TIFF, one page per Z slice (strips or tiles, any compression libtiff\n"
    "        decodes). The format is taken from the file's first bytes. Z is at most 255.\n"
    "\n"
    "options:\n"
    "  --device D       cuda, cuda:N, cpu or auto (default: $GW_DEVICE, else auto; auto without a GPU runs\n"
    "                   focus_stack_ref on the CPU and says so on stderr)\n"
    "  --ksize K        3, 5 or 7: OpenCV's Gaussian and Laplacian tables (default 3)\n"
    "  --measure M      log (|Laplacian of Gaussian|, default) or lap (|Laplacian|, no blur)\n"
    "  --border B       zero (default, as morphseq's zero padding), replicate or reflect101 (OpenCV's default)\n"
    "  --window W       0 or 1: none (default); odd 3..7567: sum the score over W x W pixels\n"
    "  --out-ff F       the all-in-focus image, uint16\n"
    "  --out-idx F      the chosen slice per pixel, uint8\n"
    "  --out-best F     the winning score per pixel, float32 (V / S: morphseq's max abs_log)\n"
    "  --out-focus F    every slice's score, float32, one value per input voxel (as large as the input x2)\n"
    "                   Outputs are .npy (shape [Y][X], or [N][Y][X] for a 4-D input; focus [Z][Y][X] or\n"
    "                   [N][Z][Y][X]) or TIFF (.tif/.tiff: one page per stack, focus one page per slice),\n"
    "                   by the name's extension. At least one is required.\n"
    "  --verify         on the GPU, also compute focus_stack_ref and compare every output byte for byte;\n"
    "  --no-verify      the default is to verify inputs up to 64 Mi voxels (the CPU reference is slow). The\n"
    "                   witness and the outputs' own consistency (idx < Z, ff = input at idx) are always\n"
    "                   checked on the GPU.\n"
    "  -h, --help       this text\n"
    "\n"
    "Every output is written to a temporary file beside it and renamed only when all were written; nothing is\n"
    "written on any error, and the input is never overwritten.\n"
    "\n"
    "exit status: 0 written; 1 bad input file, mismatch, witness violation, CUDA error, write error, or no\n"
    "GPU under GW_REQUIRE_GPU=1; 2 bad usage (unknown option, bad parameter, bad output name or location);\n"
    "77 --device cuda or cuda:N without a usable GPU (GW_REQUIRE_GPU unset): nothing written.\n";

enum { OUT_FF, OUT_IDX, OUT_BEST, OUT_FOCUS, N_OUT };
enum { FMT_NPY, FMT_TIFF };

typedef struct focus_output {
    const char *flag;
    const char *path; /* NULL: not asked for */
    int format;
} focus_output;

typedef struct focus_input {
    const char *path;
    int rank; /* 3: [Z][Y][X], 4: [N][Z][Y][X] */
    const char *format;
    const uint16_t *data;
    gw_npy_array npy;
    gw_tiff_stack tiff;
} focus_input;

/* ---- the command line ---- */

/* A whole decimal int; -1 with the message printed. */
static int parse_int(const char *flag, const char *text, const char *rule, int *value)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < INT_MIN || v > INT_MAX) {
        fprintf(stderr, "gpuwitness run focus_stack: %s '%s': not an integer (%s)\n", flag, text, rule);
        return -1;
    }
    *value = (int)v;
    return 0;
}

static int parse_name(const char *flag, const char *text, const char *const *names, int count, const char *rule,
                      int *value)
{
    for (int i = 0; i < count; i++) {
        if (!strcmp(text, names[i])) {
            *value = i;
            return 0;
        }
    }
    fprintf(stderr, "gpuwitness run focus_stack: %s '%s': %s\n", flag, text, rule);
    return -1;
}

/* The parameter rules come from focus_stack_check itself, named with the flag; sizes are checked once the
 * input is read. GW_EXIT_OK or GW_EXIT_USAGE. */
static int check_flags(focus_stack_params p)
{
    focus_stack_params probe = p;
    probe.n = probe.z = probe.y = probe.x = 1;
    const char dummy = 0;
    const int status = focus_stack_check(&probe, &dummy, &dummy, &dummy);
    if (status == FOCUS_STACK_OK) return GW_EXIT_OK;
    if (status == FOCUS_STACK_ERR_KSIZE)
        fprintf(stderr, "gpuwitness run focus_stack: --ksize %d: %s\n", p.ksize, focus_stack_status_str(status));
    else if (status == FOCUS_STACK_ERR_WINDOW)
        fprintf(stderr, "gpuwitness run focus_stack: --window %d: %s\n", p.window, focus_stack_status_str(status));
    else
        fprintf(stderr, "gpuwitness run focus_stack: --measure/--border: %s\n", focus_stack_status_str(status));
    return GW_EXIT_USAGE;
}

static int has_suffix(const char *path, const char *suffix)
{
    const size_t n = strlen(path), m = strlen(suffix);
    return n > m && strcasecmp(path + n - m, suffix) == 0;
}

/* Output formats, then the output rule (gw_cli_files.h), before any input is read. GW_EXIT_OK or
 * GW_EXIT_USAGE (printed). */
static int plan_outputs(focus_output *outs, const char *input)
{
    gw_cli_file files[N_OUT];
    size_t n = 0;
    for (int i = 0; i < N_OUT; i++) {
        focus_output *o = &outs[i];
        if (!o->path) continue;
        if (has_suffix(o->path, ".npy")) {
            o->format = FMT_NPY;
        } else if (has_suffix(o->path, ".tif") || has_suffix(o->path, ".tiff")) {
            o->format = FMT_TIFF;
        } else {
            fprintf(stderr, "gpuwitness run focus_stack: %s '%s': unknown extension: the name must end in .npy, .tif "
                    "or .tiff\n", o->flag, o->path);
            return GW_EXIT_USAGE;
        }
        files[n++] = (gw_cli_file){o->flag, o->path, NULL};
    }
    const gw_cli_file in = {NULL, input, NULL};
    return gw_cli_check_outputs("gpuwitness run focus_stack", files, n, &in, 1) ? GW_EXIT_USAGE : GW_EXIT_OK;
}

/* ---- the input ---- */

/* Reads the input by its first bytes and fills the sizes of *p. GW_EXIT_OK or GW_EXIT_FAIL (printed). */
static int read_input(focus_input *in, focus_stack_params *p)
{
    char err[1024];
    uint8_t magic[6] = {0};
    /* gw_infile_open: a FIFO or a device is refused at once instead of blocking this first read */
    const int fd = gw_infile_open(in->path, NULL, err, sizeof err);
    if (fd < 0) {
        fprintf(stderr, "gpuwitness run focus_stack: %s; nothing written\n", err);
        return GW_EXIT_FAIL;
    }
    ssize_t got_bytes;
    do
        got_bytes = read(fd, magic, sizeof magic);
    while (got_bytes < 0 && errno == EINTR);
    const int read_errno = errno;
    close(fd);
    if (got_bytes < 0) {
        fprintf(stderr, "gpuwitness run focus_stack: %s: read error: %s; nothing written\n", in->path,
                strerror(read_errno));
        return GW_EXIT_FAIL;
    }
    const size_t got = (size_t)got_bytes;
    const int is_npy = got >= 6 && memcmp(magic, "\x93NUMPY", 6) == 0;
    const int is_tiff = got >= 4 && (!memcmp(magic, "II*\0", 4) || !memcmp(magic, "MM\0*", 4) ||
                                     !memcmp(magic, "II+\0", 4) || !memcmp(magic, "MM\0+", 4));
    int64_t dims[4] = {1, 1, 1, 1}; /* n, z, y, x */
    if (is_npy) {
        in->format = ".npy";
        if (gw_npy_read(in->path, GW_NPY_U2, 3, 4, "[Z][Y][X] or [N][Z][Y][X]", &in->npy, err, sizeof err)) {
            fprintf(stderr, "gpuwitness run focus_stack: %s; nothing written\n", err);
            return GW_EXIT_FAIL;
        }
        in->rank = in->npy.ndim;
        for (int i = 0; i < in->rank; i++) dims[4 - in->rank + i] = in->npy.shape[i];
        in->data = in->npy.data;
    } else if (is_tiff) {
        in->format = "TIFF";
        if (gw_tiff_read_u16(in->path, FOCUS_STACK_MAX_Z, &in->tiff, err, sizeof err)) {
            fprintf(stderr, "gpuwitness run focus_stack: %s; nothing written\n", err);
            return GW_EXIT_FAIL;
        }
        in->rank = 3;
        dims[1] = in->tiff.pages;
        dims[2] = in->tiff.height;
        dims[3] = in->tiff.width;
        in->data = in->tiff.data;
    } else {
        fprintf(stderr, "gpuwitness run focus_stack: %s: neither a .npy file (\\x93NUMPY) nor a TIFF (II*, MM*) by "
                "its first bytes; nothing written\n", in->path);
        return GW_EXIT_FAIL;
    }
    static const char *const names[4] = {"N", "Z", "Y", "X"};
    for (int i = 0; i < 4; i++) {
        if (dims[i] > INT_MAX) {
            fprintf(stderr, "gpuwitness run focus_stack: %s: %s = %lld is more than focus_stack takes (%d); nothing "
                    "written\n", in->path, names[i], (long long)dims[i], INT_MAX);
            return GW_EXIT_FAIL;
        }
    }
    p->n = (int)dims[0];
    p->z = (int)dims[1];
    p->y = (int)dims[2];
    p->x = (int)dims[3];
    const int status = focus_stack_check(p, in->data, in->data, in->data);
    if (status != FOCUS_STACK_OK) {
        fprintf(stderr, "gpuwitness run focus_stack: %s: N=%d Z=%d Y=%d X=%d: %s; nothing written\n", in->path, p->n,
                p->z, p->y, p->x, focus_stack_status_str(status));
        return GW_EXIT_FAIL;
    }
    return GW_EXIT_OK;
}

/* ---- computing ---- */

/* focus_stack on the GPU into got, witnessed, self-consistent and (verify) equal to the reference.
 * GW_EXIT_OK or GW_EXIT_FAIL (printed). */
static int compute_on_gpu(const focus_input *in, focus_stack_params p, int ordinal, int verify, gw_focus_out *got)
{
    char err[1024], msg[2048];
    gw_focus_gpu g;
    gw_focus_gpu_result res;
    if (gw_focus_gpu_init(&g, ordinal, p, got->best != NULL, got->focus != NULL, err, sizeof err)) {
        fprintf(stderr, "gpuwitness run focus_stack: cuda:%d: %s; nothing written\n", ordinal, err);
        return GW_EXIT_FAIL;
    }
    int rc = GW_EXIT_OK;
    if (gw_focus_gpu_call(&g, in->data, 0xFF, got, &res, err, sizeof err)) {
        fprintf(stderr, "gpuwitness run focus_stack: cuda:%d: %s; nothing written\n", ordinal, err);
        rc = GW_EXIT_FAIL;
    }
    /* after a failed call, the first error is the one worth reporting: a sticky one fails the frees too */
    if (gw_focus_gpu_free(&g, rc == GW_EXIT_OK ? err : NULL, sizeof err) && rc == GW_EXIT_OK) {
        fprintf(stderr, "gpuwitness run focus_stack: cuda:%d: %s; nothing written\n", ordinal, err);
        rc = GW_EXIT_FAIL;
    }
    if (rc != GW_EXIT_OK) return rc;
    printf("  %s\n", res.witness_receipt);
    printf("  %s %.2f ms incl. transfers, kernel %.3f ms%s\n", gw_cli_gpu_label(), res.ms_end_to_end, res.ms_kernel,
           gw_cli_emulated_note());
    rc = gw_cli_run_witness("gpuwitness run focus_stack", res.witness_check, res.witness_violations);
    if (gw_focus_out_consistent(got, in->data, p, msg, sizeof msg)) {
        fprintf(stderr, "gpuwitness run focus_stack: the GPU result is inconsistent: %s; nothing written\n", msg);
        rc = GW_EXIT_FAIL;
    }
    if (rc != GW_EXIT_OK) return rc;
    if (!verify) {
        printf("  result:   witness checks out, outputs consistent; not compared with focus_stack_ref (--verify "
               "compares)%s\n", gw_cli_emulated_note());
        return GW_EXIT_OK;
    }
    gw_focus_out ref;
    if (gw_focus_out_alloc(&ref, p, got->best != NULL, got->focus != NULL)) {
        fprintf(stderr, "gpuwitness run focus_stack: out of memory for the reference's outputs (--no-verify skips "
                "it); nothing written\n");
        return GW_EXIT_FAIL;
    }
    gw_focus_out_poison(&ref, p, 0xFF);
    const double t0 = gw_cli_now_ms();
    const int status = focus_stack_ref(&p, in->data, ref.idx, ref.ff, ref.best, ref.focus, 0);
    const double ref_ms = gw_cli_now_ms() - t0;
    if (status != FOCUS_STACK_OK) {
        fprintf(stderr, "gpuwitness run focus_stack: focus_stack_ref: %s; nothing written\n",
                focus_stack_status_str(status));
        rc = GW_EXIT_FAIL;
    } else if (gw_focus_out_compare(got, &ref, p, msg, sizeof msg)) {
        fprintf(stderr, "gpuwitness run focus_stack: the GPU result differs from focus_stack_ref: %s; nothing "
                "written\n", msg);
        rc = GW_EXIT_FAIL;
    } else {
        printf("  result:   bit-exact with focus_stack_ref (%.1f ms on all cores), witness checks out%s\n", ref_ms,
               gw_cli_emulated_note());
    }
    gw_focus_out_free(&ref);
    return rc;
}

static int compute_on_cpu(const focus_input *in, focus_stack_params p, gw_focus_out *out)
{
    char msg[1024];
    gw_focus_out_poison(out, p, 0xFF);
    const double t0 = gw_cli_now_ms();
    const int status = focus_stack_ref(&p, in->data, out->idx, out->ff, out->best, out->focus, 0);
    const double ms = gw_cli_now_ms() - t0;
    if (status != FOCUS_STACK_OK) {
        fprintf(stderr, "gpuwitness run focus_stack: focus_stack_ref: %s; nothing written\n",
                focus_stack_status_str(status));
        return GW_EXIT_FAIL;
    }
    if (gw_focus_out_consistent(out, in->data, p, msg, sizeof msg)) {
        fprintf(stderr, "gpuwitness run focus_stack: focus_stack_ref's result is inconsistent: %s; nothing "
                "written\n", msg);
        return GW_EXIT_FAIL;
    }
    printf("  cpu:      focus_stack_ref %.1f ms on all cores (%.1f Mvoxel/s)\n", ms,
           ms > 0 ? (double)p.n * p.z * p.y * p.x / ms / 1e3 : 0.0);
    return GW_EXIT_OK;
}

/* ---- writing ---- */

/* Stages one output into f as its format wants it. 0 or -1 (printed). */
static int stage_output(gw_outfile *f, const focus_output *o, int which, const focus_input *in, focus_stack_params p,
                        const gw_focus_out *r)
{
    char err[1024];
    const int per_slice = which == OUT_FOCUS;
    const void *data = which == OUT_FF ? (const void *)r->ff : which == OUT_IDX ? (const void *)r->idx
                       : which == OUT_BEST ? (const void *)r->best : (const void *)r->focus;
    int rc;
    if (o->format == FMT_NPY) {
        static const gw_npy_dtype types[N_OUT] = {GW_NPY_U2, GW_NPY_U1, GW_NPY_F4, GW_NPY_F4};
        int64_t shape[4];
        int ndim = 0;
        if (in->rank == 4) shape[ndim++] = p.n;
        if (per_slice) shape[ndim++] = p.z;
        shape[ndim++] = p.y;
        shape[ndim++] = p.x;
        rc = gw_npy_stage(f, o->path, types[which], ndim, shape, data, err, sizeof err);
    } else {
        static const gw_tiff_type types[N_OUT] = {GW_TIFF_U16, GW_TIFF_U8, GW_TIFF_F32, GW_TIFF_F32};
        const long pages = (long)p.n * (per_slice ? p.z : 1);
        if (pages > 65535) {
            fprintf(stderr, "gpuwitness run focus_stack: %s '%s': %ld pages are more than a TIFF holds (65535): "
                    "write .npy instead; nothing written\n", o->flag, o->path, pages);
            return -1;
        }
        rc = gw_tiff_stage(f, o->path, types[which], (int)pages, (uint32_t)p.y, (uint32_t)p.x, data, err,
                           sizeof err);
    }
    if (rc) fprintf(stderr, "gpuwitness run focus_stack: %s\n", err);
    return rc;
}

/* All outputs staged, then all renamed as one set (gw_outfile_commit_all): every output new, or none.
 * GW_EXIT_OK or GW_EXIT_FAIL. */
static int write_outputs(focus_output *outs, const focus_input *in, focus_stack_params p, const gw_focus_out *r)
{
    char err[1024];
    gw_outfile staged[N_OUT];
    int n = 0;
    for (int i = 0; i < N_OUT; i++) {
        if (!outs[i].path) continue;
        staged[n] = (gw_outfile)GW_OUTFILE_INIT;
        if (stage_output(&staged[n], &outs[i], i, in, p, r)) {
            for (int j = 0; j <= n; j++) gw_outfile_discard(&staged[j]);
            return GW_EXIT_FAIL;
        }
        n++;
    }
    if (gw_outfile_commit_all(staged, (size_t)n, err, sizeof err)) {
        fprintf(stderr, "gpuwitness run focus_stack: %s\n", err);
        return GW_EXIT_FAIL;
    }
    for (int i = 0; i < N_OUT; i++)
        if (outs[i].path) printf("  wrote %s\n", outs[i].path);
    return GW_EXIT_OK;
}

/* ---- the command ---- */

static int run_focus(focus_output *outs, focus_input *in, focus_stack_params p, const gw_device_choice *dev,
                     int verify_flag)
{
    int rc = read_input(in, &p);
    if (rc != GW_EXIT_OK) return rc;
    const size_t voxels = (size_t)p.n * p.z * p.y * p.x;
    const int gpu = dev->kind == GW_DEVICE_CUDA;
    const int verify = verify_flag >= 0 ? verify_flag : voxels <= VERIFY_DEFAULT_MAX_VOXELS;
    char params[128];
    gw_focus_params_text(p, params, sizeof params);
    printf("gpuwitness run focus_stack: %s (%s) N=%d Z=%d %dx%d, %.2f Mvoxels; %s\n", in->path, in->format, p.n, p.z,
           p.y, p.x, (double)voxels / 1e6, params);
    if (gpu)
        printf("  device:   cuda:%d%s, one launch%s\n", dev->ordinal, gw_cli_emulated_note(),
               verify ? ", compared with focus_stack_ref" : verify_flag == 0 ? " (--no-verify)"
                                                                           : " (over 64 Mi voxels: not compared)");
    else
        printf("  device:   cpu (focus_stack_ref%s)\n", dev->fell_back ? ", no usable GPU" : ", --device cpu");
    gw_focus_out result;
    if (gw_focus_out_alloc(&result, p, outs[OUT_BEST].path != NULL, outs[OUT_FOCUS].path != NULL)) {
        fprintf(stderr, "gpuwitness run focus_stack: out of memory for the outputs; nothing written\n");
        return GW_EXIT_FAIL;
    }
    rc = gpu ? compute_on_gpu(in, p, dev->ordinal, verify, &result) : compute_on_cpu(in, p, &result);
    if (rc == GW_EXIT_OK) rc = write_outputs(outs, in, p, &result);
    gw_focus_out_free(&result);
    return rc;
}

int gw_focus_stack_run(int argc, char **argv)
{
    focus_output outs[N_OUT] = {
        {.flag = "--out-ff"},
        {.flag = "--out-idx"},
        {.flag = "--out-best"},
        {.flag = "--out-focus"},
    };
    static const char *const measures[2] = {"log", "lap"};
    static const char *const borders[3] = {"zero", "replicate", "reflect101"};
    focus_stack_params p = {.ksize = 3, .measure = FOCUS_STACK_LOG_ABS, .border = FOCUS_STACK_BORDER_ZERO};
    const char *device = NULL, *input = NULL, *extra = NULL;
    int verify = -1, options_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m = 0;
        if (!options_done && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
            fputs(focus_help, stdout);
            return GW_EXIT_OK;
        }
        if (!options_done && !strcmp(a, "--")) {
            options_done = 1;
            continue;
        }
        if (options_done || a[0] != '-' || !a[1]) {
            if (!input) input = a;
            else if (!extra) extra = a;
            continue;
        }
        if (!strcmp(a, "--verify")) {
            verify = 1;
            continue;
        }
        if (!strcmp(a, "--no-verify")) {
            verify = 0;
            continue;
        }
        int bad = 0;
        if ((m = gw_cli_option(argc, argv, &i, "run focus_stack", "--device", &v)) > 0) {
            device = v;
        } else if (!m && (m = gw_cli_option(argc, argv, &i, "run focus_stack", "--ksize", &v)) > 0) {
            bad = parse_int("--ksize", v, "bad ksize: must be 3, 5 or 7", &p.ksize);
        } else if (!m && (m = gw_cli_option(argc, argv, &i, "run focus_stack", "--window", &v)) > 0) {
            bad = parse_int("--window", v, "bad window: must be 0, 1 or an odd number from 3 to 7567", &p.window);
        } else if (!m && (m = gw_cli_option(argc, argv, &i, "run focus_stack", "--measure", &v)) > 0) {
            bad = parse_name("--measure", v, measures, 2, "must be log or lap", &p.measure);
        } else if (!m && (m = gw_cli_option(argc, argv, &i, "run focus_stack", "--border", &v)) > 0) {
            bad = parse_name("--border", v, borders, 3, "must be zero, replicate or reflect101", &p.border);
        } else {
            for (int k = 0; k < N_OUT && !m; k++)
                if ((m = gw_cli_option(argc, argv, &i, "run focus_stack", outs[k].flag, &v)) > 0) outs[k].path = v;
            if (!m) {
                fprintf(stderr, "gpuwitness run focus_stack: unknown option '%s': options are --device, --ksize, "
                        "--measure, --border, --window, --verify, --no-verify, --out-ff, --out-idx, --out-best, "
                        "--out-focus, --help\n", a);
                return GW_EXIT_USAGE;
            }
        }
        if (m < 0 || bad) return GW_EXIT_USAGE;
    }
    if (check_flags(p) != GW_EXIT_OK) return GW_EXIT_USAGE;
    if (!input) {
        fprintf(stderr, "gpuwitness run focus_stack: missing INPUT: a .npy or TIFF Z stack (see gpuwitness run "
                "focus_stack --help)\n");
        return GW_EXIT_USAGE;
    }
    if (extra) {
        fprintf(stderr, "gpuwitness run focus_stack: one INPUT at a time: got '%s' and '%s'\n", input, extra);
        return GW_EXIT_USAGE;
    }
    int n_outputs = 0;
    for (int k = 0; k < N_OUT; k++) n_outputs += outs[k].path != NULL;
    if (!n_outputs) {
        fprintf(stderr, "gpuwitness run focus_stack: no output asked for: give at least one of --out-ff, --out-idx, "
                "--out-best, --out-focus\n");
        return GW_EXIT_USAGE;
    }
    int rc = plan_outputs(outs, input);
    if (rc != GW_EXIT_OK) return rc;

    gw_device_choice dev;
    rc = gw_cli_select_device("run", device, &dev);
    if (rc == GW_EXIT_SKIP) {
        fprintf(stderr, "gpuwitness run focus_stack: no usable GPU for --device %s: %s; nothing written (exit 77; "
                "--device auto would run focus_stack_ref on the CPU)\n", gw_cli_effective_device(device), dev.reason);
        return rc;
    }
    if (rc != GW_EXIT_OK) return rc;
    if (dev.fell_back)
        fprintf(stderr, "gpuwitness run focus_stack: no usable GPU: %s; running focus_stack_ref on the CPU instead "
                "(auto)\n", dev.reason);
    focus_input in;
    memset(&in, 0, sizeof in);
    in.path = input;
    rc = run_focus(outs, &in, p, &dev, verify);
    gw_npy_free(&in.npy);
    gw_tiff_free(&in.tiff);
    return rc;
}
