/* SPDX-License-Identifier: MIT
 * tools/gw_tiff: 16-bit grayscale TIFF stacks. Good files written here (by gw_tiff_write, and by libtiff
 * directly with strips, tiles, LZW, Deflate with a predictor, PackBits, big-endian byte order and BigTIFF)
 * read back value for value; a table of files that are not 16-bit unsigned grayscale stacks, or are broken
 * (8-bit, RGB, float, signed, min-is-white, mismatched page sizes, an undecodable compression, strips past
 * the end, a cut IFD chain, ImageJ's contiguous and hyperstack layouts), each fails with its own message
 * naming the file, the page and the rule, and leaves the stack zeroed; a failed write leaves nothing behind.
 * Every prefix of written stacks (uint16 and float32, 1 to 3 pages) fails, none reads as a shorter stack;
 * a FIFO, /dev/null and a directory fail at once. Runs under the Valgrind gate (MEMCHECK).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <tiffio.h>

#include "gw_tiff.h"
#include "gw_test_util.h"



static void quiet(const char *module, const char *fmt, va_list ap)
{
    (void)module, (void)fmt, (void)ap;
}

/* The value at (page, y, x) in every test stack. */
static uint16_t value_at(int p, uint32_t y, uint32_t x)
{
    return (uint16_t)(p * 20011u + y * 257u + x * 131u + (x & 1u) * 40000u);
}

/* One sample of item bytes holding v (truncated), in host order as libtiff expects it. */
static void put_sample(uint8_t *dst, size_t item, uint16_t v)
{
    if (item == 1) {
        *dst = (uint8_t)v;
    } else if (item == 2) {
        memcpy(dst, &v, 2);
    } else {
        const uint32_t w = v;
        memcpy(dst, &w, 4);
    }
}

/* One page as libtiff writes it in these tests. */
typedef struct page_spec {
    uint32_t width, height;
    uint16_t bits, spp, format, photometric, compression, predictor;
    uint32_t tile;           /* 0: strips; else square tiles of this size (a multiple of 16) */
    uint32_t rows_per_strip; /* 0: the whole page in one strip */
    const char *description;
} page_spec;

#define GRAY16(w, h) {(w), (h), 16, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_NONE, 0, 0, 0, NULL}

/* Writes pages with libtiff; mode "w", "wb" (big-endian) or "w8" (BigTIFF). Sample values are value_at
 * (truncated to 8 bits for 8-bit pages, repeated per sample). */
static void write_with_libtiff(const char *path, const char *mode, const page_spec *pages, int n)
{
    TIFFSetWarningHandler(quiet);
    TIFF *tif = TIFFOpen(path, mode);
    cr_assert(tif, "TIFFOpen(%s, %s)", path, mode);
    for (int p = 0; p < n; p++) {
        const page_spec *s = &pages[p];
        cr_assert(TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, s->width));
        cr_assert(TIFFSetField(tif, TIFFTAG_IMAGELENGTH, s->height));
        cr_assert(TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, s->bits));
        cr_assert(TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, s->spp));
        cr_assert(TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, s->format));
        cr_assert(TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, s->photometric));
        cr_assert(TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG));
        cr_assert(TIFFSetField(tif, TIFFTAG_COMPRESSION, s->compression));
        if (s->predictor) cr_assert(TIFFSetField(tif, TIFFTAG_PREDICTOR, s->predictor));
        if (s->description) cr_assert(TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, s->description));
        if (n > 1) cr_assert(TIFFSetField(tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE));
        const size_t item = s->bits / 8u, px = (size_t)s->spp * item;
        if (s->tile) {
            cr_assert(TIFFSetField(tif, TIFFTAG_TILEWIDTH, s->tile));
            cr_assert(TIFFSetField(tif, TIFFTAG_TILELENGTH, s->tile));
            uint8_t *tile = calloc((size_t)s->tile * s->tile, px);
            cr_assert(tile);
            for (uint32_t ty = 0; ty < s->height; ty += s->tile) {
                for (uint32_t tx = 0; tx < s->width; tx += s->tile) {
                    for (uint32_t r = 0; r < s->tile; r++)
                        for (uint32_t c = 0; c < s->tile; c++) {
                            const uint16_t v = value_at(p, ty + r, tx + c);
                            for (uint16_t k = 0; k < s->spp; k++)
                                put_sample(tile + ((size_t)r * s->tile + c) * px + k * item, item, v);
                        }
                    cr_assert(TIFFWriteTile(tif, tile, tx, ty, 0, 0) > 0);
                }
            }
            free(tile);
        } else {
            const uint32_t rps = s->rows_per_strip ? s->rows_per_strip : s->height;
            cr_assert(TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rps));
            uint8_t *row = malloc((size_t)s->width * px);
            cr_assert(row);
            for (uint32_t y = 0; y < s->height; y++) {
                for (uint32_t x = 0; x < s->width; x++) {
                    const uint16_t v = value_at(p, y, x);
                    for (uint16_t k = 0; k < s->spp; k++) put_sample(row + x * px + k * item, item, v);
                }
                cr_assert(TIFFWriteScanline(tif, row, y, 0) == 1);
            }
            free(row);
        }
        cr_assert(TIFFWriteDirectory(tif));
    }
    TIFFClose(tif);
}

