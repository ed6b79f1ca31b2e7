/* SPDX-License-Identifier: MIT
 * Bad-input tables of gw_desi (lib/io/include/gw_desi.h). PSF and image readers: one row per rule, each on a
 * small file made at test time (desi_fits_make.c: a good synthetic file with one thing broken: a keyword, a
 * parameter, an HDU named twice or of the wrong kind, a damaged compressed header, a GZIP tile cut short or
 * overlong, bytes appended), plus files that are not FITS at all, cut short (in the data or inside a header),
 * empty, a directory, a FIFO (fails at once, never blocks), missing. Each row checks the return (-1), that the
 * message names the file and holds the row's words (HDU, keyword, column or parameter, rule), and that the
 * output comes back zeroed from a garbage-filled struct. Writers: NULL and impossible arguments, values a
 * reader would refuse, a missing directory; each row checks that the work directory is exactly as before
 * (nothing written, an existing target kept).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <criterion/criterion.h>
#include <math.h>

#include "bad_input_util.h"
#include "desi_fits_make.h"
#include "desi_test_util.h"
#include "gw_desi.h"
#include "gw_test_util.h"

enum { F_SYN = 0, F_TEXT, F_EMPTY, F_DIR, F_FIFO, F_MISSING, F_HALF, F_CUT_HEADER, F_NULL_PATH, F_NULL_OUT };

typedef struct psf_case {
    const char *name;
    int file;
    desi_psf_opts o;
    const char *words;
} psf_case;

#define V2(...) {.ver = 2, __VA_ARGS__}
#define V3(...) {.ver = 3, __VA_ARGS__}

static const psf_case psf_cases[] = {
    {"missing file", F_MISSING, V2(), "cannot open"},
    {"empty file", F_EMPTY, V2(), "empty file (0 bytes): not a FITS file"},
    {"a directory", F_DIR, V2(), "not a regular file (a directory)"},
    {"a FIFO", F_FIFO, V2(), "not a regular file (a FIFO)"},
    {"a text file", F_TEXT, V2(), "not a FITS file"},
    {"cut in half", F_HALF, V2(), "truncated"},
    {"cut inside HDU 1's header", F_CUT_HEADER, V2(),
     "HDU 1: truncated inside its header: it starts at byte 2880, the file ends at byte 3880 before its END card"},
    {"100 bytes appended", F_SYN, V2(.append = 100),
     "100 bytes after the last HDU (HDU 1 ends at byte 8640): a FITS file ends with its last HDU and is a whole "
     "number of 2880-byte blocks"},
    {"a block of text appended", F_SYN, V2(.append = 2880, .append_byte = 'x'),
     "2880 bytes after the last HDU (HDU 1 ends at byte 8640): a FITS file ends with its last HDU"},
    {"a block of zeros appended", F_SYN, V2(.append = 2880), "2880 bytes after the last HDU (HDU 1 ends at byte 8640)"},
    {"PSFTYPE wrong", F_SYN, V2(.bad_key = "PSFTYPE", .bad_value = "'SPOTGRID'"),
     "HDU 0: keyword PSFTYPE = 'SPOTGRID'|'GAUSS-HERMITE'"},
    {"PSFTYPE missing", F_SYN, V2(.drop_key = "PSFTYPE"), "HDU 0: keyword PSFTYPE missing"},
    {"PSFVER 4", F_SYN, V2(.bad_key = "PSFVER", .bad_value = "'4'"), "HDU 0: keyword PSFVER = '4'|2 and 3"},
    {"PSFVER 2.5", F_SYN, V2(.bad_key = "PSFVER", .bad_value = "2.5"), "keyword PSFVER = '2.5'|2 and 3"},
    {"PSFVER missing", F_SYN, V2(.drop_key = "PSFVER"), "HDU 0: keyword PSFVER missing"},
    {"no HDU 1", F_SYN, V2(.no_table = 1), "HDU 1: missing"},
    {"HSIZEX missing", F_SYN, V2(.drop_key = "HSIZEX"), "HDU 1: keyword HSIZEX missing"},
    {"HSIZEX 16", F_SYN, V2(.bad_key = "HSIZEX", .bad_value = "16"), "HDU 1: keyword HSIZEX = 16|0..15|EX2D_MAX_HALF_SIZE"},
    {"HSIZEY -1", F_SYN, V2(.bad_key = "HSIZEY", .bad_value = "-1"), "HDU 1: keyword HSIZEY = -1|0..15"},
    {"HSIZEX 2.5", F_SYN, V2(.bad_key = "HSIZEX", .bad_value = "2.5"), "keyword HSIZEX = 2.5|integer"},
    {"GHDEGX 9", F_SYN, V2(.bad_key = "GHDEGX", .bad_value = "9"), "keyword GHDEGX = 9|0..8|EX2D_MAX_DEGREE"},
    {"NPIX_X 0", F_SYN, V2(.bad_key = "NPIX_X", .bad_value = "0"), "HDU 1: keyword NPIX_X = 0|integer in 1.."},
    {"NPIX_X x NPIX_Y above GW_DESI_MAX_PIXELS", F_SYN, V2(.bad_key = "NPIX_X", .bad_value = "1000000"),
     "HDU 1: keywords NPIX_X x NPIX_Y = 1000000 x 200 = 200000000 pixels: more than GW_DESI_MAX_PIXELS = 33554432"},
    {"NPIX_Y a string", F_SYN, V2(.bad_key = "NPIX_Y", .bad_value = "'abc'"), "HDU 1: keyword NPIX_Y: not a number"},
    {"FIBERMAX < FIBERMIN", F_SYN, V2(.bad_key = "FIBERMAX", .bad_value = "5"),
     "HDU 1: keywords FIBERMAX = 5 < FIBERMIN = 10"},
    {"FIBERMIN missing", F_SYN, V2(.drop_key = "FIBERMIN"), "HDU 1: keyword FIBERMIN missing"},
    {"NaN coefficient", F_SYN, V2(.nan_param = "GH-1-0"), "HDU 1: parameter GH-1-0, fibre 1 (global 11)|nan|finite"},
    {"GH-1-1 missing", F_SYN, V2(.drop_param = "GH-1-1"),
     "HDU 1: parameter GH-1-1 missing (GHDEGX = 1, GHDEGY = 1 need GH-i-j for i in 0..1, j in 0..1)"},
    {"TAILINDE missing", F_SYN, V2(.drop_param = "TAILINDE"), "HDU 1: parameter TAILINDE missing"},
    {"X missing (v2)", F_SYN, V2(.drop_param = "X"), "HDU 1: parameter X missing"},
    {"duplicate PARAM", F_SYN, V2(.dup_param = "GHSIGX"), "HDU 1: duplicate PARAM 'GHSIGX' (rows 3 and 4)"},
    {"COEFF short", F_SYN, V2(.short_coeff = 1), "HDU 1: column COEFF: each row holds 3 values|nfibre*ncoef|nfibre = 2"},
    {"COEFF missing", F_SYN, V2(.drop_coeff_col = 1), "HDU 1: column COEFF missing"},
    {"WAVEMIN >= WAVEMAX", F_SYN, V2(.swap_param = "TAILAMP"),
     "HDU 1: parameter TAILAMP (row 9): WAVEMIN = 6000, WAVEMAX = 5000|WAVEMIN < WAVEMAX"},
    {"v3: no PSF HDU", F_SYN, V3(.table_extname = "PSFX"), "HDU 'PSF' missing"},
    {"v3: PSF twice", F_SYN, V3(.extra_hdu = "PSF"), "HDUs 1 and 4 are both named 'PSF': expected one"},
    {"v3: XTRACE twice", F_SYN, V3(.extra_hdu = "XTRACE"), "HDUs 2 and 4 are both named 'XTRACE': expected one"},
    {"v3: YTRACE twice, case aside", F_SYN, V3(.extra_hdu = "ytrace"),
     "HDUs 3 and 4 are both named 'YTRACE': expected one"},
    {"v3: PSF an image", F_SYN, V3(.table_extname = "PSFX", .extra_hdu = "PSF"),
     "HDU 'PSF' (HDU 4) is an image: expected a binary table"},
    {"v3: WAVEMIN >= WAVEMAX", F_SYN, V3(.bad_key = "WAVEMIN", .bad_value = "7000.0"),
     "HDU 'PSF': keywords WAVEMIN = 7000 >= WAVEMAX = 6000"},
    {"v3: WAVEMAX missing", F_SYN, V3(.drop_key = "WAVEMAX"), "HDU 'PSF': keyword WAVEMAX missing"},
    {"v3: GH-0-1 missing", F_SYN, V3(.drop_param = "GH-0-1"), "HDU 'PSF': parameter GH-0-1 missing"},
    {"v3: XTRACE of 3 rows", F_SYN, V3(.trace_rows = 3), "HDU 'XTRACE': shape|[3][2]|nfibre = 2"},
    {"v3: YTRACE missing", F_SYN, V3(.drop_trace = "YTRACE"), "HDU 'YTRACE' missing"},
    {"v3: XTRACE without WAVEMIN", F_SYN, V3(.trace_drop_key = "WAVEMIN"), "HDU 'XTRACE': keyword WAVEMIN missing"},
    {"v3: XTRACE domain reversed", F_SYN, V3(.trace_wmin = 7000, .trace_wmax = 6000),
     "HDU 'XTRACE': keywords WAVEMIN = 7000 >= WAVEMAX = 6000"},
    {"v3: NaN in XTRACE", F_SYN, V3(.nan_param = "X"), "HDU 'XTRACE': parameter X, fibre 1 (global 11)|nan"},
    {"path NULL", F_NULL_PATH, V2(), "gw_desi_psf_read: no path given"},
    {"psf NULL", F_NULL_OUT, V2(), "gw_desi_psf_read: the PSF psf is NULL"},
};

static char *work;

static void setup(void)
{
    work = bi_make_dir("desi_bad");
}

static void teardown(void)
{
    gw_remove_dir(work);
    free(work);
}

/* Makes the row's file (kinds other than F_SYN and the image rows' own writer) and returns its path. */
static const char *make_file(int kind, char *path, size_t size)
{
    snprintf(path, size, "%s/bad.fits", work);
    switch (kind) {
    case F_TEXT: bi_write_file(path, "SIMPLE? no, this is text\n", 25); break;
    case F_EMPTY: bi_write_file(path, "", 0); break;
    case F_DIR: snprintf(path, size, "%s", work); break;
    case F_FIFO:
        snprintf(path, size, "%s/f.fifo", work);
        cr_assert_eq(mkfifo(path, 0600), 0);
        break;
    case F_MISSING: snprintf(path, size, "%s/missing.fits", work); break;
    default: break;
    }
    return path;
}

