/* SPDX-License-Identifier: MIT
 * gw_hostile_fits: the DESI FITS files of the hostile suite (gw_hostile.sh), written with cfitsio directly
 * (never with gw_desi, the code under test). Images are preprocessed CCD images as gw_desi.h reads them:
 * IMAGE, then IVAR (float32, 1 everywhere) and MASK (int32, 0 everywhere), tile-compressed one row per tile
 * and lossless unless said otherwise, so that a CCD-sized file stays small (a few MB; the plain IMAGE of
 * image-int-blank and image-from makes 69 and 137 MB at 4114 x 4128). The PSF commands copy a PSF and change
 * one thing. Exit 0; 1 on an I/O or cfitsio error (said on stderr, OUT removed); 2 on bad arguments (with
 * the usage).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fitsio.h>

static const char usage[] =
    "usage: gw_hostile_fits COMMAND ARGS...\n"
    "  image-int-blank OUT NX NY       IMAGE plain int32 with BLANK, some pixels BLANK (count on stdout)\n"
    "  image-dup-hdu OUT NX NY         a valid image with a second HDU named IMAGE\n"
    "  image-column-tiles OUT NX NY    a valid image whose MASK is tile-compressed in one-column tiles\n"
    "  image-corrupt-zheader OUT NX NY IMAGE tile-compressed, its ZNAXIS1 keyword damaged\n"
    "  image-from OUT NX NY VALUE      IMAGE plain float64, VALUE everywhere (e.g. 1.7e308)\n"
    "  image-gzip-cut OUT NX NY        IMAGE GZIP_1-compressed (a row per tile), tile 3's stream cut 8 bytes short\n"
    "  image-masked-rows OUT NX NY Y0 Y1\n"
    "                                  IMAGE 100 everywhere, MASK 1 on rows Y0..Y1-1 (every column), else 0\n"
    "  frame-masked-ivar FRAME         of a frame's bins whose MASK has ALLBADPIX (bit 1): how many, and how\n"
    "                                  many of them have IVAR != 0 (\"ALLBADPIX N IVAR_NONZERO M\" on stdout)\n"
    "  psf-append IN OUT N             IN with N zero bytes appended\n"
    "  psf-set IN OUT HDU KEY VALUE    IN with keyword KEY of HDU (its number, 0 = primary, or EXTNAME) set to\n"
    "                                  VALUE (a number, T or F as it is; 'text' as it is; else a string)\n"
    "  psf-scale IN OUT PARAM FACTOR   IN (GAUSS-HERMITE) with every COEFF of table row PARAM times FACTOR\n"
    "                                  (nan: every coefficient NaN; PARAM 'GH-*': every row named GH-...;\n"
    "                                  GH-* 0, then TAILAMP 0 on its output, makes every spot 0)\n"
    "NX NY: columns and rows, e.g. the real PSF's CCD, 4114 4128.\n";

enum { EXIT_USAGE = 2 };

/* image-int-blank: pixels 0, BLANK_EVERY, 2 BLANK_EVERY, ... of IMAGE are BLANK, the others 0..99. */
#define BLANK_VALUE INT_MIN
#define BLANK_EVERY 997

typedef enum {
    IMG_INT_BLANK, IMG_DUP_HDU, IMG_COLUMN_TILES, IMG_CORRUPT_ZHEADER, IMG_FROM, IMG_MASKED_ROWS, IMG_GZIP_CUT
} img_kind;

static int cfitsio_failed(const char *what, int status)
{
    char text[FLEN_STATUS] = "", msg[FLEN_ERRMSG];
    fits_get_errstatus(status, text);
    fprintf(stderr, "gw_hostile_fits: %s: cfitsio: %s\n", what, text);
    while (fits_read_errmsg(msg)) fprintf(stderr, "  %s\n", msg);
    return 1;
}

/* A positive number from a whole argument, or 0. */
static long parse_size(const char *s)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    return errno == 0 && end != s && *end == '\0' && v > 0 && v <= INT_MAX ? v : 0;
}