/* Reads path with gw_tiff and checks every value against value_at. */
static void expect_stack(const char *path, int pages, uint32_t height, uint32_t width, const char *what)
{
    gw_tiff_stack s;
    char err[1024] = "";
    const int rc = gw_tiff_read_u16(path, 0, &s, err, sizeof err);
    cr_expect_eq(rc, 0, "%s: %s", what, err);
    if (rc) return;
    cr_expect(s.pages == pages && s.height == height && s.width == width, "%s: got %d pages of %ux%u", what, s.pages,
              s.height, s.width);
    size_t bad = 0;
    for (int p = 0; p < s.pages && p < pages; p++)
        for (uint32_t y = 0; y < height; y++)
            for (uint32_t x = 0; x < width; x++)
                if (s.data[((size_t)p * height + y) * width + x] != value_at(p, y, x) && bad++ == 0)
                    cr_expect_fail("%s: page %d (%u,%u) is %u, expected %u", what, p, y, x,
                                   s.data[((size_t)p * height + y) * width + x], value_at(p, y, x));
    cr_expect_eq(bad, 0, "%s: %zu values differ", what, bad);
    gw_tiff_free(&s);
    cr_expect(s.data == NULL && s.pages == 0);
}

Test(gw_tiff, round_trips_a_stack_written_by_gw_tiff_write)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/s.tif", dir);
    /* 1x1, one row, one column, and a page larger than one 64 KiB strip */
    const uint32_t sizes[4][3] = {{1, 1, 1}, {3, 1, 17}, {2, 19, 1}, {3, 301, 257}};
    for (int c = 0; c < 4; c++) {
        const int pages = (int)sizes[c][0];
        const uint32_t h = sizes[c][1], w = sizes[c][2];
        uint16_t *data = malloc((size_t)pages * h * w * 2);
        cr_assert(data);
        for (int p = 0; p < pages; p++)
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++) data[((size_t)p * h + y) * w + x] = value_at(p, y, x);
        cr_assert_eq(gw_tiff_write(path, GW_TIFF_U16, pages, h, w, data, err, sizeof err), 0, "%s", err);
        free(data);
        char what[64];
        snprintf(what, sizeof what, "%d pages of %ux%u", pages, h, w);
        expect_stack(path, pages, h, w, what);
    }
    cr_expect_eq(gw_count_dir_entries(dir), 1, "only the target may remain (no temporary files)");
    gw_remove_dir(dir);
}

Test(gw_tiff, writes_uint8_and_float32_pages_other_readers_understand)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/o.tif", dir);
    const uint8_t idx[6] = {0, 1, 2, 3, 254, 255};
    const float best[6] = {0.0f, 0.5f, 1e-7f, 3e38f, -1.0f, 2.25f};
    const struct {
        gw_tiff_type type;
        const void *data;
        uint16_t bits, format;
    } cases[2] = {{GW_TIFF_U8, idx, 8, SAMPLEFORMAT_UINT}, {GW_TIFF_F32, best, 32, SAMPLEFORMAT_IEEEFP}};
    for (int c = 0; c < 2; c++) {
        cr_assert_eq(gw_tiff_write(path, cases[c].type, 1, 2, 3, cases[c].data, err, sizeof err), 0, "%s", err);
        TIFF *tif = TIFFOpen(path, "r");
        cr_assert(tif);
        uint32_t w = 0, h = 0;
        uint16_t bits = 0, spp = 0, fmt = 0, photometric = 99;
        TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
        TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
        TIFFGetField(tif, TIFFTAG_BITSPERSAMPLE, &bits);
        TIFFGetField(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
        TIFFGetField(tif, TIFFTAG_SAMPLEFORMAT, &fmt);
        TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric);
        cr_expect(w == 3 && h == 2 && spp == 1 && photometric == PHOTOMETRIC_MINISBLACK);
        cr_expect_eq(bits, cases[c].bits);
        cr_expect_eq(fmt, cases[c].format);
        cr_expect_eq(TIFFNumberOfDirectories(tif), 1);
        uint8_t buf[64];
        const size_t item = cases[c].bits / 8u;
        cr_assert_eq(TIFFReadEncodedStrip(tif, 0, buf, (tmsize_t)(6 * item)), (tmsize_t)(6 * item));
        cr_expect(memcmp(buf, cases[c].data, 6 * item) == 0);
        TIFFClose(tif);
        /* and gw_tiff's own reader refuses them as input stacks, naming the depth */
        gw_tiff_stack s;
        cr_expect_eq(gw_tiff_read_u16(path, 0, &s, err, sizeof err), -1);
        cr_expect(strstr(err, c == 0 ? "page 0: 8 bits per sample" : "page 0: 32 bits per sample"), "%s", err);
    }
    gw_remove_dir(dir);
}

