/* SPDX-License-Identifier: MIT
 * gpuwitness run ex2d_patch: spectroperfectionism extraction (docs/ex2d_patch.md) of a synthetic r-camera frame,
 * or a fibre and wavelength subset of it, on the selected device (with --psf, --image or --out: DESI files,
 * ex2d_patch_desi.c). Everything is checked before anything is written: the command line and the frame
 * configuration, the output directory, the extraction (ex2d_patch_extract.c). The outputs are staged as
 * temporary files and renamed only when all were written.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "ex2d_patch_ref.h"
#include "ex2d_patch_host.h"
#include "gw_kernel.h"
#include "gw_cli_files.h"
#include "gw_npy.h"

static const char *const run_value_options[] = {"--tier", "--fibres", "--waves", "--threads", "--seed", "--out-dir",
                                                "--psf", "--image", "--out", "--bundle-size", "--wavesize",
                                                "--regularize", NULL};
static const char *const aliases[] = {"ex2d", NULL};

const gw_kernel_info gw_ex2d_patch_info = {
    .name = "ex2d_patch",
    .aliases = aliases,
    .run_usage = "gpuwitness run ex2d_patch [--tier S|M|L|XL|frame] [--fibres F:C] [--waves W:C] [--device D]\n"
                 "                          [--threads N] [--seed N] --out-dir DIR\n"
                 "  spectroperfectionism extraction of a synthetic DESI frame (aliases: ex2d, ex2d-patch)\n"
                 "gpuwitness run ex2d --psf PSF.fits --image IMAGE.fits --fibres F:C --waves W0:W1:DW\n"
                 "                    --out FRAME.fits [--bundle-size N] [--wavesize N] [--regularize R] [--device D]\n"
                 "                    [--threads N]\n"
                 "  the same on DESI files: a GAUSS-HERMITE PSF and a preprocessed image in, a DESI frame out",
    .synth = gw_ex2d_patch_synth,
    .synth_usage = "gpuwitness synth ex2d --psf PSF.fits --fibres F:C --waves W0:W1:DW --out IMAGE.fits\n"
                   "                      [--seed N] [--clean] [--bundle-size N] [--wavesize N] [--threads N]\n"
                   "  a DESI preprocessed image of a known spectrum through a real PSF, truth in HDU TRUTH",
    .run_value_options = run_value_options,
    .check_help = "realistic: a synthetic r-camera subbundle, 5 fibres x 2326 bins, 47 patches, with noise\n"
                  "(small: one noiseless 7 x 74 patch). The CPU reference on 1 thread and all cores (identical\n"
                  "bytes) and against the known truth; two GPU calls (batches from free memory, then of 16),\n"
                  "compared within the FP64 tolerances of docs/ex2d_patch.md (not bit for bit), every stage\n"
                  "witnessed.",
    .bench_help = "synthetic r-camera frames: tier S (smoke; small adds M), M (one 7x74 patch), L (one\n"
                  "subbundle, 47 patches) and a full frame (4,700 patches; realistic, full; full adds one\n"
                  "bundle); kernel time is K1 + ex2d_patches_launch on resident inputs, outputs checked with\n"
                  "the tolerances of docs/ex2d_patch.md; a FLOP model, and % of an FP64 FMA rate reference\n"
                  "(which --min-roofline reads for it instead of the copy roofline)",
    .trace_help = "tier M: one noiseless 7 x 74 patch (K1 and the six per-batch stages once)",
};

static const char ex2d_help[] =
    "usage: gpuwitness run ex2d_patch [--tier S|M|L|XL|frame] [--fibres FIRST:COUNT] [--waves FIRST:COUNT]\n"
    "                           [--device cuda|cuda:N|cpu|auto] [--threads N] [--seed N] --out-dir DIR\n"
    "\n"
    "Extracts 1D spectra from a synthetic DESI r-camera frame by spectroperfectionism (docs/ex2d_patch.md):\n"
    "the frame is synthesised on the host, cut into patches of 5 fibres x 50 bins (plus padding), and every\n"
    "patch is solved in FP64. On the GPU: K1 over the PSF table, then K3..K7 in batches sized from free device\n"
    "memory, each stage's witness checked, and up to 47 patches the result compared with the CPU reference\n"
    "(within the tolerances of docs/ex2d_patch.md); on the CPU: the reference, threads over patches.\n"
    "\n"
    "options:\n"
    "  --tier T         S (1 patch, 1 fibre x 10 bins, noiseless), M (1 patch, 5 fibres x 50 bins, noiseless),\n"
    "                   L (default: one subbundle, fibres 5..9, all 2326 bins, 47 patches, with noise),\n"
    "                   XL (one bundle, fibres 0..24, 235 patches) or frame (500 fibres, 4700 patches)\n"
    "  --fibres F:C     core fibres F..F+C-1 of the camera's 500 instead of the tier's\n"
    "  --waves W:C      core wavelength bins W..W+C-1 of the camera's 2326 instead of the tier's\n"
    "  --device D       cuda, cuda:N, cpu or auto (default: $GW_DEVICE, else auto; auto without a GPU runs the\n"
    "                   CPU reference and says so on stderr)\n"
    "  --threads N      CPU threads for the synthesis and the reference (default 0: every core)\n"
    "  --seed N         noise seed (default: the synthetic frame's, 0x5eed2d)\n"
    "  --out-dir DIR    where the outputs go (must exist):\n"
    "                   flux.npy, ivar.npy  float64 [nspec][nwave]\n"
    "                   rdiags.npy          float64 [nspec][11][nwave] (resolution diagonals, offsets 5..-5)\n"
    "                   info.npy            int32 [npatch][4]: status (0 ok, 1 not positive definite, 2 Jacobi\n"
    "                                       not converged), clipped eigenvalues, Jacobi sweeps min and max\n"
    "  -h, --help       this text\n"
    "\n"
    "On DESI files (a GAUSS-HERMITE PSF and a preprocessed image in, a DESI frame out): gpuwitness run ex2d\n"
    "--psf PSF.fits --help.\n"
    "\n"
    "A progress line (patches done, patches/s, time left) goes to stderr every 2 s on long runs. Every output is\n"
    "written to a temporary file beside it and renamed only when all were written; nothing is written on any\n"
    "error.\n"
    "\n"
    "exit status: 0 written; 1 extraction failed (validation, mismatch, witness violation, CUDA error), write\n"
    "error, or no GPU under GW_REQUIRE_GPU=1; 2 bad usage (unknown option, bad value, bad frame configuration,\n"
    "missing --out-dir); 77 --device cuda or cuda:N without a usable GPU (GW_REQUIRE_GPU unset): nothing\n"
    "written.\n";

typedef struct ex2d_opts {
    const char *device, *out_dir, *tier_name;
    int tier;
    int fibre_first, nfibre, wave_first, nwave; /* nfibre / nwave 0: the tier's */
    int threads;
    int have_seed;
    uint64_t seed;
} ex2d_opts;

