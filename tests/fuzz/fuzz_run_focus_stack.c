/* SPDX-License-Identifier: MIT
 * `gpuwitness run focus_stack --device cpu ... INPUT` end to end, in one process, on a fuzzed stack: the steps
 * of tools/gpuwitness/kernels/focus_stack/focus_stack_run.c (static to the CLI, so followed here call for
 * call). The input is three control bytes, then the file:
 *   byte 0   bits 0-1 ksize (3, 5, 7, 3), bit 2 measure (log, lap), bits 3-4 border (zero, replicate,
 *            reflect101, zero), bit 5 ff as TIFF, bit 6 idx as TIFF, bit 7 best and focus as TIFF
 *   byte 1   window: 0 and 1 as they are, 255 the largest (7567), any other value made odd
 *   byte 2   bits 0-2 how the outputs are committed: 0 the last target is a directory (the set must fail and
 *            leave nothing), 1 every target exists already (replaced), else new files; bit 3 --out-best,
 *            bit 4 --out-focus (--out-ff and --out-idx always)
 *   rest     the file, through fuzz_memfile: a .npy or a TIFF by its first bytes, as the CLI decides
 * Steps and checks:
 *   read     gw_npy_read (uint16, rank 3 or 4) or gw_tiff_read_u16 (at most 255 pages); focus_stack_check
 *            must accept every stack the readers accept, except exactly those with Z above 255 (.npy);
 *            stacks above 64 Ki voxels, or above 1 Mi taps of the reference's work (a wide window
 *            costs 2W per voxel), stop there (the harness stays fast);
 *   compute  focus_stack_ref on one thread into poisoned outputs: idx < Z, ff the input at idx, no slice
 *            scores above idx, best = focus at idx (checked here, not by the CLI's helpers);
 *   write    each output staged (gw_npy_stage or gw_tiff_stage, by the name's extension, with the CLI's
 *            shapes: [N][Y][X] for a 4-D input; a TIFF of more than 65535 pages written as .npy instead),
 *            then gw_outfile_commit_all; after it the directory holds exactly the targets;
 *   check    every output read back (ff through the project's readers, idx, best and focus as .npy through
 *            gw_npy_read, as TIFF through libtiff directly) equals what was computed, byte for byte; a failed
 *            set leaves no file and its directory target empty. Then everything is removed.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tiffio.h>

#include "focus_stack_ref.h"
#include "fuzz_check.h"
#include "fuzz_memfile.h"
#include "fuzz_scratch.h"
#include "gw_npy.h"
#include "gw_outfile.h"
#include "gw_tiff.h"

/* As fuzz_tiff.c: a TIFF page is allocated at its declared size before decoding shows whether the data is
 * there, so one allocation over 1 GB fails (malloc returns NULL) instead of counting against the RSS limit. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1:max_allocation_size_mb=1024";
}

/* Inputs above either cap stop after the check: the harness stays fast (thousands of inputs a second). */
enum { max_voxels = 64 * 1024, max_work = 1 << 20, max_tiff_pages = 65535 };
enum { OUT_FF, OUT_IDX, OUT_BEST, OUT_FOCUS, N_OUT };

static const char *const out_names[N_OUT][2] = {
    {"ff.npy", "ff.tif"}, {"idx.npy", "idx.tif"}, {"best.npy", "best.tif"}, {"focus.npy", "focus.tif"}};
static const gw_npy_dtype npy_types[N_OUT] = {GW_NPY_U2, GW_NPY_U1, GW_NPY_F4, GW_NPY_F4};
static const gw_tiff_type tiff_types[N_OUT] = {GW_TIFF_U16, GW_TIFF_U8, GW_TIFF_F32, GW_TIFF_F32};
static const size_t item_bytes[N_OUT] = {2, 1, 4, 4};
static const char old_bytes[] = "old contents\n";

typedef struct output {
    int wanted, tiff;
    const char *name, *path;
    const void *data;
    size_t items;      /* elements */
    int ndim;          /* .npy */
    int64_t shape[4];  /* .npy */
    long pages;        /* TIFF */
} output;

/* A TIFF written by gw_tiff_stage, read with libtiff alone: pages of height x width samples of `bytes` each
 * (host order), compared with want. */