Test(gw_tiff, reads_strips_tiles_compression_byte_orders_and_bigtiff_written_by_libtiff)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/l.tif", dir);
    page_spec p[4];
    const struct {
        const char *what, *mode;
        uint16_t compression, predictor;
        uint32_t tile, rows_per_strip;
    } cases[] = {
        {"strips of 2 rows", "w", COMPRESSION_NONE, 0, 0, 2},
        {"LZW", "w", COMPRESSION_LZW, 0, 0, 3},
        {"Deflate with horizontal predictor", "w", COMPRESSION_ADOBE_DEFLATE, PREDICTOR_HORIZONTAL, 0, 0},
        {"PackBits", "w", COMPRESSION_PACKBITS, 0, 0, 5},
        {"16x16 tiles, partial at the edges", "w", COMPRESSION_NONE, 0, 16, 0},
        {"LZW tiles", "w", COMPRESSION_LZW, 0, 16, 0},
        {"big-endian", "wb", COMPRESSION_NONE, 0, 0, 4},
        {"big-endian LZW", "wb", COMPRESSION_LZW, PREDICTOR_HORIZONTAL, 0, 0},
        {"BigTIFF", "w8", COMPRESSION_NONE, 0, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int k = 0; k < 4; k++) {
            const page_spec g = GRAY16(37, 21);
            p[k] = g;
            p[k].compression = cases[c].compression;
            p[k].predictor = cases[c].predictor;
            p[k].tile = cases[c].tile;
            p[k].rows_per_strip = cases[c].rows_per_strip;
        }
        write_with_libtiff(path, cases[c].mode, p, 4);
        expect_stack(path, 4, 21, 37, cases[c].what);
    }
    /* an ImageJ stack with one page per slice is fine */
    for (int k = 0; k < 3; k++) {
        const page_spec g = GRAY16(5, 4);
        p[k] = g;
    }
    p[0].description = "ImageJ=1.53t\nimages=3\nslices=3\nunit=micron\n";
    write_with_libtiff(path, "w", p, 3);
    expect_stack(path, 3, 4, 5, "ImageJ stack");
    gw_remove_dir(dir);
}

/* Classic little-endian TIFF patching, to break files in ways libtiff would not write them. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*len);
    cr_assert(b);
    cr_assert_eq(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

static void spill(const char *path, const uint8_t *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(b, 1, len, f), len);
    fclose(f);
}

static uint32_t get32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
}

/* Offset of page's IFD in a classic little-endian TIFF image. */
static uint32_t ifd_of(const uint8_t *b, int page)
{
    cr_assert(b[0] == 'I' && b[1] == 'I');
    uint32_t at = get32(b + 4);
    for (int p = 0; p < page; p++) {
        const unsigned n = (unsigned)b[at] | (unsigned)b[at + 1] << 8;
        at = get32(b + at + 2 + 12 * n);
    }
    return at;
}

/* Sets the inline value of tag on page (tag == 0: the next-IFD offset). */
static void patch(const char *path, int page, uint16_t tag, uint32_t value)
{
    size_t len;
    uint8_t *b = slurp(path, &len);
    const uint32_t at = ifd_of(b, page);
    const unsigned n = (unsigned)b[at] | (unsigned)b[at + 1] << 8;
    int done = 0;
    if (tag == 0) {
        put32(b + at + 2 + 12 * n, value);
        done = 1;
    }
    for (unsigned e = 0; e < n && !done; e++) {
        uint8_t *entry = b + at + 2 + 12 * e;
        if (((unsigned)entry[0] | (unsigned)entry[1] << 8) != tag) continue;
        const unsigned type = (unsigned)entry[2] | (unsigned)entry[3] << 8;
        if (type == 3) {
            entry[8] = (uint8_t)value;
            entry[9] = (uint8_t)(value >> 8);
        } else {
            put32(entry + 8, value);
        }
        done = 1;
    }
    cr_assert(done, "tag %u not found on page %d", tag, page);
    spill(path, b, len);
    free(b);
}

typedef enum breakage { NONE, UNKNOWN_COMPRESSION, STRIP_PAST_END, SHORT_STRIP, CUT_CHAIN } breakage;

struct bad_case {
    const char *label;
    int n_pages;
    page_spec pages[3];
    breakage broken;
    int max_pages;
    const char *expect; /* "f.tif" stands for the full path */
};

#define PAGE(w, h, bits, spp, fmt, ph) {(w), (h), (bits), (spp), (fmt), (ph), COMPRESSION_NONE, 0, 0, 0, NULL}
#define G16 PAGE(7, 5, 16, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK)
#define LZW16 {7, 5, 16, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_LZW, 0, 0, 0, NULL}