/* Cuts the file at path: F_HALF to half its size, F_CUT_HEADER 1000 bytes into HDU 1 (the primary is one
 * block in every file made here). */
static void cut(const char *path, int kind)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    char buf[65536];
    const size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    cr_assert(n > 2 * 2880 && n < sizeof buf);
    bi_write_file(path, buf, kind == F_HALF ? n / 2 : 2880 + 1000);
}

Test(desi_psf_read, rejects_with_the_file_the_hdu_and_the_rule)
{
    for (size_t i = 0; i < sizeof psf_cases / sizeof psf_cases[0]; i++) {
        const psf_case *c = &psf_cases[i];
        char path[600], err[1024] = "", words[1024];
        make_file(c->file, path, sizeof path);
        if (c->file == F_SYN || c->file == F_HALF || c->file == F_CUT_HEADER) desi_write_psf(path, &c->o);
        if (c->file == F_HALF || c->file == F_CUT_HEADER) cut(path, c->file);
        ex2d_psf psf;
        memset(&psf, 0xAB, sizeof psf);
        const int rc = gw_desi_psf_read(c->file == F_NULL_PATH ? NULL : path, c->file == F_NULL_OUT ? NULL : &psf,
                                        err, sizeof err);
        cr_expect_eq(rc, -1, "%s: rc %d", c->name, rc);
        snprintf(words, sizeof words, "%s%s", c->file == F_NULL_PATH ? "" : path, c->file == F_NULL_PATH ? "" : "|");
        strncat(words, c->words, sizeof words - strlen(words) - 1);
        bi_expect_words(c->name, err, words);
        if (c->file != F_NULL_OUT) cr_expect(desi_psf_is_zeroed(&psf), "%s: psf not zeroed", c->name);
        if (c->file != F_DIR && c->file != F_MISSING && c->file != F_NULL_PATH) remove(path);
    }
}