static void check_tiff_raw(const char *path, long pages, uint32_t height, uint32_t width, size_t bytes,
                           const uint8_t *want)
{
    TIFF *tif = TIFFOpen(path, "r");
    FUZZ_REQUIRE(tif != NULL, "libtiff cannot open the output %s", path);
    const size_t row = (size_t)width * bytes;
    uint8_t *buf = malloc(row ? row : 1);
    FUZZ_REQUIRE(buf != NULL, "out of memory");
    long page = 0;
    do {
        FUZZ_REQUIRE(page < pages, "%s: more than %ld pages", path, pages);
        uint32_t w = 0, h = 0;
        uint16_t bps = 0, spp = 0;
        TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
        TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
        TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
        TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
        FUZZ_REQUIRE(w == width && h == height && bps == bytes * 8 && spp == 1,
                     "%s page %ld: %ux%u, %u bits x %u, expected %ux%u, %zu bits x 1", path, page, h, w, bps, spp,
                     height, width, bytes * 8);
        FUZZ_REQUIRE((size_t)TIFFScanlineSize(tif) == row, "%s: scanline of %lld bytes", path,
                     (long long)TIFFScanlineSize(tif));
        for (uint32_t y = 0; y < height; y++) {
            FUZZ_REQUIRE(TIFFReadScanline(tif, buf, y, 0) == 1, "%s page %ld: row %u unreadable", path, page, y);
            FUZZ_REQUIRE(!memcmp(buf, want + ((size_t)page * height + y) * row, row), "%s page %ld: row %u differs",
                         path, page, y);
        }
        page++;
    } while (TIFFReadDirectory(tif));
    FUZZ_REQUIRE(page == pages, "%s: %ld pages, expected %ld", path, page, pages);
    free(buf);
    TIFFClose(tif);
}

static void check_output(const output *o, uint32_t y, uint32_t x, int which)
{
    char err[1024] = "";
    if (!o->tiff) {
        gw_npy_array a;
        FUZZ_REQUIRE(gw_npy_read(o->path, npy_types[which], o->ndim, o->ndim, NULL, &a, err, sizeof err) == 0,
                     "output %s does not read back: %s", o->name, err);
        FUZZ_REQUIRE(!memcmp(a.shape, o->shape, (size_t)o->ndim * sizeof o->shape[0]) && a.count == o->items,
                     "output %s: another shape read back", o->name);
        FUZZ_REQUIRE(!memcmp(a.data, o->data, o->items * item_bytes[which]), "output %s: the data differs", o->name);
        gw_npy_free(&a);
    } else if (which == OUT_FF) {
        gw_tiff_stack s;
        FUZZ_REQUIRE(gw_tiff_read_u16(o->path, 0, &s, err, sizeof err) == 0, "output %s does not read back: %s",
                     o->name, err);
        FUZZ_REQUIRE(s.pages == o->pages && s.height == y && s.width == x, "output %s: %d pages of %ux%u", o->name,
                     s.pages, s.height, s.width);
        FUZZ_REQUIRE(!memcmp(s.data, o->data, o->items * 2), "output %s: the data differs", o->name);
        gw_tiff_free(&s);
    } else {
        check_tiff_raw(o->path, o->pages, y, x, item_bytes[which], o->data);
    }
}