static const struct bad_case bad_cases[] = {
    {"8-bit", 1, {PAGE(7, 5, 8, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK)}, NONE, 0,
     "f.tif: page 0: 8 bits per sample: expected 16 (uint16 grayscale)"},
    {"32-bit float", 1, {PAGE(7, 5, 32, 1, SAMPLEFORMAT_IEEEFP, PHOTOMETRIC_MINISBLACK)}, NONE, 0,
     "f.tif: page 0: 32 bits per sample: expected 16"},
    {"16-bit float", 1, {PAGE(7, 5, 16, 1, SAMPLEFORMAT_IEEEFP, PHOTOMETRIC_MINISBLACK)}, NONE, 0,
     "f.tif: page 0: sample format IEEE floating point: expected unsigned integer (uint16)"},
    {"16-bit signed", 1, {PAGE(7, 5, 16, 1, SAMPLEFORMAT_INT, PHOTOMETRIC_MINISBLACK)}, NONE, 0,
     "page 0: sample format signed integer: expected unsigned integer"},
    {"RGB", 1, {PAGE(7, 5, 16, 3, SAMPLEFORMAT_UINT, PHOTOMETRIC_RGB)}, NONE, 0,
     "f.tif: page 0: 3 samples per pixel (RGB): expected 1 (grayscale)"},
    {"gray + alpha", 1, {PAGE(7, 5, 16, 2, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK)}, NONE, 0,
     "page 0: 2 samples per pixel (min-is-black grayscale): expected 1 (grayscale)"},
    {"min-is-white", 1, {PAGE(7, 5, 16, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISWHITE)}, NONE, 0,
     "f.tif: page 0: photometric interpretation min-is-white grayscale: expected min-is-black grayscale"},
    {"mismatched page sizes", 3, {G16, G16, PAGE(9, 5, 16, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK)}, NONE, 0,
     "f.tif: page 2 is 9x5 (width x height), page 0 is 7x5: all pages must have the same size"},
    {"8-bit third page", 3, {G16, G16, PAGE(7, 5, 8, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK)}, NONE, 0,
     "f.tif: page 2: 8 bits per sample"},
    {"unknown compression", 1, {G16}, UNKNOWN_COMPRESSION, 0,
     "f.tif: page 0: compression 33005 (unknown scheme) cannot be decoded by this libtiff build"},
    {"strip past the end", 2, {G16, G16}, STRIP_PAST_END, 0,
     "f.tif: page 1: cannot decode strip 0 (rows 0..4): data missing or corrupt"},
    {"cut LZW strip", 1, {LZW16}, SHORT_STRIP, 0, "f.tif: page 0: cannot decode strip 0 (rows 0..4)"},
    {"cut IFD chain", 3, {G16, G16, G16}, CUT_CHAIN, 0,
     "f.tif: page 1: the next-page (IFD) pointer at offset"}, /* ... is 1073741824, past the end of the file */
    {"too many pages", 3, {G16, G16, G16}, NONE, 2, "f.tif: more than 2 pages: at most 2 Z slices are accepted"},
    {"ImageJ contiguous", 1,
     {{7, 5, 16, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_NONE, 0, 0, 0,
       "ImageJ=1.53t\nimages=4\nslices=4\n"}},
     NONE, 0, "f.tif: ImageJ says images=4 but the file has 1 page(s): ImageJ stored the slices contiguously"},
    {"ImageJ hyperstack", 2,
     {{7, 5, 16, 1, SAMPLEFORMAT_UINT, PHOTOMETRIC_MINISBLACK, COMPRESSION_NONE, 0, 0, 0,
       "ImageJ=1.53t\nimages=2\nchannels=2\nhyperstack=true\n"},
      G16},
     NONE, 0, "f.tif: an ImageJ hyperstack with 2 channels and 1 frames"},
};

Test(gw_tiff, rejects_each_unsuitable_or_broken_file_with_its_own_message)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/f.tif", dir);
    for (size_t c = 0; c < sizeof bad_cases / sizeof bad_cases[0]; c++) {
        const struct bad_case *b = &bad_cases[c];
        write_with_libtiff(path, "w", b->pages, b->n_pages);
        switch (b->broken) {
        case UNKNOWN_COMPRESSION: patch(path, 0, TIFFTAG_COMPRESSION, 33005); break; /* Aperio JPEG 2000 */
        case STRIP_PAST_END: patch(path, b->n_pages - 1, TIFFTAG_STRIPOFFSETS, 1u << 30); break;
        case SHORT_STRIP: patch(path, 0, TIFFTAG_STRIPBYTECOUNTS, 6); break;
        case CUT_CHAIN: patch(path, 1, 0, 1u << 30); break;
        case NONE: break;
        }
        gw_tiff_stack s;
        memset(&s, 0xA5, sizeof s);
        char err[1024] = "";
        const int rc = gw_tiff_read_u16(path, b->max_pages, &s, err, sizeof err);
        cr_expect_eq(rc, -1, "case %zu (%s) was accepted", c, b->label);
        if (rc == 0) {
            gw_tiff_free(&s);
            continue;
        }
        cr_expect(s.data == NULL && s.pages == 0 && s.width == 0, "case %zu (%s): stack not zeroed", c, b->label);
        char want[600];
        if (!strncmp(b->expect, "f.tif", 5)) snprintf(want, sizeof want, "%s%s", path, b->expect + 5);
        else snprintf(want, sizeof want, "%s", b->expect);
        cr_expect(strstr(err, want) != NULL, "case %zu (%s):\n  message:  %s\n  expected: %s", c, b->label, err,
                  want);
        cr_log_info("%s: %s", b->label, err);
    }
    gw_remove_dir(dir);
}