static int parse_tier(const char *text, int *tier)
{
    static const struct {
        const char *name;
        int tier;
    } tiers[] = {{"S", EX2D_TIER_S}, {"M", EX2D_TIER_M}, {"L", EX2D_TIER_L}, {"XL", EX2D_TIER_XL_BUNDLE},
                 {"frame", EX2D_TIER_XL_FRAME}};
    for (size_t i = 0; i < sizeof tiers / sizeof tiers[0]; i++) {
        if (!strcasecmp(text, tiers[i].name)) {
            *tier = tiers[i].tier;
            return 0;
        }
    }
    fprintf(stderr, "gpuwitness run ex2d_patch: --tier '%s': must be S, M, L, XL or frame\n", text);
    return -1;
}

/* "FIRST:COUNT" (gw_cli_parse_range); -1 with the message printed. */
static int parse_range(const char *flag, const char *text, int *first, int *count)
{
    if (gw_cli_parse_range(text, first, count) == 0) return 0;
    fprintf(stderr, "gpuwitness run ex2d_patch: %s '%s': must be FIRST:COUNT, whole numbers, FIRST >= 0 and COUNT "
            ">= 1\n", flag, text);
    return -1;
}

static int parse_number(const char *flag, const char *text, unsigned long long max, unsigned long long *value)
{
    unsigned long long v = 0;
    if (gw_cli_parse_u64(text, max, &v)) {
        fprintf(stderr, "gpuwitness run ex2d_patch: %s '%s': must be a whole number from 0 to %llu\n", flag, text, max);
        return -1;
    }
    *value = v;
    return 0;
}

