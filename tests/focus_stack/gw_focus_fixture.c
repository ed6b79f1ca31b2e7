/* SPDX-License-Identifier: MIT
 * Test fixtures for `gpuwitness run focus-stack` (tests/focus_stack/cli.cmake), made at test time so no binary
 * file is checked in. Plain C, no CUDA.
 *
 *   gw_focus_fixture gen DIR        writes into DIR (created if missing):
 *       stack.npy [5][67][133], stack4.npy [1][5][67][133], stack.tif (5 pages): the same known-focus
 *       synthetic stack (focus_stack_synth.h, seed 3), and its expected outputs at the defaults, computed by
 *       focus_stack_ref: expect_ff.npy, expect_idx.npy, expect_best.npy ([67][133]);
 *       batch.npy [2][4][23][31], full-range random (seed 5), and its expected outputs at --ksize 5
 *       --measure lap --border reflect101 --window 3: expect_batch_{ff,idx,best}.npy [2][23][31] and
 *       expect_batch_focus.npy [2][4][23][31];
 *       bad/: one file per malformed-input case (see make_bad_files).
 *   gw_focus_fixture compare A B    A and B (.npy or TIFF; uint8, uint16 or float32) hold the same values:
 *                                   same element type and count, identical bytes. Exit 0 same, 1 not.
 *   gw_focus_fixture known IDX      IDX (.npy or TIFF, uint8, [67][133]) is the known answer for stack.npy
 *                                   at the defaults: the in-focus slice on textured pixels, 0 on flat ones.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tiffio.h>

#include "focus_stack_ref.h"
#include "focus_stack_synth.h"
#include "gw_npy.h"
#include "gw_tiff.h"

enum { STACK_Z = 5, STACK_Y = 67, STACK_X = 133, STACK_SEED = 3 };
enum { BATCH_N = 2, BATCH_Z = 4, BATCH_Y = 23, BATCH_X = 31, BATCH_SEED = 5 };

static char dir_path[4096];

static const char *at(const char *name)
{
    static char buf[2][4200];
    static int which;
    which ^= 1;
    snprintf(buf[which], sizeof buf[which], "%s/%s", dir_path, name);
    return buf[which];
}

static int write_npy(const char *name, gw_npy_dtype t, int ndim, const int64_t *shape, const void *data)
{
    char err[1024];
    if (gw_npy_write(at(name), t, ndim, shape, data, err, sizeof err) == 0) return 0;
    fprintf(stderr, "gw_focus_fixture: %s\n", err);
    return -1;
}

static int write_raw(const char *name, const void *bytes, size_t len)
{
    FILE *f = fopen(at(name), "wb");
    if (!f || fwrite(bytes, 1, len, f) != len) {
        fprintf(stderr, "gw_focus_fixture: cannot write %s\n", at(name));
        if (f) fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* A .npy image with the given header text (padded as numpy pads) and data_len bytes of zeros. */
static int write_npy_text(const char *name, const char *text, size_t data_len)
{
    size_t hlen = strlen(text) + 1;
    hlen += (64 - (10 + hlen) % 64) % 64;
    uint8_t *b = calloc(10 + hlen + data_len + 1, 1);
    if (!b) return -1;
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (uint8_t)hlen;
    b[9] = (uint8_t)(hlen >> 8);
    memset(b + 10, ' ', hlen);
    memcpy(b + 10, text, strlen(text));
    b[10 + hlen - 1] = '\n';
    const int rc = write_raw(name, b, 10 + hlen + data_len);
    free(b);
    return rc;
}

/* Pages of one TIFF written with libtiff directly: what gw_tiff_write cannot make. */
static int write_tiff_pages(const char *name, int n, const uint32_t *widths, uint16_t spp, uint16_t photometric)
{
    TIFF *tif = TIFFOpen(at(name), "w");
    if (!tif) return -1;
    int ok = 1;
    for (int p = 0; p < n && ok; p++) {
        const uint32_t w = widths[p], h = 4;
        uint16_t row[64 * 3] = {0};
        ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w) && TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h) &&
             TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 16) && TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, spp) &&
             TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, photometric) &&
             TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
             TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, h);
        for (uint32_t y = 0; y < h && ok; y++) ok = TIFFWriteScanline(tif, row, y, 0) == 1;
        ok = ok && TIFFWriteDirectory(tif);
    }
    TIFFClose(tif);
    return ok ? 0 : -1;
}