Test(gw_tiff, names_the_file_when_it_is_missing_empty_or_not_a_tiff)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], err[1024];
    gw_tiff_stack s;
    cr_expect_eq(gw_tiff_read_u16("/nonexistent/x.tif", 0, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "/nonexistent/x.tif: cannot open: No such file or directory"), "%s", err);
    cr_expect_eq(gw_tiff_read_u16("/tmp", 0, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "/tmp: not a regular file (a directory)"), "%s", err);
    snprintf(path, sizeof path, "%s/t.tif", dir);
    spill(path, (const uint8_t *)"hello, world\n", 13);
    cr_expect_eq(gw_tiff_read_u16(path, 0, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "t.tif: not a readable TIFF file (libtiff: "), "%s", err);
    spill(path, (const uint8_t *)"", 0);
    cr_expect_eq(gw_tiff_read_u16(path, 0, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "t.tif: not a readable TIFF file"), "%s", err);
    cr_expect(s.data == NULL);
    gw_remove_dir(dir);
}

Test(gw_tiff, failed_write_leaves_no_file_and_keeps_an_existing_one)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], missing[300], err[512] = "";
    snprintf(path, sizeof path, "%s/keep.tif", dir);
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.tif", dir);
    const uint16_t data[4] = {1, 2, 3, 4};
    cr_expect_eq(gw_tiff_write(missing, GW_TIFF_U16, 1, 2, 2, data, err, sizeof err), -1);
    cr_expect(strstr(err, "x.tif: cannot create a temporary file beside it: No such file or directory; nothing "
                          "written"), "%s", err);
    spill(path, (const uint8_t *)"old", 3);
    cr_expect_eq(gw_tiff_write(path, GW_TIFF_U16, 1, 0, 2, data, err, sizeof err), -1);
    cr_expect(strstr(err, "keep.tif: gw_tiff_write: bad arguments"), "%s", err);
    cr_expect_eq(gw_tiff_write(path, GW_TIFF_U16, 0, 2, 2, data, err, sizeof err), -1);
    cr_expect_eq(gw_tiff_write(path, GW_TIFF_U16, 1, 2, 2, NULL, err, sizeof err), -1);
    cr_expect_eq(gw_tiff_write(path, (gw_tiff_type)7, 1, 2, 2, data, err, sizeof err), -1);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_size, 3, "the existing file must be kept");
    cr_expect_eq(gw_count_dir_entries(dir), 1, "a refused write must leave nothing behind");

    gw_outfile f;
    cr_assert_eq(gw_tiff_stage(&f, path, GW_TIFF_U16, 1, 2, 2, data, err, sizeof err), 0, "%s", err);
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_size, 3, "staging must not touch the target");
    gw_outfile_discard(&f);
    cr_expect_eq(gw_count_dir_entries(dir), 1);
    cr_assert_eq(gw_tiff_write(path, GW_TIFF_U16, 1, 2, 2, data, err, sizeof err), 0, "%s", err);
    gw_tiff_stack s;
    cr_assert_eq(gw_tiff_read_u16(path, 0, &s, err, sizeof err), 0, "%s", err);
    cr_expect(s.pages == 1 && s.height == 2 && s.width == 2 && memcmp(s.data, data, sizeof data) == 0);
    gw_tiff_free(&s);
    cr_expect_eq(gw_count_dir_entries(dir), 1);
    gw_remove_dir(dir);
}

/* Found by fuzz_tiff (its input is tests/fuzz/corpus/tiff/regress_oom_huge_uncompressed_page.tif): 176 bytes
 * whose one uncompressed strip of 30 bytes declares a page of 536870915 x 5 pixels. The reader allocated the
 * declared 5 GiB before the first decode failed (libFuzzer: out-of-memory, malloc(5368709150)). The strip
 * table is now checked against the file first, so the error names the strip and the file size and nothing
 * of the declared size is allocated; the same for a strip that lies past the end of the file. */