/* The outputs as the CLI's write_outputs stages and commits them, then checked. */
static void write_and_check(output *outs, int rank, focus_stack_params p, unsigned mode)
{
    char err[1024] = "";
    const char *names[N_OUT];
    gw_outfile staged[N_OUT];
    int n = 0, last = -1;
    for (int i = 0; i < N_OUT; i++) {
        output *o = &outs[i];
        if (!o->wanted) continue;
        const int per_slice = i == OUT_FOCUS;
        o->pages = (long)p.n * (per_slice ? p.z : 1);
        if (o->pages > max_tiff_pages) o->tiff = 0; /* the CLI refuses it: "write .npy instead" */
        o->name = out_names[i][o->tiff];
        o->path = fuzz_scratch_path(i, o->name);
        o->ndim = 0;
        if (rank == 4) o->shape[o->ndim++] = p.n;
        if (per_slice) o->shape[o->ndim++] = p.z;
        o->shape[o->ndim++] = p.y;
        o->shape[o->ndim++] = p.x;
        names[n] = o->name;
        last = i;
        n++;
    }
    if (mode == 0) FUZZ_REQUIRE(mkdir(outs[last].path, 0755) == 0, "mkdir: %s", strerror(errno));
    if (mode == 1)
        for (int i = 0; i < N_OUT; i++)
            if (outs[i].wanted) fuzz_put_file(outs[i].path, old_bytes, sizeof old_bytes - 1);
    int k = 0;
    for (int i = 0; i < N_OUT; i++) {
        const output *o = &outs[i];
        if (!o->wanted) continue;
        staged[k] = (gw_outfile)GW_OUTFILE_INIT;
        const int rc = o->tiff ? gw_tiff_stage(&staged[k], o->path, tiff_types[i], (int)o->pages, (uint32_t)p.y,
                                               (uint32_t)p.x, o->data, err, sizeof err)
                               : gw_npy_stage(&staged[k], o->path, npy_types[i], o->ndim, o->shape, o->data, err,
                                              sizeof err);
        FUZZ_REQUIRE(rc == 0, "output %s cannot be staged: %s", o->name, err);
        k++;
    }
    const int rc = gw_outfile_commit_all(staged, (size_t)n, err, sizeof err);
    for (int i = 0; i < n; i++) {
        FUZZ_REQUIRE(staged[i].tmp == NULL && staged[i].path == NULL, "the commit left staged file %d", i);
        gw_outfile_discard(&staged[i]);
    }
    if (mode == 0) {
        FUZZ_REQUIRE(rc == -1, "a set whose last target is a directory was committed");
        FUZZ_REQUIRE(strstr(err, outs[last].path) != NULL, "the error does not name the directory: '%s'", err);
        fuzz_scratch_expect(&names[n - 1], 1, "after a failed commit");
        struct stat st;
        FUZZ_REQUIRE(stat(outs[last].path, &st) == 0 && S_ISDIR(st.st_mode), "the directory target is gone");
        FUZZ_REQUIRE(rmdir(outs[last].path) == 0, "the directory target is not empty after the failed commit");
    } else {
        FUZZ_REQUIRE(rc == 0, "commit failed: %s", err);
        fuzz_scratch_expect(names, (size_t)n, "after the commit");
        for (int i = 0; i < N_OUT; i++)
            if (outs[i].wanted) check_output(&outs[i], (uint32_t)p.y, (uint32_t)p.x, i);
        fuzz_scratch_expect(names, (size_t)n, "after reading back");
    }
    fuzz_scratch_clear();
}