/* ---------------------------------------------------------------- images */

typedef struct img_case {
    const char *name;
    int file;
    desi_img_opts o;
    const char *words;
} img_case;

static const img_case img_cases[] = {
    {"IVAR missing", F_SYN, {.drop_hdu = "IVAR"}, "HDU 'IVAR' missing"},
    {"MASK missing", F_SYN, {.drop_hdu = "MASK"}, "HDU 'MASK' missing"},
    {"IMAGE missing", F_SYN, {.drop_hdu = "IMAGE"}, "HDU 'IMAGE' missing"},
    {"shapes differ", F_SYN, {.ivar_rows = 3}, "HDU 'IVAR': shape [3][6], HDU 'IMAGE' [4][6]: expected the same shape"},
    {"NaN image", F_SYN, {.nan_image = 1}, "HDU 'IMAGE': pixel (row 2, column 3) is nan|finite"},
    {"negative ivar", F_SYN, {.negative_ivar = 1}, "HDU 'IVAR': pixel (row 1, column 5) is -1|>= 0"},
    {"1-D image", F_SYN, {.image_1d = 1}, "HDU 'IMAGE': 1 axes: expected 2"},
    {"float MASK", F_SYN, {.float_mask = 1}, "HDU 'MASK': BITPIX -32: expected an integer image"},
    {"IMAGE twice", F_SYN, {.extra_hdu = "IMAGE"}, "HDUs 1 and 4 are both named 'IMAGE': expected one"},
    {"MASK twice, case aside", F_SYN, {.extra_hdu = "mask"}, "HDUs 3 and 4 are both named 'MASK': expected one"},
    {"IVAR a table", F_SYN, {.table_hdu = "IVAR"}, "HDU 'IVAR' (HDU 2) is a binary table: expected an image"},
    {"compressed IMAGE, ZNAXIS1 damaged", F_SYN,
     {.compress = 1, .damage_hdu = 1, .damage_key = "ZNAXIS1", .damage_card = "ZNAXIS1 = 'abc'"},
     "HDU 1: corrupt tile-compressed image header: keyword ZNAXIS1: not a positive whole number (cfitsio 4.2 divides by it where no ZTILEn is given)"},
    {"compressed IMAGE, ZCMPTYPE garbage", F_SYN,
     {.compress = 1, .damage_hdu = 1, .damage_key = "ZCMPTYPE", .damage_card = "ZCMPTYPE= 'GARBAGE'"},
     "HDU 1: corrupt tile-compressed image header (cfitsio: |Unknown image compression type|GARBAGE"},
    {"compressed MASK, ZCMPTYPE 'GZIP_ 1'", F_SYN,
     {.compress = 1, .damage_hdu = 3, .damage_key = "ZCMPTYPE", .damage_card = "ZCMPTYPE= 'GZIP_ 1'"},
     "keyword ZCMPTYPE = 'GZIP_ 1': not a tile-compression algorithm of FITS (GZIP_1, GZIP_2, RICE_1, RICE_ONE, "
     "HCOMPRESS_1, PLIO_1, BZIP2_1, NOCOMPRESS)"},
    /* cards that crashed cfitsio 4.2 (abort, SIGFPE, SIGSEGV), found by fuzz_fits: refused before it reads them */
    {"TTYPE1 unquoted, 70 characters", F_SYN,
     {.compress = 1, .damage_hdu = 2, .damage_key = "TTYPE1",
      .damage_card = "TTYPE1  = AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
     "HDU 2: keyword TTYPE1: not a string in quotes, as FITS requires of a column name"},
    {"ZNAXIS1 of 30 digits", F_SYN,
     {.compress = 1, .damage_hdu = 1, .damage_key = "ZNAXIS1",
      .damage_card = "ZNAXIS1 = 123456789012345678901234567890"},
     "HDU 1: corrupt tile-compressed image header: keyword ZNAXIS1: an unquoted value of 29 characters or more, which no tile-compression keyword takes"},
    {"ZNAXIS1 0", F_SYN, {.compress = 1, .damage_hdu = 1, .damage_key = "ZNAXIS1", .damage_card = "ZNAXIS1 = 0"},
     "HDU 1: corrupt tile-compressed image header: keyword ZNAXIS1: not a positive whole number (cfitsio 4.2 divides by it where no ZTILEn is given)"},
    {"ZNAxIS1 0 (cfitsio finds keywords ignoring case)", F_SYN,
     {.compress = 1, .damage_hdu = 1, .damage_key = "ZNAXIS1", .damage_card = "ZNAxIS1 = 0"},
     "HDU 1: corrupt tile-compressed image header: keyword ZNAXIS1: not a positive whole number (cfitsio 4.2 divides by it where no ZTILEn is given)"},
    {"HIERARCH ZTILE1 0 (cfitsio reads it as ZTILE1)", F_SYN,
     {.compress = 1, .damage_hdu = 1, .damage_key = "ZTILE1", .damage_card = "HIERARCH ZTILE1 = 0"},
     "HDU 1: corrupt tile-compressed image header: keyword ZTILE1: not a positive whole number, as FITS requires of a "
     "tile size"},
    {"ZTILE1 0", F_SYN, {.compress = 1, .damage_hdu = 1, .damage_key = "ZTILE1", .damage_card = "ZTILE1  = 0"},
     "HDU 1: corrupt tile-compressed image header: keyword ZTILE1: not a positive whole number, as FITS requires of a tile size"},
    {"ZTILE1 larger than the image", F_SYN,
     {.compress = 1, .damage_hdu = 1, .damage_key = "ZTILE1", .damage_card = "ZTILE1  = 100000000"},
     "HDU 'IMAGE': keyword ZTILE1 = 100000000: more than ZNAXIS1 = 6: a tile larger than its image"},
    {"RICE_1 MASK, ZVAL1 0", F_SYN,
     {.compress = 1, .damage_hdu = 3, .damage_key = "ZVAL1", .damage_card = "ZVAL1   = 0"},
     "HDU 3: corrupt tile-compressed image header: keyword ZVAL1: not a positive whole number, as a RICE_1 block size "
     "must be (cfitsio 4.2 divides by it)"},
    {"RICE_1 MASK, ZVAL1 -32", F_SYN,
     {.compress = 1, .damage_hdu = 3, .damage_key = "ZVAL1", .damage_card = "ZVAL1   = -32"},
     "HDU 3: corrupt tile-compressed image header: keyword ZVAL1: not a positive whole number, as a RICE_1 block size "
     "must be (cfitsio 4.2 divides by it)"},
    {"RICE_1 MASK, ZVAL1 '0 32' (cfitsio reads 0)", F_SYN,
     {.compress = 1, .damage_hdu = 3, .damage_key = "ZVAL1", .damage_card = "ZVAL1   =0                  32"},
     "HDU 3: corrupt tile-compressed image header: keyword ZVAL1: not a positive whole number, as a RICE_1 block size "
     "must be (cfitsio 4.2 divides by it)"},
    {"RICE_1 MASK, ZTILE2 twice", F_SYN,
     {.compress = 1, .damage_hdu = 3, .damage_key = "ZVAL1", .damage_card = "ZTILE2  = 32"},
     "HDU 3: corrupt tile-compressed image header: keyword ZTILE2: given twice: a header names each keyword once "
     "(FITS)"},
    {"TFIELDS 1000", F_SYN, {.compress = 1, .damage_hdu = 1, .damage_key = "TFIELDS", .damage_card = "TFIELDS = 1000"},
     "HDU 1: keyword TFIELDS: not a whole number 0..999 (FITS)"},
    {"compressed MASK without COMPRESSED_DATA", F_SYN,
     {.compress = 1, .damage_hdu = 3, .damage_key = "TFIELDS", .damage_card = "TFIELDS = 0"},
     "HDU 3: a tile-compressed image without a COMPRESSED_DATA column of variable-length arrays"},
    /* a GZIP tile whose stream does not end: cfitsio 4.2 grows its output buffer for ever (the read hung) */
    {"GZIP_1 IMAGE, tile 3 cut short", F_SYN, {.compress = 1, .gzip_1 = 1, .cut_hdu = "IMAGE", .cut_tile = 3},
     "HDU 'IMAGE': tile 3: its GZIP data does not end within the tile's 48 bytes (zlib: |): a damaged tile"},
    {"GZIP_2 IVAR, tile 1 cut short", F_SYN, {.compress = 1, .cut_hdu = "IVAR", .cut_tile = 1},
     "HDU 'IVAR': tile 1: its GZIP data does not end within the tile's 48 bytes (zlib: |): a damaged tile"},
    {"GZIP_2 IVAR, tile 1 counts the next tile's first 8 bytes", F_SYN,
     {.compress = 1, .cut_hdu = "IVAR", .cut_tile = 1, .cut_bytes = -8},
     "HDU 'IVAR': tile 1: its GZIP data ends 8 bytes before the tile's |bytes do: a damaged tile"},
    {"GZIP_2 IVAR, tile 4 runs 3000 bytes past the heap", F_SYN,
     {.compress = 1, .cut_hdu = "IVAR", .cut_tile = 4, .cut_bytes = -3000},
     "HDU 'IVAR': tile 4: its |bytes at heap offset |lie outside the heap (bytes 32 to |): a damaged tile"},
    /* any algorithm: cfitsio allocates what a descriptor says (fuzz_fits: 0xFFFFFFFF bytes, a 4 GiB malloc) */
    {"RICE_1 MASK, tile 2 runs 100000 bytes past the heap", F_SYN,
     {.compress = 1, .cut_hdu = "MASK", .cut_tile = 2, .cut_bytes = -100000},
     "HDU 'MASK': tile 2: its |bytes at heap offset |lie outside the heap (bytes 32 to |): a damaged tile"},
    {"IMAGE's NAXIS2 damaged", F_SYN, {.damage_hdu = 1, .damage_key = "NAXIS2", .damage_card = "NAXIS2  = 'four'"},
     "HDU 1: corrupt header (cfitsio: "},
    {"a text file", F_TEXT, {0}, "not a FITS file"},
    {"empty file", F_EMPTY, {0}, "empty file"},
    {"a directory", F_DIR, {0}, "not a regular file (a directory)"},
    {"a FIFO", F_FIFO, {0}, "not a regular file (a FIFO)"},
    {"missing file", F_MISSING, {0}, "cannot open"},
    {"cut in half", F_HALF, {0}, "truncated"},
    {"cut inside HDU 1's header", F_CUT_HEADER, {0}, "HDU 1: truncated inside its header"},
    {"path NULL", F_NULL_PATH, {0}, "no path given"},
    {"img NULL", F_NULL_OUT, {0}, "gw_desi_image_read: the image img is NULL"},
};

Test(desi_image_read, rejects_with_the_file_the_hdu_and_the_rule)
{
    static const gw_desi_image zero;
    for (size_t i = 0; i < sizeof img_cases / sizeof img_cases[0]; i++) {
        const img_case *c = &img_cases[i];
        char path[600], err[1024] = "", words[1024];
        make_file(c->file, path, sizeof path);
        if (c->file == F_SYN || c->file == F_HALF || c->file == F_CUT_HEADER) desi_write_image(path, &c->o);
        if (c->file == F_HALF || c->file == F_CUT_HEADER) cut(path, c->file);
        gw_desi_image img;
        memset(&img, 0xAB, sizeof img);
        const int rc = gw_desi_image_read(c->file == F_NULL_PATH ? NULL : path, c->file == F_NULL_OUT ? NULL : &img,
                                          err, sizeof err);
        cr_expect_eq(rc, -1, "%s: rc %d", c->name, rc);
        snprintf(words, sizeof words, "%s%s", c->file == F_NULL_PATH ? "" : path, c->file == F_NULL_PATH ? "" : "|");
        strncat(words, c->words, sizeof words - strlen(words) - 1);
        bi_expect_words(c->name, err, words);
        if (c->file != F_NULL_OUT) cr_expect(memcmp(&img, &zero, sizeof img) == 0, "%s: img not zeroed", c->name);
        if (c->file != F_DIR && c->file != F_MISSING && c->file != F_NULL_PATH) remove(path);
    }
}

/* ---------------------------------------------------------------- writers */

TestSuite(desi_write, .init = setup, .fini = teardown);
TestSuite(desi_psf_read, .init = setup, .fini = teardown);
TestSuite(desi_image_read, .init = setup, .fini = teardown);

/* Runs a failing write and checks: -1, the words, the directory unchanged (an existing keep.fits kept). */
static void expect_refused(const char *row, int rc, const char *err, const char *words)
{
    cr_expect_eq(rc, -1, "%s: rc %d", row, rc);
    bi_expect_words(row, err, words);
}

Test(desi_write, image_writer_refuses_and_writes_nothing)
{
    char target[600], nodir[600], keep[600], err[1024];
    snprintf(target, sizeof target, "%s/keep.fits", work);
    snprintf(nodir, sizeof nodir, "%s/no/such/dir/out.fits", work);
    snprintf(keep, sizeof keep, "old contents");
    bi_write_file(target, keep, strlen(keep));
    double img[6] = {1, 2, 3, 4, 5, 6}, ivar[6] = {1, 1, 1, 1, 1, 1}, bad[6] = {1, 2, 3, 4, 5, 6}, t[2] = {1, 2};
    const gw_desi_image_out good = {.npix_x = 3, .npix_y = 2, .image = img, .ivar = ivar};
    struct {
        const char *name, *path;
        gw_desi_image_out im;
        int null_im;
        const char *words;
    } rows[] = {
        {"path NULL", NULL, good, 0, "gw_desi_image_write: no path given"},
        {"im NULL", target, good, 1, "keep.fits: gw_desi_image_write: im is NULL"},
        {"image NULL", target, {.npix_x = 3, .npix_y = 2, .ivar = ivar}, 0, "im->image is NULL"},
        {"ivar NULL", target, {.npix_x = 3, .npix_y = 2, .image = img}, 0, "im->ivar is NULL"},
        {"npix_x 0", target, {.npix_x = 0, .npix_y = 2, .image = img, .ivar = ivar}, 0, "2 x 0 pixels"},
        {"NaN image", target, {.npix_x = 3, .npix_y = 2, .image = bad, .ivar = ivar}, 0, "keep.fits: image[1][2] is nan"},
        {"negative ivar", target, {.npix_x = 3, .npix_y = 2, .image = img, .ivar = bad}, 0, "ivar[0][0] is -1|>= 0"},
        {"truth dwave 0", target, {.npix_x = 3, .npix_y = 2, .image = img, .ivar = ivar, .truth = t, .truth_nspec = 1,
                                   .truth_nwave = 2, .truth_wave0 = 5000}, 0, "truth of 1 x 2|dwave > 0"},
        {"directory missing", nodir, good, 0, "no/such/dir/out.fits|cannot create a temporary file|nothing written"},
    };
    bad[5] = NAN;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (strcmp(rows[i].name, "negative ivar") == 0) bad[0] = -1;
        bi_dir d;
        bi_dir_take(&d, work);
        err[0] = '\0';
        const int rc = gw_desi_image_write(rows[i].path, rows[i].null_im ? NULL : &rows[i].im, err, sizeof err);
        expect_refused(rows[i].name, rc, err, rows[i].words);
        bi_dir_expect_unchanged(&d, work, rows[i].name);
    }
}