static const uint8_t huge_page_in_176_bytes[176] = {
    0x49, 0x49, 0x2a, 0x00, 0x26, 0x00, 0x00, 0x00, 0x00, 0x00, 0x83, 0x00, 0x06, 0x01, 0x01, 0x01,
    0x84, 0x01, 0x07, 0x02, 0x02, 0x02, 0x85, 0x02, 0x08, 0x03, 0x03, 0x03, 0x86, 0x03, 0x09, 0x04,
    0x04, 0x04, 0x87, 0x04, 0x0a, 0x05, 0x0b, 0x00, 0x00, 0x01, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x03, 0x00, 0x00, 0x20, 0x01, 0x01, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
    0x02, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x03, 0x01, 0x03, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x11, 0x01, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
    0x15, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x16, 0x01, 0x04, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x17, 0x01, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x1e, 0x00, 0x00, 0x00, 0x1c, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x53, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

Test(gw_tiff, refuses_a_small_file_that_declares_a_huge_uncompressed_page_before_allocating_it)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], want[400], err[1024];
    snprintf(path, sizeof path, "%s/huge.tif", dir);
    uint8_t bytes[sizeof huge_page_in_176_bytes];
    memcpy(bytes, huge_page_in_176_bytes, sizeof bytes);
    for (int variant = 0; variant < 2; variant++) {
        if (variant == 1) put32(bytes + 108, 1000); /* the StripOffsets value: past the end */
        spill(path, bytes, sizeof bytes);
        gw_tiff_stack s;
        memset(&s, 0xA5, sizeof s);
        cr_expect_eq(gw_tiff_read_u16(path, 255, &s, err, sizeof err), -1, "variant %d was accepted", variant);
        cr_expect(s.data == NULL && s.pages == 0 && s.width == 0, "variant %d: stack not zeroed", variant);
        /* libtiff may split the strip into one per row: the strip number and rows are its own */
        snprintf(want, sizeof want, "%s: page 0: cannot decode strip 0 (rows 0..", path);
        cr_expect(strstr(err, want) != NULL, "variant %d: %s", variant, err);
        cr_expect(strstr(err, variant ? "bytes at offset 1000, the file has 176 bytes" : "the file has 176 bytes"),
                  "variant %d: the message does not name the file size: %s", variant, err);
    }
    gw_remove_dir(dir);
}

/* A FIFO blocked the old readers for ever: fopen/TIFFOpen wait in open(2) for a writer that never comes
 * (gw_tiff checked with stat() first, then opened the path: a FIFO swapped in between blocked as well).
 * Now each fails at once, naming what it is; the timeout turns a hang into a failure. */