/* The tier's configuration with the options applied; GW_EXIT_USAGE with the rule printed. */
static int build_config(const ex2d_opts *o, ex2d_frame_config *cfg)
{
    if (ex2d_frame_config_tier(cfg, o->tier)) {
        fprintf(stderr, "gpuwitness run ex2d_patch: --tier %s: unknown tier\n", o->tier_name);
        return GW_EXIT_USAGE;
    }
    if (o->nfibre) cfg->fibre_first = o->fibre_first, cfg->nfibre = o->nfibre;
    if (o->nwave) cfg->wave_first = o->wave_first, cfg->nwave = o->nwave;
    if (o->have_seed) cfg->seed = o->seed;
    cfg->nthreads = o->threads;
    const char *why = ex2d_frame_config_check(cfg);
    if (why) {
        fprintf(stderr, "gpuwitness run ex2d_patch: tier %s%s%s: %s\n", o->tier_name, o->nfibre ? " with --fibres" : "",
                o->nwave ? " with --waves" : "", why);
        return GW_EXIT_USAGE;
    }
    return GW_EXIT_OK;
}

/* ---- writing ---- */

enum { OUT_FLUX, OUT_IVAR, OUT_RDIAGS, OUT_INFO, N_OUT };

/* DIR/flux.npy and the others: "out/" and "out" give the same path. */
static void out_path(const char *dir, int which, char *path, size_t size)
{
    static const char *const names[N_OUT] = {"flux.npy", "ivar.npy", "rdiags.npy", "info.npy"};
    const size_t len = strlen(dir);
    snprintf(path, size, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", names[which]);
}

static int write_outputs(const char *dir, const ex2d_frame *f, const ex2d_outputs *r)
{
    const ex2d_params *p = &f->params;
    const int64_t frame[2] = {p->nspec_out, p->nwave_out};
    const int64_t rdiag[3] = {p->nspec_out, 2 * p->ndiag + 1, p->nwave_out};
    const int64_t info[2] = {f->npatch, 4}; /* ex2d_patch_info: four int32 fields */
    const struct {
        gw_npy_dtype dtype;
        int ndim;
        const int64_t *shape;
        const void *data;
    } outs[N_OUT] = {{GW_NPY_F8, 2, frame, r->flux},
                     {GW_NPY_F8, 2, frame, r->ivar},
                     {GW_NPY_F8, 3, rdiag, r->rdiags},
                     {GW_NPY_I4, 2, info, r->info}};
    gw_outfile staged[N_OUT] = {GW_OUTFILE_INIT, GW_OUTFILE_INIT, GW_OUTFILE_INIT, GW_OUTFILE_INIT};
    char path[N_OUT][4096], err[1024];
    int rc = GW_EXIT_OK;
    for (int i = 0; i < N_OUT && rc == GW_EXIT_OK; i++) {
        out_path(dir, i, path[i], sizeof path[i]);
        if (gw_npy_stage(&staged[i], path[i], outs[i].dtype, outs[i].ndim, outs[i].shape, outs[i].data, err,
                         sizeof err)) {
            fprintf(stderr, "gpuwitness run ex2d_patch: %s%s\n", err,
                    strstr(err, "nothing written") ? "" : "; nothing written");
            rc = GW_EXIT_FAIL;
        }
    }
    if (rc != GW_EXIT_OK) { /* nothing renamed: every staged file goes */
        for (int i = 0; i < N_OUT; i++) gw_outfile_discard(&staged[i]);
        return rc;
    }
    if (gw_outfile_commit_all(staged, N_OUT, err, sizeof err)) { /* all four, or none */
        fprintf(stderr, "gpuwitness run ex2d_patch: %s\n", err);
        return GW_EXIT_FAIL;
    }
    for (int i = 0; i < N_OUT; i++) printf("  wrote %s\n", path[i]);
    return GW_EXIT_OK;
}

static int run_ex2d(const ex2d_opts *o, const ex2d_frame_config *cfg, const gw_device_choice *dev)
{
    ex2d_frame f;
    const double t0 = gw_cli_now_ms();
    const int made = ex2d_frame_make(cfg, &f);
    if (made) {
        fprintf(stderr, "gpuwitness run ex2d_patch: synthesising the frame: %s; nothing written\n",
                ex2d_synth_error_str(made));
        return GW_EXIT_FAIL;
    }
    const double synth_ms = gw_cli_now_ms() - t0;
    const ex2d_params *p = &f.params;
    printf("gpuwitness run ex2d_patch: tier %s, fibres %d..%d, bins %d..%d: %d patch(es), n <= %d, image %dx%d, seed "
           "0x%llx (synthesised in %.0f ms)\n", o->tier_name, cfg->fibre_first, cfg->fibre_first + cfg->nfibre - 1,
           cfg->wave_first, cfg->wave_first + cfg->nwave - 1, f.npatch, p->max_nspecpad * p->m, p->npix_x, p->npix_y,
           (unsigned long long)cfg->seed, synth_ms);
    const int gpu = dev->kind == GW_DEVICE_CUDA;
    if (gpu) printf("  device:   cuda:%d%s\n", dev->ordinal, gw_cli_emulated_note());
    else printf("  device:   cpu (ex2d_ref%s)\n", dev->fell_back ? ", no usable GPU" : ", --device cpu");
    ex2d_outputs out;
    if (ex2d_ref_outputs_alloc(p, f.npatch, &out)) {
        fprintf(stderr, "gpuwitness run ex2d_patch: out of memory for the outputs; nothing written\n");
        ex2d_frame_free(&f);
        return GW_EXIT_FAIL;
    }
    int rc = gw_ex2d_extract("gpuwitness run ex2d_patch", &f, dev, o->threads, &out);
    unsigned char *failed = rc == GW_EXIT_OK ? malloc((size_t)f.npatch) : NULL;
    if (rc == GW_EXIT_OK && !failed) {
        fprintf(stderr, "gpuwitness run ex2d_patch: out of memory; nothing written\n");
        rc = GW_EXIT_FAIL;
    }
    if (rc == GW_EXIT_OK)
        rc = gw_ex2d_judge_patches("gpuwitness run ex2d_patch", "their core is 0", &f, &out, -1.0, failed)
                 ? GW_EXIT_FAIL
                 : write_outputs(o->out_dir, &f, &out);
    free(failed);
    ex2d_ref_outputs_free(&out);
    ex2d_frame_free(&f);
    return rc;
}

int gw_ex2d_patch_run(int argc, char **argv)
{
    /* DESI files instead of a synthetic tier (ex2d_patch_desi.c) */
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--psf", 5) || !strncmp(argv[i], "--image", 7) || !strcmp(argv[i], "--out") ||
            !strncmp(argv[i], "--out=", 6))
            return gw_ex2d_run_desi(argc, argv);
    ex2d_opts o = {.tier_name = "L", .tier = EX2D_TIER_L};
    const char *extra = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m = 0, bad = 0;
        unsigned long long n = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(ex2d_help, stdout);
            return GW_EXIT_OK;
        }
        if (a[0] != '-' || !a[1]) {
            if (!extra) extra = a;
            continue;
        }
        if ((m = gw_cli_option(argc, argv, &i, "run ex2d_patch", "--device", &v)) > 0) {
            o.device = v;
        } else if (!m && (m = gw_cli_option(argc, argv, &i, "run ex2d_patch", "--out-dir", &v)) > 0) {
            o.out_dir = v;
        } else if (!m && (m = gw_cli_option(argc, argv, &i, "run ex2d_patch", "--tier", &v)) > 0) {
            o.tier_name = v;
            bad = parse_tier(v, &o.tier);
        } else if (!m && (m = gw_cli_option(argc, argv, &i, "run ex2d_patch", "--fibres", &v)) > 0) {
            bad = parse_range("--fibres", v, &o.fibre_first, &o.nfibre);
        } else if (!m && (m = gw_cli_option(argc, argv, &i, "run ex2d_patch", "--waves", &v)) > 0) {
            bad = parse_range("--waves", v, &o.wave_first, &o.nwave);
        } else if (!m && (m = gw_cli_option(argc, argv, &i, "run ex2d_patch", "--threads", &v)) > 0) {
            bad = parse_number("--threads", v, 1024, &n);
            o.threads = (int)n;
        } else if (!m && (m = gw_cli_option(argc, argv, &i, "run ex2d_patch", "--seed", &v)) > 0) {
            bad = parse_number("--seed", v, UINT64_MAX, &n);
            o.seed = n;
            o.have_seed = 1;
        } else if (!m) {
            fprintf(stderr, "gpuwitness run ex2d_patch: unknown option '%s': options are --tier, --fibres, --waves, "
                    "--device, --threads, --seed, --out-dir, --help\n", a);
            return GW_EXIT_USAGE;
        }
        if (m < 0 || bad) return GW_EXIT_USAGE;
    }
    if (extra) {
        fprintf(stderr, "gpuwitness run ex2d_patch: unexpected argument '%s': the frame is synthetic, ex2d_patch takes "
                "options only\n", extra);
        return GW_EXIT_USAGE;
    }
    if (!o.out_dir) {
        fprintf(stderr, "gpuwitness run ex2d_patch: missing --out-dir DIR: where flux.npy, ivar.npy, rdiags.npy and "
                "info.npy go\n");
        return GW_EXIT_USAGE;
    }
    struct stat st;
    if (stat(o.out_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gpuwitness run ex2d_patch: --out-dir '%s': not an existing directory (create it first)\n",
                o.out_dir);
        return GW_EXIT_USAGE;
    }
    char paths[N_OUT][4096];
    gw_cli_file outs[N_OUT];
    for (int i = 0; i < N_OUT; i++) {
        out_path(o.out_dir, i, paths[i], sizeof paths[i]);
        outs[i] = (gw_cli_file){NULL, paths[i], NULL};
    }
    if (gw_cli_check_outputs("gpuwitness run ex2d_patch", outs, N_OUT, NULL, 0)) return GW_EXIT_USAGE;
    ex2d_frame_config cfg;
    int rc = build_config(&o, &cfg);
    if (rc != GW_EXIT_OK) return rc;

    gw_device_choice dev;
    rc = gw_cli_select_device("run", o.device, &dev);
    if (rc == GW_EXIT_SKIP) {
        fprintf(stderr, "gpuwitness run ex2d_patch: no usable GPU for --device %s: %s; nothing written (exit 77; "
                "--device auto would run ex2d_ref on the CPU)\n", gw_cli_effective_device(o.device), dev.reason);
        return rc;
    }
    if (rc != GW_EXIT_OK) return rc;
    if (dev.fell_back)
        fprintf(stderr, "gpuwitness run ex2d_patch: no usable GPU: %s; running ex2d_ref on the CPU instead (auto)\n",
                dev.reason);
    return run_ex2d(&o, &cfg, &dev);
}