Test(desi_write, frame_writer_refuses_and_writes_nothing)
{
    char target[600], nodir[600], err[1024];
    snprintf(target, sizeof target, "%s/frame.fits", work);
    snprintf(nodir, sizeof nodir, "%s/no/dir/frame.fits", work);
    double wave[3] = {1, 2, 3}, down[3] = {1, 3, 2}, v[6] = {1, 1, 1, 1, 1, 1}, nanv[6] = {1, 1, NAN, 1, 1, 1},
           neg[6] = {1, 1, 1, 1, -2, 1}, rd[18] = {0};
    const gw_desi_frame good = {.nspec = 2, .nwave = 3, .ndiag = 1, .wave = wave, .flux = v, .ivar = v, .rdiags = rd};
    gw_desi_frame rows_fr[9];
    for (int i = 0; i < 9; i++) rows_fr[i] = good;
    rows_fr[2].rdiags = NULL;
    rows_fr[3].ndiag = -1;
    rows_fr[4].wave = down;
    rows_fr[5].flux = nanv;
    rows_fr[6].ivar = neg;
    rows_fr[7].nspec = 0;
    const struct {
        const char *name, *path;
        int null_fr;
        const char *words;
    } rows[] = {
        {"path NULL", NULL, 0, "gw_desi_frame_write: no path given"},
        {"fr NULL", target, 1, "frame.fits: gw_desi_frame_write: the frame fr is NULL"},
        {"rdiags NULL", target, 0, "fr->rdiags is NULL"},
        {"ndiag -1", target, 0, "ndiag -1|ndiag in 0..1000"},
        {"wave not increasing", target, 0, "wave[2] = 2 <= wave[1] = 3|increasing"},
        {"NaN flux", target, 0, "flux[0][2] is nan"},
        {"negative ivar", target, 0, "ivar[1][1] is -2|>= 0"},
        {"nspec 0", target, 0, "nspec 0|nspec, nwave >= 1"},
        {"directory missing", nodir, 0, "no/dir/frame.fits|nothing written"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bi_dir d;
        bi_dir_take(&d, work);
        err[0] = '\0';
        const int rc = gw_desi_frame_write(rows[i].path, rows[i].null_fr ? NULL : &rows_fr[i], err, sizeof err);
        expect_refused(rows[i].name, rc, err, rows[i].words);
        bi_dir_expect_unchanged(&d, work, rows[i].name);
    }
}