Test(gw_tiff, a_fifo_dev_null_or_a_directory_fails_at_once, .timeout = 60)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char fifo[256], err[1024], want[400];
    snprintf(fifo, sizeof fifo, "%s/stack.tif", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    const struct {
        const char *path, *kind;
    } cases[] = {{fifo, "a FIFO"}, {"/dev/null", "a character device"}, {dir, "a directory"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gw_tiff_stack s;
        memset(&s, 0xA5, sizeof s);
        cr_expect_eq(gw_tiff_read_u16(cases[c].path, 0, &s, err, sizeof err), -1, "%s was read", cases[c].path);
        cr_expect(s.data == NULL && s.pages == 0 && s.width == 0 && s.height == 0, "%s: stack not zeroed",
                  cases[c].kind);
        snprintf(want, sizeof want, "%s: not a regular file (%s)", cases[c].path, cases[c].kind);
        cr_expect(strstr(err, want) != NULL, "%s:\n  message:  %s\n  expected: %s", cases[c].kind, err, want);
    }
    /* a FIFO with a writer attached (reads would block on it, not only the open) */
    const int wfd = open(fifo, O_RDWR | O_NONBLOCK);
    cr_assert(wfd >= 0);
    gw_tiff_stack s;
    cr_expect_eq(gw_tiff_read_u16(fifo, 0, &s, err, sizeof err), -1);
    cr_expect(strstr(err, "not a regular file (a FIFO)") != NULL, "%s", err);
    close(wfd);
    gw_remove_dir(dir);
}

/* ---- every prefix of a written stack ---- */

/* The value of page p, row y, column x in the prefix stacks; as float32 the same integer. */
static uint16_t prefix_value(int p, uint32_t y, uint32_t x)
{
    return (uint16_t)(p * 1000u + y * 37u + x * 3u + 1u);
}

/* The whole float32 file, read back by libtiff itself page by page: exactly the values written. */
static void expect_float_pages(const char *path, int pages, uint32_t height, uint32_t width, const char *what)
{
    TIFFSetWarningHandler(quiet);
    TIFF *tif = TIFFOpen(path, "r");
    cr_assert(tif, "%s: TIFFOpen", what);
    cr_expect_eq(TIFFNumberOfDirectories(tif), (tdir_t)pages, "%s: page count", what);
    float *row = malloc((size_t)width * sizeof *row);
    cr_assert(row);
    for (int p = 0; p < pages; p++) {
        cr_assert(TIFFSetDirectory(tif, (tdir_t)p), "%s: page %d", what, p);
        for (uint32_t y = 0; y < height; y++) {
            cr_assert_eq(TIFFReadScanline(tif, row, y, 0), 1, "%s: page %d row %u", what, p, y);
            for (uint32_t x = 0; x < width; x++)
                cr_expect(row[x] == (float)prefix_value(p, y, x), "%s: page %d (%u,%u) is %g", what, p, y, x,
                          (double)row[x]);
        }
    }
    free(row);
    TIFFClose(tif);
}

/* Each file as gw_tiff_write makes it (one strip per page at these sizes, the directory after the strip);
 * read at every length from 0 to size-1: each is -1 with a message that starts with the path and a zeroed
 * stack, never a stack of fewer pages; the whole file reads back exactly (float32: gw_tiff_read_u16 refuses
 * it for its depth alone, and libtiff reads back every value). Before the chain was checked, the first
 * 806..809 and 1608..1611 bytes of the 3-page 16x20 uint16 file read as 1- and 2-page stacks (cuts inside a
 * next-page pointer, which libtiff reads as 0, "last page"), and 2410..2413 bytes as all 3 pages. */
Test(gw_tiff, every_prefix_of_a_written_stack_fails_and_the_whole_file_reads_back)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], cut[256], err[1024];
    snprintf(path, sizeof path, "%s/full.tif", dir);
    snprintf(cut, sizeof cut, "%s/cut.tif", dir);
    const struct {
        gw_tiff_type type;
        int pages;
        uint32_t height, width;
    } files[] = {
        {GW_TIFF_U16, 3, 20, 16}, {GW_TIFF_U16, 2, 1, 1}, {GW_TIFF_U16, 1, 20, 16}, {GW_TIFF_U16, 3, 1, 1},
        {GW_TIFF_F32, 3, 1, 1},   {GW_TIFF_F32, 2, 20, 16}, {GW_TIFF_F32, 1, 1, 1},
    };
    size_t total = 0;
    for (size_t c = 0; c < sizeof files / sizeof files[0]; c++) {
        const int pages = files[c].pages;
        const uint32_t h = files[c].height, w = files[c].width;
        const size_t count = (size_t)pages * h * w;
        const int is_float = files[c].type == GW_TIFF_F32;
        char what[64];
        snprintf(what, sizeof what, "%s, %d page(s) of %ux%u", is_float ? "float32" : "uint16", pages, h, w);
        void *data = malloc(count * (is_float ? 4 : 2));
        cr_assert(data);
        for (int p = 0; p < pages; p++)
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++) {
                    const size_t i = ((size_t)p * h + y) * w + x;
                    if (is_float) ((float *)data)[i] = (float)prefix_value(p, y, x);
                    else ((uint16_t *)data)[i] = prefix_value(p, y, x);
                }
        cr_assert_eq(gw_tiff_write(path, files[c].type, pages, h, w, data, err, sizeof err), 0, "%s", err);
        free(data);
        size_t len;
        uint8_t *bytes = slurp(path, &len);
        size_t accepted = 0, unnamed = 0;
        gw_write_bytes(cut, bytes, len);
        for (size_t k = len; k-- > 0;) { /* longest first: each prefix is the last one truncated by a byte */
            cr_assert_eq(truncate(cut, (off_t)k), 0);
            gw_tiff_stack s;
            memset(&s, 0xA5, sizeof s);
            err[0] = '\0';
            const int rc = gw_tiff_read_u16(cut, 0, &s, err, sizeof err);
            if (rc == 0) {
                if (accepted++ == 0)
                    cr_expect_fail("%s: the first %zu of %zu bytes were read as %d page(s) of %ux%u", what, k, len,
                                   s.pages, s.height, s.width);
                gw_tiff_free(&s);
                continue;
            }
            cr_expect(s.data == NULL && s.pages == 0 && s.height == 0 && s.width == 0,
                      "%s: the first %zu bytes: stack not zeroed", what, k);
            if (strncmp(err, cut, strlen(cut)) != 0 && unnamed++ == 0)
                cr_expect_fail("%s: the first %zu bytes: the message does not name the file: %s", what, k, err);
        }
        cr_expect_eq(accepted, 0, "%s: %zu of %zu prefixes were accepted", what, accepted, len);
        cr_expect_eq(unnamed, 0, "%s: %zu messages without the file name", what, unnamed);
        total += len;
        if (is_float) {
            gw_tiff_stack s;
            cr_expect_eq(gw_tiff_read_u16(path, 0, &s, err, sizeof err), -1, "%s: read as uint16", what);
            cr_expect(strstr(err, "page 0: 32 bits per sample: expected 16") != NULL, "%s: %s", what, err);
            expect_float_pages(path, pages, h, w, what);
        } else {
            gw_tiff_stack s;
            cr_assert_eq(gw_tiff_read_u16(path, 0, &s, err, sizeof err), 0, "%s: the whole file: %s", what, err);
            cr_expect(s.pages == pages && s.height == h && s.width == w, "%s: read as %d pages of %ux%u", what,
                      s.pages, s.height, s.width);
            size_t bad = 0;
            for (size_t i = 0; i < count && s.pages == pages; i++) {
                const int p = (int)(i / ((size_t)h * w));
                const uint32_t y = (uint32_t)(i / w % h), x = (uint32_t)(i % w);
                bad += s.data[i] != prefix_value(p, y, x);
            }
            cr_expect_eq(bad, 0, "%s: %zu values differ", what, bad);
            gw_tiff_free(&s);
        }
        free(bytes);
    }
    cr_log_info("%zu prefixes of %zu written files rejected", total, sizeof files / sizeof files[0]);
    gw_remove_dir(dir);
}