static int make_bad_files(void)
{
    const size_t len = strlen(dir_path);
    if (len + sizeof "/bad" > sizeof dir_path) return -1;
    memcpy(dir_path + len, "/bad", sizeof "/bad");
    mkdir(dir_path, 0777);
    int rc = 0;
    rc |= write_raw("bad_magic.npy", "this is not numpy\n", 18);
    rc |= write_raw("not_a_stack.dat", "P5\n2 2\n255\n0000", 15);
    rc |= write_npy_text("fortran.npy", "{'descr': '<u2', 'fortran_order': True, 'shape': (2, 3, 4), }", 48);
    rc |= write_npy_text("float64.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 4), }", 192);
    rc |= write_npy_text("rank2.npy", "{'descr': '<u2', 'fortran_order': False, 'shape': (3, 4), }", 24);
    rc |= write_npy_text("truncated.npy", "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3, 4), }", 47);
    rc |= write_npy_text("trailing.npy", "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3, 4), }", 50);
    rc |= write_npy_text("z256.npy", "{'descr': '<u2', 'fortran_order': False, 'shape': (256, 2, 2), }", 2048);
    const uint8_t u8[12] = {0};
    const float f32[12] = {0};
    char err[1024];
    if (gw_tiff_write(at("u8.tif"), GW_TIFF_U8, 1, 3, 4, u8, err, sizeof err) ||
        gw_tiff_write(at("float.tif"), GW_TIFF_F32, 1, 3, 4, f32, err, sizeof err)) {
        fprintf(stderr, "gw_focus_fixture: %s\n", err);
        rc = -1;
    }
    const uint32_t same[1] = {5}, mixed[3] = {5, 5, 6};
    rc |= write_tiff_pages("rgb.tif", 1, same, 3, PHOTOMETRIC_RGB);
    rc |= write_tiff_pages("mismatched.tif", 3, mixed, 1, PHOTOMETRIC_MINISBLACK);
    dir_path[len] = '\0';
    return rc ? -1 : 0;
}

