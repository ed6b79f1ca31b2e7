/* SPDX-License-Identifier: MIT
 * Test-time FITS files, written with cfitsio directly (desi_fits_make.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "desi_fits_make.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <fitsio.h>

const char *const desi_psf_rows[] = {"X", "Y", "GHSIGX", "GHSIGY", "GH-0-0", "GH-0-1", "GH-1-0", "GH-1-1", "TAILAMP",
                                     "TAILCORE", "TAILXSCA", "TAILYSCA", "TAILINDE", "CONT", NULL};

double desi_syn_coef(int row, int f, int k)
{
    return 100.0 * row + 10.0 * f + k + 0.5;
}

#define CHECK(status, what) cr_assert((status) == 0, "cfitsio: %s: status %d", what, status)

static fitsfile *create(const char *path)
{
    char name[1100];
    snprintf(name, sizeof name, "!%s", path); /* '!': cfitsio overwrites */
    fitsfile *f = NULL;
    int status = 0;
    fits_create_file(&f, name, &status);
    CHECK(status, path);
    return f;
}

/* One keyword as a raw card, unless the options drop or replace it. */
static void put_key(fitsfile *f, const char *drop, const char *bad_key, const char *bad_value, const char *key,
                    const char *raw, int *status)
{
    if (drop && strcmp(drop, key) == 0) return;
    if (bad_key && strcmp(bad_key, key) == 0) raw = bad_value;
    char card[81];
    snprintf(card, sizeof card, "%-8s= %20s", key, raw);
    fits_write_record(f, card, status);
}

static void psf_keys(fitsfile *f, const desi_psf_opts *o, int table, int *status)
{
    const char *ver = o->ver == 3 ? "'3'" : "'2'";
    put_key(f, o->drop_key, o->bad_key, o->bad_value, "PSFTYPE", "'GAUSS-HERMITE'", status);
    put_key(f, o->drop_key, o->bad_key, o->bad_value, "PSFVER", ver, status);
    if (!table) return;
    static const char *const kv[][2] = {{"FIBERMIN", "10"}, {"FIBERMAX", "11"}, {"NPIX_X", "100"}, {"NPIX_Y", "200"},
                                        {"HSIZEX", "3"},     {"HSIZEY", "4"},     {"GHDEGX", "1"},    {"GHDEGY", "1"},
                                        {"LEGDEG", "1"}};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        put_key(f, o->drop_key, o->bad_key, o->bad_value, kv[i][0], kv[i][1], status);
    if (o->ver == 3) {
        put_key(f, o->drop_key, o->bad_key, o->bad_value, "WAVEMIN", "5000.0", status);
        put_key(f, o->drop_key, o->bad_key, o->bad_value, "WAVEMAX", "6000.0", status);
    }
}

static void fill_coef(double *c, int row, const char *name, const char *nan_param)
{
    for (int f = 0; f < DESI_SYN_NFIBRE; f++)
        for (int k = 0; k < DESI_SYN_NCOEF; k++) c[f * DESI_SYN_NCOEF + k] = desi_syn_coef(row, f, k);
    if (nan_param && strcmp(nan_param, name) == 0) c[1 * DESI_SYN_NCOEF + 1] = NAN;
}