/* The reported case by itself, with the messages: cut inside page 1's next-page pointer (once 2 pages), just
 * after it (page 2's directory missing), and inside the last page's (once all 3 pages, the file one byte
 * short). */
Test(gw_tiff, a_stack_cut_in_or_after_a_next_page_pointer_names_the_page_and_the_offset)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], err[1024], want[512];
    snprintf(path, sizeof path, "%s/s.tif", dir);
    uint16_t data[3 * 20 * 16];
    for (size_t i = 0; i < sizeof data / sizeof data[0]; i++) data[i] = (uint16_t)(i * 7u);
    cr_assert_eq(gw_tiff_write(path, GW_TIFF_U16, 3, 20, 16, data, err, sizeof err), 0, "%s", err);
    size_t len;
    uint8_t *b = slurp(path, &len);
    const uint32_t ifd1 = ifd_of(b, 1), ifd2 = ifd_of(b, 2);
    const unsigned n1 = (unsigned)b[ifd1] | (unsigned)b[ifd1 + 1] << 8;
    const size_t next1 = ifd1 + 2 + 12u * n1; /* page 1's next-page pointer */
    const struct {
        size_t cut;
        const char *words;
    } cases[] = {
        {next1 + 2, "page 1: its directory (IFD) at offset %u holds"},
        {next1 + 4, "page 1: the next-page (IFD) pointer at offset %zu is %u, past the end of the file"},
        {len - 1, "page 2: its directory (IFD) at offset %u holds"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gw_write_bytes(path, b, cases[c].cut);
        gw_tiff_stack s;
        cr_expect_eq(gw_tiff_read_u16(path, 0, &s, err, sizeof err), -1, "cut at %zu was read", cases[c].cut);
        if (c == 0) snprintf(want, sizeof want, cases[c].words, ifd1);
        else if (c == 1) snprintf(want, sizeof want, cases[c].words, next1, ifd2);
        else snprintf(want, sizeof want, cases[c].words, ifd2);
        cr_expect(strstr(err, want) != NULL && strncmp(err, path, strlen(path)) == 0,
                  "cut at %zu of %zu:\n  message:  %s\n  expected: %s", cases[c].cut, len, err, want);
        cr_expect(strstr(err, "truncated") != NULL, "%s", err);
        cr_log_info("the first %zu of %zu bytes: %s", cases[c].cut, len, err);
    }
    free(b);
    gw_remove_dir(dir);
}

/* The warnings gw_tiff.h lists as harmless leave the stack as it is: a private tag libtiff does not know,
 * tags out of order, a text tag without its closing NUL. The page must read, value for value. */
Test(gw_tiff, reads_a_page_whose_only_libtiff_warnings_are_harmless)
{
    char dir[] = "/tmp/gw_tiff_test.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256], err[1024] = "";
    snprintf(path, sizeof path, "%s/w.tif", dir);
    enum { W = 4, H = 2, N_TAGS = 11 };
    uint8_t b[512] = {0};
    const uint32_t ifd = 8, desc_at = ifd + 2 + 12 * N_TAGS + 4, data_at = desc_at + 8;
    memcpy(b, "II*\0", 4);
    put32(b + 4, ifd);
    b[ifd] = N_TAGS;
    const struct {
        uint16_t tag, type;
        uint32_t count, value;
    } tags[N_TAGS] = {
        {257, 4, 1, H}, {256, 4, 1, W}, /* out of order */
        {258, 3, 1, 16}, {259, 3, 1, 1}, {262, 3, 1, 1},
        {270, 2, 8, desc_at}, /* "stack 01" without a NUL */
        {273, 4, 1, data_at}, {277, 3, 1, 1}, {278, 4, 1, H}, {279, 4, 1, W * H * 2},
        {65000, 4, 1, 12345}, /* a private tag */
    };
    for (int t = 0; t < N_TAGS; t++) {
        uint8_t *e = b + ifd + 2 + 12 * t;
        e[0] = (uint8_t)tags[t].tag, e[1] = (uint8_t)(tags[t].tag >> 8);
        e[2] = (uint8_t)tags[t].type;
        put32(e + 4, tags[t].count);
        if (tags[t].type == 3) e[8] = (uint8_t)tags[t].value, e[9] = (uint8_t)(tags[t].value >> 8);
        else put32(e + 8, tags[t].value);
    }
    memcpy(b + desc_at, "stack 01", 8);
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            const uint16_t v = value_at(0, y, x);
            b[data_at + (y * W + x) * 2] = (uint8_t)v; /* little-endian, like the file */
            b[data_at + (y * W + x) * 2 + 1] = (uint8_t)(v >> 8);
        }
    spill(path, b, data_at + W * H * 2);
    expect_stack(path, 1, H, W, "harmless warnings");
    gw_tiff_stack s;
    cr_expect_eq(gw_tiff_read_u16(path, 0, &s, err, sizeof err), 0, "%s", err);
    if (s.data) gw_tiff_free(&s);
    gw_remove_dir(dir);
}