static int is_tiff_magic(const uint8_t *m, size_t size)
{
    return size >= 4 && (!memcmp(m, "II*\0", 4) || !memcmp(m, "MM\0*", 4) || !memcmp(m, "II+\0", 4) ||
                         !memcmp(m, "MM\0+", 4));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_scratch_dir("fuzz_run_focus_stack");
    if (size < 3) return 0;
    static const int ksizes[4] = {3, 5, 7, 3};
    const unsigned c0 = data[0], c1 = data[1], c2 = data[2];
    focus_stack_params p = {.ksize = ksizes[c0 & 3], .measure = (int)(c0 >> 2) & 1,
                            .border = (int)((c0 >> 3) & 3) % 3,
                            .window = c1 < 2 ? (int)c1 : c1 == 255 ? FOCUS_STACK_MAX_WINDOW : (int)(c1 | 1)};
    const unsigned mode = c2 & 7;
    const uint8_t *file = data + 3;
    const size_t file_size = size - 3;
    const char *path = fuzz_memfile(file, file_size);

    /* read_input: the format by the first bytes */
    char err[1024] = "";
    int rank = 3;
    int64_t dims[4] = {1, 1, 1, 1}; /* n, z, y, x */
    const uint16_t *in = NULL;
    gw_npy_array npy = {0};
    gw_tiff_stack tiff = {0};
    if (file_size >= 6 && !memcmp(file, "\x93NUMPY", 6)) {
        if (gw_npy_read(path, GW_NPY_U2, 3, 4, "[Z][Y][X] or [N][Z][Y][X]", &npy, err, sizeof err) != 0) goto refused;
        rank = npy.ndim;
        for (int i = 0; i < rank; i++) dims[4 - rank + i] = npy.shape[i];
        in = npy.data;
    } else if (is_tiff_magic(file, file_size)) {
        if (gw_tiff_read_u16(path, FOCUS_STACK_MAX_Z, &tiff, err, sizeof err) != 0) goto refused;
        FUZZ_REQUIRE(tiff.pages >= 1 && tiff.pages <= FOCUS_STACK_MAX_Z && tiff.height && tiff.width,
                     "gw_tiff_read_u16: %d pages of %ux%u", tiff.pages, tiff.height, tiff.width);
        dims[1] = tiff.pages;
        dims[2] = tiff.height;
        dims[3] = tiff.width;
        in = tiff.data;
    } else {
        goto refused;
    }
    /* A .npy holds every voxel, so each size is below its byte count; a compressed TIFF page need not, and
     * the CLI refuses a size above INT_MAX ("more than focus_stack takes"). */
    for (int i = 0; i < 4; i++) {
        FUZZ_REQUIRE(dims[i] >= 1 && (!npy.data || dims[i] <= (int64_t)file_size),
                     "dimension %d is %lld for a file of %zu bytes", i, (long long)dims[i], file_size);
        if (dims[i] > INT_MAX) goto done;
    }
    p.n = (int)dims[0], p.z = (int)dims[1], p.y = (int)dims[2], p.x = (int)dims[3];
    const int status = focus_stack_check(&p, in, in, in);
    FUZZ_REQUIRE(status == (p.z > FOCUS_STACK_MAX_Z ? FOCUS_STACK_ERR_DIM : FOCUS_STACK_OK),
                 "focus_stack_check: %s for N=%d Z=%d Y=%d X=%d", focus_stack_status_str(status), p.n, p.z, p.y, p.x);
    const size_t plane = (size_t)p.y * p.x, pixels = (size_t)p.n * plane, voxels = pixels * (size_t)p.z;
    /* The reference's cost per voxel: the blur and Laplacian taps, and a window's row and column sums (2W
     * each: a 7567-wide window on a 3-pixel image costs as much as on a large one). */
    const uint64_t work = (uint64_t)voxels * (2u * (unsigned)p.ksize * (unsigned)p.ksize + 2u * (unsigned)p.window);
    if (status != FOCUS_STACK_OK || voxels > max_voxels || work > max_work) goto done;

    /* compute_on_cpu */
    output outs[N_OUT] = {{.wanted = 1, .tiff = (int)(c0 >> 5) & 1},
                          {.wanted = 1, .tiff = (int)(c0 >> 6) & 1},
                          {.wanted = (int)(c2 >> 3) & 1, .tiff = (int)(c0 >> 7) & 1},
                          {.wanted = (int)(c2 >> 4) & 1, .tiff = (int)(c0 >> 7) & 1}};
    uint8_t *idx = malloc(pixels);
    uint16_t *ff = malloc(pixels * 2);
    float *best = outs[OUT_BEST].wanted ? malloc(pixels * 4) : NULL;
    float *focus = outs[OUT_FOCUS].wanted ? malloc(voxels * 4) : NULL;
    FUZZ_REQUIRE(idx && ff && (best || !outs[OUT_BEST].wanted) && (focus || !outs[OUT_FOCUS].wanted), "out of memory");
    memset(idx, 0xFF, pixels);
    memset(ff, 0xFF, pixels * 2);
    if (best) memset(best, 0xFF, pixels * 4);
    if (focus) memset(focus, 0xFF, voxels * 4);
    const int rc = focus_stack_ref(&p, in, idx, ff, best, focus, 1);
    FUZZ_REQUIRE(rc == FOCUS_STACK_OK, "focus_stack_ref: %s", focus_stack_status_str(rc));
    for (size_t i = 0; i < pixels; i++) {
        const size_t s = i / plane, pix = i % plane;
        FUZZ_REQUIRE(idx[i] < p.z, "pixel %zu: idx %u, Z %d", i, (unsigned)idx[i], p.z);
        FUZZ_REQUIRE(ff[i] == in[(s * (size_t)p.z + idx[i]) * plane + pix], "pixel %zu: ff is not the input at idx", i);
        if (focus) {
            const float *f = focus + s * (size_t)p.z * plane + pix;
            for (int z = 0; z < p.z; z++)
                FUZZ_REQUIRE(f[(size_t)z * plane] <= f[(size_t)idx[i] * plane], "pixel %zu: slice %d scores above idx",
                             i, z);
            if (best) FUZZ_REQUIRE(!memcmp(&best[i], &f[(size_t)idx[i] * plane], 4), "pixel %zu: best != focus[idx]", i);
        }
        if (best) FUZZ_REQUIRE(best[i] >= 0, "pixel %zu: best %g", i, (double)best[i]);
    }
    outs[OUT_FF].data = ff, outs[OUT_FF].items = pixels;
    outs[OUT_IDX].data = idx, outs[OUT_IDX].items = pixels;
    outs[OUT_BEST].data = best, outs[OUT_BEST].items = pixels;
    outs[OUT_FOCUS].data = focus, outs[OUT_FOCUS].items = voxels;
    write_and_check(outs, rank, p, mode);
    free(idx);
    free(ff);
    free(best);
    free(focus);
    goto done;

refused:
    FUZZ_REQUIRE(!npy.data && !tiff.data, "a refused input left an array");
done:
    fuzz_scratch_expect(NULL, 0, "after the input");
    gw_npy_free(&npy);
    gw_tiff_free(&tiff);
    return 0;
}