static void psf_table(fitsfile *f, const desi_psf_opts *o, int *status)
{
    int rows[32], n = 0;
    for (int r = 0; desi_psf_rows[r]; r++) {
        const char *name = desi_psf_rows[r];
        if (o->ver == 3 && (strcmp(name, "X") == 0 || strcmp(name, "Y") == 0)) continue;
        if (o->drop_param && strcmp(o->drop_param, name) == 0) continue;
        rows[n++] = r;
        if (o->dup_param && strcmp(o->dup_param, name) == 0) rows[n++] = r;
    }
    const char *coeff_form = o->short_coeff ? "3D" : "4D";
    char *ttype[4] = {"PARAM", "WAVEMIN", "WAVEMAX", "COEFF"}, *tform[4] = {"8A", "D", "D", (char *)coeff_form};
    char *ttype3[2] = {"PARAM", "COEFF"}, *tform3[2] = {"8A", (char *)coeff_form};
    const int v2 = o->ver == 2, ncol = (v2 ? 4 : 2) - (o->drop_coeff_col ? 1 : 0);
    const char *extname = v2 ? NULL : o->table_extname ? o->table_extname : "PSF";
    fits_create_tbl(f, BINARY_TBL, n, ncol, v2 ? ttype : ttype3, v2 ? tform : tform3, NULL, extname, status);
    const int col_coeff = v2 ? 4 : 2;
    if (!o->short_coeff && !o->drop_coeff_col) {
        long dims[2] = {DESI_SYN_NCOEF, DESI_SYN_NFIBRE};
        fits_write_tdim(f, col_coeff, 2, dims, status);
    }
    psf_keys(f, o, 1, status);
    for (int i = 0; i < n; i++) {
        const char *name = desi_psf_rows[rows[i]];
        char *names[1] = {(char *)name};
        fits_write_col(f, TSTRING, 1, i + 1, 1, 1, names, status);
        if (v2) {
            const int swap = o->swap_param && strcmp(o->swap_param, name) == 0;
            double lo = swap ? 6000 : 5000, hi = swap ? 5000 : 6000;
            fits_write_col(f, TDOUBLE, 2, i + 1, 1, 1, &lo, status);
            fits_write_col(f, TDOUBLE, 3, i + 1, 1, 1, &hi, status);
        }
        double c[DESI_SYN_NFIBRE * DESI_SYN_NCOEF];
        fill_coef(c, rows[i], name, o->nan_param);
        if (!o->drop_coeff_col) fits_write_col(f, TDOUBLE, col_coeff, i + 1, 1, o->short_coeff ? 3 : 4, c, status);
    }
}

static void psf_trace(fitsfile *f, const desi_psf_opts *o, const char *name, int row, int *status)
{
    if (o->drop_trace && strcmp(o->drop_trace, name) == 0) return;
    const int nrows = o->trace_rows ? o->trace_rows : DESI_SYN_NFIBRE;
    long naxes[2] = {DESI_SYN_NCOEF, nrows};
    fits_create_img(f, DOUBLE_IMG, 2, naxes, status);
    fits_update_key(f, TSTRING, "EXTNAME", (char *)name, NULL, status);
    const int is_x = row == 0;
    double lo = is_x && (o->trace_wmin || o->trace_wmax) ? o->trace_wmin : 4000;
    double hi = is_x && (o->trace_wmin || o->trace_wmax) ? o->trace_wmax : 7000;
    char raw[32];
    snprintf(raw, sizeof raw, "%.17g", lo);
    put_key(f, is_x ? o->trace_drop_key : NULL, NULL, NULL, "WAVEMIN", raw, status);
    snprintf(raw, sizeof raw, "%.17g", hi);
    put_key(f, is_x ? o->trace_drop_key : NULL, NULL, NULL, "WAVEMAX", raw, status);
    double c[16];
    for (int fb = 0; fb < nrows; fb++)
        for (int k = 0; k < DESI_SYN_NCOEF; k++) c[fb * DESI_SYN_NCOEF + k] = desi_syn_coef(row, fb, k);
    if (is_x && o->nan_param && strcmp(o->nan_param, "X") == 0) c[1 * DESI_SYN_NCOEF + 1] = NAN;
    fits_write_img(f, TDOUBLE, 1, (LONGLONG)nrows * DESI_SYN_NCOEF, c, status);
}

/* A 2 x 2 image HDU named name. */
static void extra_image(fitsfile *f, const char *name, int *status)
{
    long naxes[2] = {2, 2};
    double v[4] = {1, 2, 3, 4};
    fits_set_compression_type(f, 0, status);
    fits_create_img(f, DOUBLE_IMG, 2, naxes, status);
    fits_update_key(f, TSTRING, "EXTNAME", (char *)name, NULL, status);
    fits_write_img(f, TDOUBLE, 1, 4, v, status);
}

/* The finished file at path, changed in its bytes: n bytes of byte appended; the first card of keyword key
 * (key NULL: none) in HDU hdu (0 = primary) replaced by card. */