/* The whole of src in *buf (malloc'd). 0 or -1 (said). */
static int slurp(const char *src, char **buf, size_t *size)
{
    FILE *in = fopen(src, "rb");
    if (!in) {
        fprintf(stderr, "gw_hostile_fits: %s: %s\n", src, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0, got = 0;
    char *b = malloc(cap);
    while (b && (got = fread(b + n, 1, cap - n, in)) > 0)
        if ((n += got) == cap) {
            char *g = realloc(b, cap *= 2);
            if (!g) free(b);
            b = g;
        }
    const int bad = !b || ferror(in);
    fclose(in);
    if (bad) {
        fprintf(stderr, "gw_hostile_fits: %s: cannot read it\n", src);
        free(b);
        return -1;
    }
    *buf = b, *size = n;
    return 0;
}

static int spill(const char *dst, const char *buf, size_t size, size_t zeros)
{
    FILE *out = fopen(dst, "wb");
    int bad = !out || fwrite(buf, 1, size, out) != size;
    for (size_t i = 0; !bad && i < zeros; i++) bad = fputc(0, out) == EOF;
    if (out && fclose(out) != 0) bad = 1;
    if (bad) fprintf(stderr, "gw_hostile_fits: %s: cannot write it\n", dst);
    return bad ? -1 : 0;
}

/* One image HDU, compressed as comp (0: not) in tiles tile[2] (NULL: rows), with data (datatype TDOUBLE or
 * TINT; NULL: written by the caller, after keywords such as BLANK). */
static void put_hdu(fitsfile *f, const char *name, int bitpix, long nx, long ny, int comp, const long *tile,
                    int datatype, void *data, int *status)
{
    long naxes[2] = {nx, ny}, rows[2] = {nx, 1};
    fits_set_compression_type(f, comp, status);
    if (comp) fits_set_tile_dim(f, 2, (long *)(tile ? tile : rows), status);
    if (comp) fits_set_quantize_level(f, 0.0f, status); /* floats lossless: no quantization */
    fits_create_img(f, bitpix, 2, naxes, status);
    fits_update_key(f, TSTRING, "EXTNAME", (char *)name, NULL, status);
    if (data) fits_write_img(f, datatype, 1, (LONGLONG)nx * ny, data, status);
}

/* Overwrites the first card of keyword key in the file with card (the file was written by cfitsio, so every
 * card sits at a multiple of 80 bytes). */
static int damage_card(const char *path, const char *key, const char *card)
{
    char *buf = NULL;
    size_t size = 0;
    if (slurp(path, &buf, &size) != 0) return -1;
    char name[9];
    snprintf(name, sizeof name, "%-8s", key); /* a card's keyword: 8 characters, blank-padded */
    for (size_t at = 0; at + 80 <= size; at += 80)
        if (strncmp(buf + at, name, 8) == 0) {
            char c[81];
            snprintf(c, sizeof c, "%-80s", card);
            memcpy(buf + at, c, 80);
            const int rc = spill(path, buf, size, 0);
            free(buf);
            return rc;
        }
    free(buf);
    fprintf(stderr, "gw_hostile_fits: %s: no keyword %s to damage\n", path, key);
    return -1;
}

/* rows [mask_y0, mask_y1) of MASK are 1 for IMG_MASKED_ROWS */
/* Tile `tile` of HDU `hdu` of the file at path cut: its COMPRESSED_DATA descriptor counts `bytes` fewer, so
 * that the tile's gzip stream stops inside its trailer (cfitsio 4.2 then grows its buffer for ever). */
static int cut_tile(const char *path, const char *hdu, long tile, long bytes)
{
    fitsfile *f = NULL;
    int status = 0, col = 0;
    LONGLONG len = 0, off = 0;
    fits_open_diskfile(&f, path, READWRITE, &status);
    fits_movnam_hdu(f, ANY_HDU, (char *)hdu, 0, &status);
    fits_get_colnum(f, CASEINSEN, "COMPRESSED_DATA", &col, &status);
    fits_read_descriptll(f, col, tile, &len, &off, &status);
    if (!status && len > bytes) fits_write_descript(f, col, tile, len - bytes, off, &status);
    int close_status = 0;
    if (f) fits_close_file(f, &close_status);
    return status || close_status ? cfitsio_failed(path, status ? status : close_status) : 0;
}

static int write_image(img_kind kind, const char *out, long nx, long ny, double value, long mask_y0, long mask_y1)
{
    const size_t n = (size_t)nx * (size_t)ny;
    double *d = malloc(n * sizeof *d);
    int *m = calloc(n, sizeof *m);
    if (!d || !m) {
        free(d), free(m);
        fprintf(stderr, "gw_hostile_fits: out of memory for %ld x %ld pixels\n", nx, ny);
        return 1;
    }
    remove(out); /* fits_create_diskfile: no overwrite, and no extended file-name syntax read into out */
    fitsfile *f = NULL;
    int status = 0;
    size_t nblank = 0;
    fits_create_diskfile(&f, out, &status);
    fits_create_img(f, BYTE_IMG, 0, NULL, &status);
    if (kind == IMG_INT_BLANK) {
        int blank = BLANK_VALUE;
        for (size_t i = 0; i < n; i++) m[i] = i % BLANK_EVERY == 0 ? BLANK_VALUE : (int)(i % 100);
        nblank = (n + BLANK_EVERY - 1) / BLANK_EVERY;
        put_hdu(f, "IMAGE", LONG_IMG, nx, ny, 0, NULL, TINT, NULL, &status);
        fits_update_key(f, TINT, "BLANK", &blank, "undefined pixels", &status);
        fits_write_img(f, TINT, 1, (LONGLONG)n, m, &status);
        memset(m, 0, n * sizeof *m);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = kind == IMG_FROM ? value : kind == IMG_MASKED_ROWS ? 100.0 : (double)(i % 100);
        put_hdu(f, "IMAGE", DOUBLE_IMG, nx, ny, kind == IMG_FROM ? 0 : kind == IMG_GZIP_CUT ? GZIP_1 : GZIP_2, NULL,
                TDOUBLE, d, &status);
        if (kind == IMG_MASKED_ROWS)
            for (long y = mask_y0; y < mask_y1 && y < ny; y++)
                for (long x = 0; x < nx; x++) m[(size_t)y * (size_t)nx + (size_t)x] = 1;
    }
    for (size_t i = 0; i < n; i++) d[i] = 1;
    put_hdu(f, "IVAR", FLOAT_IMG, nx, ny, GZIP_2, NULL, TDOUBLE, d, &status);
    const long column[2] = {1, ny};
    put_hdu(f, "MASK", LONG_IMG, nx, ny, RICE_1, kind == IMG_COLUMN_TILES ? column : NULL, TINT, m, &status);
    if (kind == IMG_DUP_HDU) {
        double two[4] = {1, 2, 3, 4};
        put_hdu(f, "IMAGE", DOUBLE_IMG, 2, 2, 0, NULL, TDOUBLE, two, &status);
    }
    fits_close_file(f, &status);
    free(d), free(m);
    if (status) return cfitsio_failed(out, status);
    if (kind == IMG_CORRUPT_ZHEADER && damage_card(out, "ZNAXIS1", "ZNAXIS1 = 'damaged'") != 0) return 1;
    if (kind == IMG_GZIP_CUT && cut_tile(out, "IMAGE", 3, 8) != 0) return 1;
    if (kind == IMG_INT_BLANK) printf("%zu\n", nblank);
    return 0;
}

/* IN copied to OUT, then opened there for writing. */
static int copy_open(const char *in, const char *out, fitsfile **f)
{
    char *buf = NULL;
    size_t size = 0;
    if (slurp(in, &buf, &size) != 0) return 1;
    const int rc = spill(out, buf, size, 0);
    free(buf);
    if (rc != 0) return 1;
    int status = 0;
    if (fits_open_diskfile(f, out, READWRITE, &status)) return cfitsio_failed(out, status);
    return 0;
}

static int psf_set(const char *in, const char *out, const char *hdu, const char *key, const char *value)
{
    fitsfile *f = NULL;
    if (copy_open(in, out, &f) != 0) return 1;
    int status = 0;
    char *end = NULL;
    const long num = strtol(hdu, &end, 10);
    if (end != hdu && *end == '\0') fits_movabs_hdu(f, (int)num + 1, NULL, &status);
    else fits_movnam_hdu(f, ANY_HDU, (char *)hdu, 0, &status);
    /* the value field as FITS writes it: numbers and logicals bare, strings quoted with '' for ' */
    char field[72] = "", *vend = NULL;
    (void)strtod(value, &vend);
    const int bare = (vend != value && *vend == '\0') || strcmp(value, "T") == 0 || strcmp(value, "F") == 0;
    if (bare || value[0] == '\'') {
        snprintf(field, sizeof field, "%s", value);
    } else {
        size_t k = 0;
        field[k++] = '\'';
        for (const char *p = value; *p && k < sizeof field - 3; p++) {
            if (*p == '\'') field[k++] = '\'';
            field[k++] = *p;
        }
        field[k++] = '\'';
        field[k] = '\0';
    }
    char card[2 * FLEN_CARD]; /* room for the longest value, which a card may not hold: refused below */
    if (snprintf(card, sizeof card, "%-8.8s= %20s", key, field) >= FLEN_CARD) {
        fprintf(stderr, "gw_hostile_fits: %s = %s: longer than an 80-character card\n", key, value);
        status = BAD_KEYCHAR;
    }
    if (!status) fits_update_card(f, (char *)key, card, &status);
    fits_close_file(f, &status);
    return status ? cfitsio_failed(out, status) : 0;
}

static int psf_scale(const char *in, const char *out, const char *param, double factor)
{
    fitsfile *f = NULL;
    if (copy_open(in, out, &f) != 0) return 1;
    int status = 0, pcol = 0, ccol = 0, type = 0, found = 0;
    char ver[FLEN_VALUE] = "";
    fits_read_key(f, TSTRING, "PSFVER", ver, NULL, &status);
    if (atof(ver) == 3) fits_movnam_hdu(f, BINARY_TBL, "PSF", 0, &status);
    else fits_movabs_hdu(f, 2, NULL, &status);
    LONGLONG nrows = 0, repeat = 0, width = 0;
    fits_get_num_rowsll(f, &nrows, &status);
    fits_get_colnum(f, CASEINSEN, "PARAM", &pcol, &status);
    fits_get_colnum(f, CASEINSEN, "COEFF", &ccol, &status);
    fits_get_coltypell(f, ccol, &type, &repeat, &width, &status);
    double *c = status ? NULL : malloc((size_t)repeat * sizeof *c);
    if (!status && !c) status = MEMORY_ALLOCATION;
    for (LONGLONG r = 1; r <= nrows && status == 0; r++) {
        char name[FLEN_VALUE] = "", *names[1] = {name}, *p = name;
        int anynul = 0;
        fits_read_col_str(f, pcol, r, 1, 1, "", names, &anynul, &status);
        while (*p == ' ') p++;
        size_t len = strlen(p);
        while (len > 0 && p[len - 1] == ' ') p[--len] = '\0';
        const size_t plen = strlen(param);
        const int match = plen > 0 && param[plen - 1] == '*' ? strncmp(p, param, plen - 1) == 0 : strcmp(p, param) == 0;
        if (status || !match) continue;
        fits_read_col(f, TDOUBLE, ccol, r, 1, repeat, NULL, c, &anynul, &status);
        for (LONGLONG k = 0; k < repeat; k++) c[k] *= factor;
        fits_write_col(f, TDOUBLE, ccol, r, 1, repeat, c, &status);
        found = 1;
    }
    free(c);
    fits_close_file(f, &status);
    if (status) return cfitsio_failed(out, status);
    if (!found) fprintf(stderr, "gw_hostile_fits: %s: no table row PARAM '%s'\n", in, param);
    return found ? 0 : 1;
}

/* frame-masked-ivar: the bins flagged ALLBADPIX (desispec's specmask bit 1) and those of them with IVAR != 0. */
static int frame_masked_ivar(const char *path)
{
    fitsfile *f = NULL;
    int status = 0, anynul = 0;
    long naxes[2] = {0, 0};
    fits_open_diskfile(&f, path, READONLY, &status);
    fits_movnam_hdu(f, IMAGE_HDU, "IVAR", 0, &status);
    fits_get_img_size(f, 2, naxes, &status);
    const size_t n = status ? 0 : (size_t)naxes[0] * (size_t)naxes[1];
    double *ivar = malloc((n ? n : 1) * sizeof *ivar);
    unsigned *mask = malloc((n ? n : 1) * sizeof *mask);
    if (!ivar || !mask) status = MEMORY_ALLOCATION;
    fits_read_img(f, TDOUBLE, 1, (LONGLONG)n, NULL, ivar, &anynul, &status);
    fits_movnam_hdu(f, IMAGE_HDU, "MASK", 0, &status);
    fits_read_img(f, TUINT, 1, (LONGLONG)n, NULL, mask, &anynul, &status);
    size_t flagged = 0, with_ivar = 0;
    for (size_t i = 0; !status && i < n; i++) {
        if (!(mask[i] & 2u)) continue;
        flagged++;
        with_ivar += ivar[i] != 0.0;
    }
    int close_status = 0;
    if (f) fits_close_file(f, &close_status);
    free(ivar), free(mask);
    if (status) return cfitsio_failed(path, status);
    printf("ALLBADPIX %zu IVAR_NONZERO %zu\n", flagged, with_ivar);
    return 0;
}

static int bad_usage(void)
{
    fputs(usage, stderr);
    return EXIT_USAGE;
}

static int run(int argc, char **argv)
{
    static const struct { const char *name; img_kind kind; } images[] = {
        {"image-int-blank", IMG_INT_BLANK},   {"image-dup-hdu", IMG_DUP_HDU},
        {"image-column-tiles", IMG_COLUMN_TILES}, {"image-corrupt-zheader", IMG_CORRUPT_ZHEADER},
        {"image-from", IMG_FROM},             {"image-masked-rows", IMG_MASKED_ROWS},
        {"image-gzip-cut", IMG_GZIP_CUT},
    };
    if (argc < 2) return bad_usage();
    const char *cmd = argv[1];
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++) {
        if (strcmp(cmd, images[i].name) != 0) continue;
        const int from = images[i].kind == IMG_FROM, rows = images[i].kind == IMG_MASKED_ROWS;
        if (argc != 5 + from + 2 * rows) return bad_usage();
        const long nx = parse_size(argv[3]), ny = parse_size(argv[4]);
        char *end = NULL;
        const double value = from ? strtod(argv[5], &end) : 0;
        const long y0 = rows ? parse_size(argv[5]) : 0, y1 = rows ? parse_size(argv[6]) : 0;
        if (!nx || !ny || (size_t)nx > ((size_t)1 << 31) / (size_t)ny || (from && (end == argv[5] || *end)) ||
            (rows && (!y1 || y0 > y1)))
            return bad_usage();
        return write_image(images[i].kind, argv[2], nx, ny, value, y0, y1);
    }
    if (strcmp(cmd, "frame-masked-ivar") == 0 && argc == 3) return frame_masked_ivar(argv[2]);
    if (strcmp(cmd, "psf-append") == 0 && argc == 5) {
        char *end = NULL;
        errno = 0;
        const unsigned long long n = strtoull(argv[4], &end, 10);
        if (errno || end == argv[4] || *end || argv[4][0] == '-' || n > ((size_t)1 << 30)) return bad_usage();
        char *buf = NULL;
        size_t size = 0;
        if (slurp(argv[2], &buf, &size) != 0) return 1;
        const int rc = spill(argv[3], buf, size, (size_t)n);
        free(buf);
        return rc ? 1 : 0;
    }
    if (strcmp(cmd, "psf-set") == 0 && argc == 7) {
        if (strlen(argv[5]) < 1 || strlen(argv[5]) > 8 || argv[4][0] == '\0') return bad_usage();
        return psf_set(argv[2], argv[3], argv[4], argv[5], argv[6]);
    }
    if (strcmp(cmd, "psf-scale") == 0 && argc == 6) {
        char *end = NULL;
        const double factor = strtod(argv[5], &end);
        if (end == argv[5] || *end || argv[4][0] == '\0') return bad_usage();
        return psf_scale(argv[2], argv[3], argv[4], factor);
    }
    return bad_usage();
}

int main(int argc, char **argv)
{
    const int rc = run(argc, argv);
    /* a failed command leaves no OUT (frame-masked-ivar writes none) */
    if (rc == 1 && strcmp(argv[1], "frame-masked-ivar") != 0) remove(argv[strncmp(argv[1], "psf-", 4) == 0 ? 3 : 2]);
    return rc;
}