static int gen(const char *dir)
{
    snprintf(dir_path, sizeof dir_path, "%s", dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "gw_focus_fixture: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    int rc = 0;
    /* the known-focus stack and its outputs at the defaults */
    const focus_stack_params p = {.n = 1, .z = STACK_Z, .y = STACK_Y, .x = STACK_X, .ksize = 3};
    const size_t px = (size_t)STACK_Y * STACK_X, voxels = px * STACK_Z;
    uint16_t *in = malloc(voxels * 2), *ff = malloc(px * 2);
    uint8_t *idx = malloc(px);
    float *best = malloc(px * 4);
    focus_stack_synth s;
    if (!in || !ff || !idx || !best || focus_stack_synth_make(&s, 1, STACK_Z, STACK_Y, STACK_X, STACK_SEED, in)) {
        fprintf(stderr, "gw_focus_fixture: out of memory\n");
        free(in), free(ff), free(idx), free(best);
        return 1;
    }
    focus_stack_synth_free(&s);
    const int64_t s3[3] = {STACK_Z, STACK_Y, STACK_X}, s4[4] = {1, STACK_Z, STACK_Y, STACK_X},
                  s2[2] = {STACK_Y, STACK_X};
    char err[1024];
    rc |= write_npy("stack.npy", GW_NPY_U2, 3, s3, in);
    rc |= write_npy("stack4.npy", GW_NPY_U2, 4, s4, in);
    if (gw_tiff_write(at("stack.tif"), GW_TIFF_U16, STACK_Z, STACK_Y, STACK_X, in, err, sizeof err)) {
        fprintf(stderr, "gw_focus_fixture: %s\n", err);
        rc = -1;
    }
    if (focus_stack_ref(&p, in, idx, ff, best, NULL, 1) != FOCUS_STACK_OK) rc = -1;
    rc |= write_npy("expect_ff.npy", GW_NPY_U2, 2, s2, ff);
    rc |= write_npy("expect_idx.npy", GW_NPY_U1, 2, s2, idx);
    rc |= write_npy("expect_best.npy", GW_NPY_F4, 2, s2, best);
    free(in), free(ff), free(idx), free(best);

    /* the random batch and its outputs at non-default parameters */
    const focus_stack_params q = {.n = BATCH_N, .z = BATCH_Z, .y = BATCH_Y, .x = BATCH_X, .ksize = 5,
                                  .measure = FOCUS_STACK_LAP_ABS, .border = FOCUS_STACK_BORDER_REFLECT101,
                                  .window = 3};
    const size_t qpx = (size_t)BATCH_N * BATCH_Y * BATCH_X, qvox = qpx * BATCH_Z;
    in = malloc(qvox * 2);
    ff = malloc(qpx * 2);
    idx = malloc(qpx);
    best = malloc(qpx * 4);
    float *focus = malloc(qvox * 4);
    if (in && ff && idx && best && focus) {
        focus_stack_random_u16(in, qvox, BATCH_SEED, 65535);
        const int64_t b4[4] = {BATCH_N, BATCH_Z, BATCH_Y, BATCH_X}, b3[3] = {BATCH_N, BATCH_Y, BATCH_X};
        rc |= write_npy("batch.npy", GW_NPY_U2, 4, b4, in);
        if (focus_stack_ref(&q, in, idx, ff, best, focus, 1) != FOCUS_STACK_OK) rc = -1;
        rc |= write_npy("expect_batch_ff.npy", GW_NPY_U2, 3, b3, ff);
        rc |= write_npy("expect_batch_idx.npy", GW_NPY_U1, 3, b3, idx);
        rc |= write_npy("expect_batch_best.npy", GW_NPY_F4, 3, b3, best);
        rc |= write_npy("expect_batch_focus.npy", GW_NPY_F4, 4, b4, focus);
    } else {
        rc = -1;
    }
    free(in), free(ff), free(idx), free(best), free(focus);
    rc |= make_bad_files();
    if (rc) fprintf(stderr, "gw_focus_fixture: gen %s failed\n", dir);
    else printf("gw_focus_fixture: wrote the fixtures into %s\n", dir);
    return rc ? 1 : 0;
}

/* ---- reading any output back ---- */

typedef struct values {
    size_t item, count;
    uint8_t *bytes;
    char what[64];
} values;

static int read_tiff_any(const char *path, values *v)
{
    TIFF *tif = TIFFOpen(path, "r");
    if (!tif) return -1;
    int ok = 1;
    size_t cap = 0;
    do {
        uint32_t w = 0, h = 0;
        uint16_t bits = 0, spp = 1, fmt = SAMPLEFORMAT_UINT;
        TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
        TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
        TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
        TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
        TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &fmt);
        if (spp != 1 || (bits != 8 && bits != 16 && bits != 32) || (v->item && v->item != bits / 8u)) {
            ok = 0;
            break;
        }
        v->item = bits / 8u;
        snprintf(v->what, sizeof v->what, "%s%u (TIFF)", fmt == SAMPLEFORMAT_IEEEFP ? "float" : "uint", bits);
        const size_t page = (size_t)w * h * v->item;
        uint8_t *grown = realloc(v->bytes, cap + page);
        if (!grown) {
            ok = 0;
            break;
        }
        v->bytes = grown;
        const tmsize_t strip = TIFFStripSize(tif);
        size_t done = 0;
        for (uint32_t s = 0; s < TIFFNumberOfStrips(tif) && done < page; s++) {
            const tmsize_t n = TIFFReadEncodedStrip(tif, s, v->bytes + cap + done,
                                                    (tmsize_t)(page - done) < strip ? (tmsize_t)(page - done) : strip);
            if (n < 0) {
                ok = 0;
                break;
            }
            done += (size_t)n;
        }
        if (done != page) ok = 0;
        cap += page;
        v->count += (size_t)w * h;
    } while (ok && TIFFReadDirectory(tif));
    TIFFClose(tif);
    return ok ? 0 : -1;
}