static void patch_file(const char *path, size_t n, char byte, int hdu, const char *key, const char *card)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    cr_assert(fseek(f, 0, SEEK_END) == 0);
    const long size = ftell(f);
    rewind(f);
    cr_assert(size > 0);
    char *buf = malloc((size_t)size + n);
    cr_assert(buf && fread(buf, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    memset(buf + size, byte, n);
    if (key) {
        char name[9];
        snprintf(name, sizeof name, "%-8s", key); /* a card's keyword: 8 characters, blank-padded */
        long at = 0;
        for (int h = 0; h < hdu && at < size; at += 2880) /* an HDU starts a block with its XTENSION card */
            if (at > 0 && strncmp(buf + at, "XTENSION", 8) == 0 && ++h == hdu) break;
        while (at < size && strncmp(buf + at, name, 8) != 0) at += 80;
        cr_assert(at < size, "%s: no keyword %s", path, key);
        char c[81];
        snprintf(c, sizeof c, "%-80s", card);
        memcpy(buf + at, c, 80);
    }
    f = fopen(path, "wb");
    cr_assert(f && fwrite(buf, 1, (size_t)size + n, f) == (size_t)size + n && fclose(f) == 0, "%s", path);
    free(buf);
}

void desi_write_psf(const char *path, const desi_psf_opts *o)
{
    fitsfile *f = create(path);
    int status = 0;
    fits_create_img(f, DOUBLE_IMG, 0, NULL, &status);
    psf_keys(f, o, 0, &status);
    if (!o->no_table) psf_table(f, o, &status);
    if (!o->no_table && o->ver == 3) {
        psf_trace(f, o, "XTRACE", 0, &status);
        psf_trace(f, o, "YTRACE", 1, &status);
    }
    if (o->extra_hdu) extra_image(f, o->extra_hdu, &status);
    fits_close_file(f, &status);
    CHECK(status, path);
    if (o->append) patch_file(path, o->append, o->append_byte, 0, NULL, NULL);
}

/* Every card of the current HDU of in that is not structural, appended to out's current HDU. */
static void copy_keys(fitsfile *in, fitsfile *out, int *status)
{
    static const char *const skip[] = {"XTENSION", "BITPIX", "NAXIS", "PCOUNT", "GCOUNT", "TFIELDS", "TTYPE",
                                       "TFORM", "TDIM", "TUNIT", "EXTNAME"};
    int nkeys = 0;
    fits_get_hdrspace(in, &nkeys, NULL, status);
    for (int i = 1; i <= nkeys && *status == 0; i++) {
        char card[FLEN_CARD];
        fits_read_record(in, i, card, status);
        int keep = 1;
        for (size_t s = 0; s < sizeof skip / sizeof skip[0]; s++)
            if (strncmp(card, skip[s], strlen(skip[s])) == 0) keep = 0;
        if (keep) fits_write_record(out, card, status);
    }
}

static void put_trace(fitsfile *out, const char *name, int ncoef, int nfibre, const double *c, double lo, double hi,
                      int *status)
{
    long naxes[2] = {ncoef, nfibre};
    fits_create_img(out, DOUBLE_IMG, 2, naxes, status);
    fits_update_key(out, TSTRING, "EXTNAME", (char *)name, NULL, status);
    fits_update_key(out, TDOUBLE, "WAVEMIN", &lo, NULL, status);
    fits_update_key(out, TDOUBLE, "WAVEMAX", &hi, NULL, status);
    fits_write_img(out, TDOUBLE, 1, (LONGLONG)ncoef * nfibre, (double *)c, status);
}

void desi_convert_v2_to_v3(const char *v2, const char *v3)
{
    fitsfile *in = NULL;
    int status = 0, ccol = 0, pcol = 0, lcol = 0, hcol = 0, naxis = 0, anynul = 0;
    fits_open_file(&in, v2, READONLY, &status);
    CHECK(status, v2);
    fitsfile *out = create(v3);
    fits_copy_hdu(in, out, 0, &status);
    fits_update_key(out, TSTRING, "PSFVER", "3", NULL, &status);
    fits_movabs_hdu(in, 2, NULL, &status);
    LONGLONG nrows = 0, repeat = 0, width = 0;
    long naxes[2] = {0, 0};
    int typecode = 0;
    fits_get_num_rowsll(in, &nrows, &status);
    fits_get_colnum(in, CASEINSEN, "PARAM", &pcol, &status);
    fits_get_colnum(in, CASEINSEN, "COEFF", &ccol, &status);
    fits_get_colnum(in, CASEINSEN, "WAVEMIN", &lcol, &status);
    fits_get_colnum(in, CASEINSEN, "WAVEMAX", &hcol, &status);
    fits_get_coltypell(in, ccol, &typecode, &repeat, &width, &status);
    fits_read_tdim(in, ccol, 2, &naxis, naxes, &status);
    CHECK(status, "reading the v2 table's layout");
    cr_assert(naxis == 2 && nrows > 2 && nrows < 1000 && repeat < 100000);
    char tform[32];
    snprintf(tform, sizeof tform, "%lldD", (long long)repeat);
    char *ttype[2] = {"PARAM", "COEFF"}, *tforms[2] = {"16A", tform};
    fits_create_tbl(out, BINARY_TBL, 0, 2, ttype, tforms, NULL, "PSF", &status);
    fits_write_tdim(out, 2, 2, naxes, &status);
    copy_keys(in, out, &status);
    double *c = malloc((size_t)repeat * sizeof *c), *xc = malloc((size_t)repeat * sizeof *c),
           *yc = malloc((size_t)repeat * sizeof *c);
    cr_assert(c && xc && yc);
    double lo = 0, hi = 0, xlo = 0, xhi = 0, ylo = 0, yhi = 0;
    LONGLONG outrow = 0;
    for (LONGLONG r = 1; r <= nrows && status == 0; r++) {
        char buf[64] = "", *names[1] = {buf};
        fits_read_col_str(in, pcol, r, 1, 1, "", names, &anynul, &status);
        fits_read_col(in, TDOUBLE, lcol, r, 1, 1, NULL, &lo, &anynul, &status);
        fits_read_col(in, TDOUBLE, hcol, r, 1, 1, NULL, &hi, &anynul, &status);
        fits_read_col(in, TDOUBLE, ccol, r, 1, repeat, NULL, c, &anynul, &status);
        if (strcmp(buf, "X") == 0) {
            memcpy(xc, c, (size_t)repeat * sizeof *c), xlo = lo, xhi = hi;
        } else if (strcmp(buf, "Y") == 0) {
            memcpy(yc, c, (size_t)repeat * sizeof *c), ylo = lo, yhi = hi;
        } else {
            outrow++;
            fits_write_col(out, TSTRING, 1, outrow, 1, 1, names, &status);
            fits_write_col(out, TDOUBLE, 2, outrow, 1, repeat, c, &status);
        }
    }
    /* every row shares one domain in a specex file: the last one read is the table's */
    fits_update_key(out, TDOUBLE, "WAVEMIN", &lo, NULL, &status);
    fits_update_key(out, TDOUBLE, "WAVEMAX", &hi, NULL, &status);
    put_trace(out, "XTRACE", (int)naxes[0], (int)naxes[1], xc, xlo, xhi, &status);
    put_trace(out, "YTRACE", (int)naxes[0], (int)naxes[1], yc, ylo, yhi, &status);
    free(c), free(xc), free(yc);
    fits_close_file(out, &status);
    int st2 = 0;
    fits_close_file(in, &st2);
    CHECK(status, v3);
}

double desi_img_value(int r, int c)
{
    return 10.0 * r + c + 0.25;
}

double desi_img_ivar(int r, int c)
{
    return r + c + 1.0;
}

/* One HDU of the image: its type, compression and pixels as the options say. */
static void img_hdu(fitsfile *f, const char *name, const desi_img_opts *o, int bitpix, int rows, int one_d,
                    int *status)
{
    if (o->drop_hdu && strcmp(o->drop_hdu, name) == 0) return;
    const int nx = o->nx ? o->nx : 6, is_mask = strcmp(name, "MASK") == 0;
    const int blank = o->blank_hdu && strcmp(o->blank_hdu, name) == 0;
    const size_t n = (size_t)nx * (size_t)rows;
    if (o->table_hdu && strcmp(o->table_hdu, name) == 0) {
        char *ttype[1] = {"V"}, *tform[1] = {"D"};
        fits_create_tbl(f, BINARY_TBL, 0, 1, ttype, tform, NULL, name, status);
        return;
    }
    const int column_tiles = is_mask && o->mask_column_tiles, compress = o->compress || column_tiles;
    /* int32 for BLANK, and when compressed: the integers go in as TINT, which cfitsio compresses only into
     * an int32 image */
    if (blank || (compress && bitpix > 0)) bitpix = LONG_IMG;
    long naxes[2] = {one_d ? (long)n : nx, rows}, tile[2] = {column_tiles ? 1 : naxes[0], column_tiles ? rows : 1};
    if (o->tile_x && !column_tiles) tile[0] = o->tile_x, tile[1] = o->tile_y;
    const int integer = bitpix > 0;
    fits_set_compression_type(f, !compress ? 0 : o->gzip_1 && !column_tiles ? GZIP_1 : integer ? RICE_1 : GZIP_2,
                              status);
    fits_set_tile_dim(f, 2, tile, status);
    /* compressed floats lossless (the values come back exact), or quantized in absolute steps of 0.01 */
    fits_set_quantize_level(f, o->quantize ? -0.01f : 0.0f, status);
    fits_create_img(f, bitpix, one_d ? 1 : 2, naxes, status);
    fits_update_key(f, TSTRING, "EXTNAME", (char *)name, NULL, status);
    double *v = malloc(n * sizeof *v);
    cr_assert(v);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < nx; c++) {
            double x = 0;
            if (strcmp(name, "IMAGE") == 0) x = desi_img_value(r, c);
            else if (strcmp(name, "IVAR") == 0) x = desi_img_ivar(r, c);
            else x = o->mask_pixel && r == 3 && c == 0 ? 4 : 0;
            v[(size_t)r * nx + c] = x;
        }
    if (strcmp(name, "IMAGE") == 0 && o->nan_image) v[2 * 6 + 3] = NAN;
    if (strcmp(name, "IVAR") == 0 && o->negative_ivar) v[1 * 6 + 5] = -1;
    if (!is_mask && o->nan_under_mask) v[3 * 6 + 0] = NAN;
    if (blank) {
        /* the IMAGE or IVAR values as int32 (IMAGE's 0.25 dropped); cfitsio compares the raw value with BLANK */
        char card[81];
        snprintf(card, sizeof card, "%-8s= %20d", o->zblank && o->compress ? "ZBLANK" : "BLANK", -999);
        fits_write_record(f, card, status);
        for (size_t i = 0; i < n; i++) v[i] = floor(v[i]);
        v[1 * nx + 2] = -999;
    }
    int *iv = integer ? malloc(n * sizeof *iv) : NULL;
    cr_assert(!integer || iv);
    for (size_t i = 0; integer && i < n; i++) iv[i] = (int)v[i];
    fits_write_img(f, integer ? TINT : TDOUBLE, 1, (LONGLONG)n, integer ? (void *)iv : (void *)v, status);
    free(iv);
    free(v);
}