static int read_values(const char *path, values *v)
{
    memset(v, 0, sizeof *v);
    char err[1024];
    FILE *f = fopen(path, "rb");
    uint8_t magic[6] = {0};
    if (!f) {
        fprintf(stderr, "gw_focus_fixture: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    const size_t got = fread(magic, 1, 6, f);
    fclose(f);
    if (got == 6 && !memcmp(magic, "\x93NUMPY", 6)) {
        gw_npy_array a;
        if (gw_npy_read(path, GW_NPY_ANY, 1, GW_NPY_MAX_NDIM, NULL, &a, err, sizeof err)) {
            fprintf(stderr, "gw_focus_fixture: %s\n", err);
            return -1;
        }
        v->item = gw_npy_dtype_size(a.dtype);
        v->count = a.count;
        v->bytes = a.data;
        snprintf(v->what, sizeof v->what, "%s (.npy)", gw_npy_dtype_name(a.dtype));
        return 0;
    }
    if (read_tiff_any(path, v)) {
        fprintf(stderr, "gw_focus_fixture: %s: not a .npy file or a 1-sample 8/16/32-bit TIFF\n", path);
        free(v->bytes);
        return -1;
    }
    return 0;
}

static int compare(const char *a_path, const char *b_path)
{
    values a, b;
    if (read_values(a_path, &a)) return 1;
    if (read_values(b_path, &b)) {
        free(a.bytes);
        return 1;
    }
    int rc = 0;
    if (a.item != b.item || a.count != b.count) {
        fprintf(stderr, "gw_focus_fixture: %s holds %zu values of %s, %s holds %zu values of %s\n", a_path, a.count,
                a.what, b_path, b.count, b.what);
        rc = 1;
    } else if (memcmp(a.bytes, b.bytes, a.count * a.item) != 0) {
        size_t first = 0, diffs = 0;
        for (size_t i = 0; i < a.count; i++)
            if (memcmp(a.bytes + i * a.item, b.bytes + i * a.item, a.item) != 0 && diffs++ == 0) first = i;
        fprintf(stderr, "gw_focus_fixture: %s and %s differ in %zu of %zu values, first at element %zu\n", a_path,
                b_path, diffs, a.count, first);
        rc = 1;
    } else {
        printf("gw_focus_fixture: %s == %s (%zu values of %s)\n", a_path, b_path, a.count, a.what);
    }
    free(a.bytes);
    free(b.bytes);
    return rc;
}

static int known(const char *idx_path)
{
    values v;
    if (read_values(idx_path, &v)) return 1;
    int rc = 1;
    const size_t px = (size_t)STACK_Y * STACK_X;
    uint16_t *in = malloc(px * STACK_Z * 2);
    focus_stack_synth s;
    if (v.item != 1 || v.count != px) {
        fprintf(stderr, "gw_focus_fixture: %s holds %zu values of %s, expected %zu uint8\n", idx_path, v.count,
                v.what, px);
    } else if (!in || focus_stack_synth_make(&s, 1, STACK_Z, STACK_Y, STACK_X, STACK_SEED, in)) {
        fprintf(stderr, "gw_focus_fixture: out of memory\n");
    } else {
        focus_stack_synth_report r;
        if (focus_stack_synth_verify(&s, v.bytes, focus_stack_synth_margin(3, 0, 0), &r) || r.textured_checked == 0 ||
            r.flat_checked == 0) {
            fprintf(stderr, "gw_focus_fixture: %s: %zu of %zu textured and %zu of %zu flat pixels wrong; first at "
                    "(y=%d, x=%d): idx %d, expected %d\n", idx_path, r.textured_wrong, r.textured_checked,
                    r.flat_wrong, r.flat_checked, r.first_y, r.first_x, r.first_got, r.first_want);
        } else {
            printf("gw_focus_fixture: %s: the in-focus slice on all %zu textured pixels, 0 on all %zu flat pixels\n",
                   idx_path, r.textured_checked, r.flat_checked);
            rc = 0;
        }
        focus_stack_synth_free(&s);
    }
    free(in);
    free(v.bytes);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "gen")) return gen(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "compare")) return compare(argv[2], argv[3]);
    if (argc == 3 && !strcmp(argv[1], "known")) return known(argv[2]);
    fprintf(stderr, "usage: gw_focus_fixture gen DIR | compare A B | known IDX\n");
    return 2;
}