/* The finished image at path with tile o->cut_tile of HDU o->cut_hdu cut: its COMPRESSED_DATA descriptor counts
 * o->cut_bytes fewer (8 by default: the tile's gzip stream, written whole, trailer last, stops inside its CRC-32
 * and length trailer, and cfitsio 4.2 grows its output buffer for ever, waiting for the stream's end). */
static void cut_tile(const char *path, const desi_img_opts *o)
{
    fitsfile *f = NULL;
    int status = 0, col = 0;
    LONGLONG len = 0, off = 0;
    fits_open_diskfile(&f, path, READWRITE, &status);
    fits_movnam_hdu(f, ANY_HDU, (char *)o->cut_hdu, 0, &status);
    fits_get_colnum(f, CASEINSEN, "COMPRESSED_DATA", &col, &status);
    fits_read_descriptll(f, col, o->cut_tile, &len, &off, &status);
    CHECK(status, path);
    const int cut = o->cut_bytes ? o->cut_bytes : 8;
    cr_assert(len > cut, "%s: HDU %s, tile %d: %lld bytes", path, o->cut_hdu, o->cut_tile, (long long)len);
    fits_write_descript(f, col, o->cut_tile, len - cut, off, &status);
    fits_close_file(f, &status);
    CHECK(status, path);
}

void desi_write_image(const char *path, const desi_img_opts *o)
{
    fitsfile *f = create(path);
    int status = 0;
    const int ny = o->ny ? o->ny : 4;
    if (!o->image_primary) fits_create_img(f, BYTE_IMG, 0, NULL, &status);
    img_hdu(f, "IMAGE", o, FLOAT_IMG, ny, o->image_1d, &status);
    img_hdu(f, "IVAR", o, DOUBLE_IMG, o->ivar_rows ? o->ivar_rows : ny, 0, &status);
    img_hdu(f, "MASK", o, o->float_mask ? FLOAT_IMG : SHORT_IMG, ny, 0, &status);
    if (o->extra_hdu) extra_image(f, o->extra_hdu, &status);
    fits_close_file(f, &status);
    CHECK(status, path);
    if (o->damage_key) patch_file(path, 0, 0, o->damage_hdu, o->damage_key, o->damage_card);
    if (o->cut_hdu) cut_tile(path, o);
}
