/* SPDX-License-Identifier: MIT
 * TIFF stacks through libtiff (see gw_tiff.h). Reading makes two passes over the page chain: the first
 * checks the chain of directories against the bytes and every page's tags (so a bad page 40 fails before
 * 40 pages of data are decoded, and the allocation is sized once), the second decodes strips or tiles
 * straight into the stack. libtiff reads the descriptor gw_infile_open gave, and every libtiff warning but
 * a few harmless ones fails the read (gw_tiff.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "gw_tiff.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tiffio.h>

#include "gw_infile.h"
#include "gw_io_err.h"

/* libtiff's messages for one file. The first error is kept for our own message. Warnings are sorted: the few
 * that only say libtiff skipped something this reader never uses (gw_tiff.h lists them) are dropped, so a CLI
 * does not print libtiff's chatter about private tags; every other warning means libtiff lost, guessed or
 * cut something, and the first of those is kept, and the reader refuses the file with it. */
typedef struct tiff_log {
    char first_error[384];
    int errors;
    char first_warning[384];
    int warnings; /* warnings that mean lost or doubtful data */
} tiff_log;

static void log_error(tiff_log *log, const char *module, const char *fmt, va_list ap)
{
    if (log->errors++ > 0) return;
    char text[320];
    vsnprintf(text, sizeof text, fmt, ap);
    snprintf(log->first_error, sizeof log->first_error, "%s%s%s", module ? module : "", module ? ": " : "", text);
}

/* The warnings that lose nothing this reader uses (matched on libtiff's text, 4.0 to 4.7; a reworded one is
 * refused, never silently accepted). */
static int benign_warning(const char *text)
{
    static const char *const benign[] = {
        "Unknown field with tag",                 /* a private tag (ImageJ, MetaMorph, OME...): kept as anonymous */
        "tags are not sorted in ascending order", /* read all the same */
        "does not end in null byte",              /* a text tag without its final NUL: read whole (one with a
                                                   * NUL inside, "value incorrectly truncated", is refused) */
        "Old-style LZW codes",                    /* pre-1995 LZW: libtiff's compatible decoder reads it in full */
        "Nonstandard tile width",                 /* tiles not a multiple of 16: decoded all the same */
        "Nonstandard tile length",
    };
    for (size_t i = 0; i < sizeof benign / sizeof benign[0]; i++)
        if (strstr(text, benign[i])) return 1;
    return 0;
}

static void log_warning(tiff_log *log, const char *module, const char *fmt, va_list ap)
{
    char text[320];
    vsnprintf(text, sizeof text, fmt, ap);
    if (benign_warning(text) || log->warnings++ > 0) return;
    snprintf(log->first_warning, sizeof log->first_warning, "%s%s%s", module ? module : "", module ? ": " : "", text);
}

#if defined(TIFFLIB_AT_LEAST)
#define GW_TIFF_PER_HANDLE_LOG 1 /* libtiff >= 4.5: handlers per open file */
static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    log_error(user, module, fmt, ap);
    return 1;
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    log_warning(user, module, fmt, ap);
    return 1;
}

/* libtiff on the descriptor fd. On success the TIFF owns fd (TIFFClose closes it); on failure fd is still
 * open and the caller's (TIFFClientOpen's failure path frees the TIFF without calling its close proc, in
 * every libtiff from 4.0 to 4.7). */
static TIFF *open_logged(const char *path, int fd, const char *mode, tiff_log *log)
{
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) {
        snprintf(log->first_error, sizeof log->first_error, "out of memory");
        log->errors++;
        return NULL;
    }
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, log);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, log);
    TIFF *tif = TIFFFdOpenExt(fd, path, mode, opts);
    TIFFOpenOptionsFree(opts);
    return tif;
}

static void close_logged(TIFF *tif)
{
    if (tif) TIFFClose(tif);
}
#else
/* Older libtiff: process-wide handlers. The CLI opens one TIFF at a time, so one current log is enough. */
static tiff_log *current_log;
static void on_error_global(const char *module, const char *fmt, va_list ap)
{
    if (current_log) log_error(current_log, module, fmt, ap);
}

static void on_warning_global(const char *module, const char *fmt, va_list ap)
{
    if (current_log) log_warning(current_log, module, fmt, ap);
}

static TIFF *open_logged(const char *path, int fd, const char *mode, tiff_log *log)
{
    current_log = log;
    TIFFSetErrorHandler(on_error_global);
    TIFFSetWarningHandler(on_warning_global);
    TIFF *tif = TIFFFdOpen(fd, path, mode);
    if (!tif) current_log = NULL; /* the log lives on the caller's stack */
    return tif;
}

static void close_logged(TIFF *tif)
{
    if (tif) TIFFClose(tif);
    current_log = NULL;
}
#endif

static const char *photometric_name(unsigned v)
{
    switch (v) {
    case PHOTOMETRIC_MINISWHITE: return "min-is-white grayscale";
    case PHOTOMETRIC_MINISBLACK: return "min-is-black grayscale";
    case PHOTOMETRIC_RGB: return "RGB";
    case PHOTOMETRIC_PALETTE: return "palette colour";
    case PHOTOMETRIC_MASK: return "transparency mask";
    case PHOTOMETRIC_SEPARATED: return "separated (CMYK)";
    case PHOTOMETRIC_YCBCR: return "YCbCr";
    case PHOTOMETRIC_CIELAB: case PHOTOMETRIC_ICCLAB: case PHOTOMETRIC_ITULAB: return "L*a*b*";
    case PHOTOMETRIC_CFA: return "colour filter array";
    default: return "unknown";
    }
}

static const char *sample_format_name(unsigned v)
{
    switch (v) {
    case SAMPLEFORMAT_UINT: return "unsigned integer";
    case SAMPLEFORMAT_INT: return "signed integer";
    case SAMPLEFORMAT_IEEEFP: return "IEEE floating point";
    case SAMPLEFORMAT_VOID: return "untyped";
    case SAMPLEFORMAT_COMPLEXINT: return "complex integer";
    case SAMPLEFORMAT_COMPLEXIEEEFP: return "complex floating point";
    default: return "unknown";
    }
}

/* " (libtiff: ...)" with libtiff's first error, else " (libtiff warned: ...)" with its first warning that means
 * lost or doubtful data, else "". */
static const char *libtiff_said(const tiff_log *log, char *buf, size_t size)
{
    if (log->errors) snprintf(buf, size, " (libtiff: %s)", log->first_error);
    else if (log->warnings) snprintf(buf, size, " (libtiff warned: %s)", log->first_warning);
    else return "";
    return buf;
}

/* One page's tags against the rules; 0 or -1 (err set). */
static int check_page(TIFF *tif, const char *path, int page, uint32_t *width, uint32_t *height, char *err,
                      size_t err_size)
{
    uint32_t w = 0, h = 0;
    uint16_t spp = 1, bits = 1, fmt = SAMPLEFORMAT_UINT, photometric = PHOTOMETRIC_MINISBLACK,
             compression = COMPRESSION_NONE;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h) || w == 0 ||
        h == 0) {
        set_err(err, err_size, "%s: page %d: no image size (ImageWidth/ImageLength missing or 0)", path, page);
        return -1;
    }
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &fmt);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
    const int has_photometric = TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric);
    if (spp != 1) {
        set_err(err, err_size, "%s: page %d: %u samples per pixel (%s): expected 1 (grayscale)", path, page,
                (unsigned)spp, has_photometric ? photometric_name(photometric) : "colour or extra channels");
        return -1;
    }
    if (bits != 16) {
        set_err(err, err_size, "%s: page %d: %u bits per sample: expected 16 (uint16 grayscale)", path, page,
                (unsigned)bits);
        return -1;
    }
    if (fmt != SAMPLEFORMAT_UINT) {
        set_err(err, err_size, "%s: page %d: sample format %s: expected unsigned integer (uint16)", path, page,
                sample_format_name(fmt));
        return -1;
    }
    if (has_photometric && photometric != PHOTOMETRIC_MINISBLACK) {
        set_err(err, err_size, "%s: page %d: photometric interpretation %s: expected min-is-black grayscale%s", path,
                page, photometric_name(photometric),
                photometric == PHOTOMETRIC_MINISWHITE ? " (inverted values would invert the focus measure's input)"
                                                      : "");
        return -1;
    }
    if (!TIFFIsCODECConfigured(compression)) {
        const TIFFCodec *codec = TIFFFindCODEC(compression);
        set_err(err, err_size, "%s: page %d: compression %u (%s) cannot be decoded by this libtiff build", path, page,
                (unsigned)compression, codec && codec->name ? codec->name : "unknown scheme");
        return -1;
    }
    *width = w;
    *height = h;
    return 0;
}

/* a * b, or UINT64_MAX when that overflows: a size no file can hold. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* The stored data of the current page, from its strip or tile table, before anything is allocated: the
 * table must cover the page, and every strip or tile the page needs must have bytes inside the file
 * (uncompressed: all of its bytes). Otherwise a file of a few hundred bytes that declares a huge page would
 * cost an allocation of the declared size before the first decode failed. Compressed data can expand, so
 * there the declared size is trusted until decoding. The messages are read_page's, with the detail added.
 * 0 or -1 (err set). */
static int check_page_data(TIFF *tif, const char *path, int page, uint32_t width, uint32_t height,
                           uint64_t file_size, char *err, size_t err_size)
{
    uint16_t compression = COMPRESSION_NONE;
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
    const int tiled = TIFFIsTiled(tif);
    uint32_t tw = 0, th = 0, rows_per_strip = height;
    uint64_t count, across = 1;
    if (tiled) {
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
        const uint64_t tile_bytes = (uint64_t)TIFFTileSize64(tif);
        if (tw == 0 || th == 0 || tile_bytes != mul_sat((uint64_t)tw * th, 2)) {
            set_err(err, err_size, "%s: page %d: bad tile layout (%ux%u tiles of %llu bytes)", path, page, tw, th,
                    (unsigned long long)tile_bytes);
            return -1;
        }
        across = ((uint64_t)width + tw - 1) / tw;
        count = across * (((uint64_t)height + th - 1) / th);
        if (count > TIFFNumberOfTiles(tif)) {
            set_err(err, err_size, "%s: page %d: %u tiles for %ux%u pixels in %ux%u tiles: the tile table is short",
                    path, page, TIFFNumberOfTiles(tif), width, height, tw, th);
            return -1;
        }
    } else {
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
        if (rows_per_strip == 0 || rows_per_strip > height) rows_per_strip = height;
        count = ((uint64_t)height + rows_per_strip - 1) / rows_per_strip;
        if (count > TIFFNumberOfStrips(tif)) {
            set_err(err, err_size, "%s: page %d: %u strips for %u rows of %u: the strip table is short", path, page,
                    TIFFNumberOfStrips(tif), height, rows_per_strip);
            return -1;
        }
    }
    /* Stops at the first strip or tile without data, so a table of millions of empty entries costs one. */
    for (uint64_t i = 0; i < count; i++) {
        const uint32_t s = (uint32_t)i; /* count <= the table size, a uint32 */
        const uint64_t at = TIFFGetStrileOffset(tif, s), bytes = TIFFGetStrileByteCount(tif, s);
        uint64_t need;
        char what[96];
        if (tiled) {
            need = mul_sat((uint64_t)tw * th, 2);
            snprintf(what, sizeof what, "tile %u at row %llu, column %llu", s, (unsigned long long)(i / across * th),
                     (unsigned long long)(i % across * tw));
        } else {
            const uint64_t y = i * rows_per_strip, rows = height - y < rows_per_strip ? height - y : rows_per_strip;
            need = mul_sat(rows * width, 2);
            snprintf(what, sizeof what, "strip %u (rows %llu..%llu)", s, (unsigned long long)y,
                     (unsigned long long)(y + rows - 1));
        }
        if (compression != COMPRESSION_NONE) need = 1;
        if (bytes == 0 || at > file_size || bytes > file_size - at) {
            set_err(err, err_size, "%s: page %d: cannot decode %s: data missing or corrupt: %llu bytes at offset %llu, "
                    "the file has %llu bytes", path, page, what, (unsigned long long)bytes, (unsigned long long)at,
                    (unsigned long long)file_size);
            return -1;
        }
        if (bytes < need) {
            set_err(err, err_size, "%s: page %d: cannot decode %s: data missing or corrupt: %llu bytes stored, %llu "
                    "needed uncompressed", path, page, what, (unsigned long long)bytes, (unsigned long long)need);
            return -1;
        }
    }
    return 0;
}

/* Reads "key=N" from an ImageJ description; 0 when absent. */
static long imagej_value(const char *desc, const char *key)
{
    const size_t len = strlen(key);
    for (const char *p = desc; (p = strstr(p, key)) != NULL; p += len) {
        if ((p == desc || p[-1] == '\n') && p[len] == '=') return strtol(p + len + 1, NULL, 10);
    }
    return 0;
}

/* ImageJ's own layouts that a page-per-slice reader would get wrong. 0 or -1 (err set). */
static int check_imagej(TIFF *tif, const char *path, int pages, char *err, size_t err_size)
{
    const char *desc = NULL;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc) || !desc || strncmp(desc, "ImageJ=", 7) != 0) return 0;
    const long images = imagej_value(desc, "images"), channels = imagej_value(desc, "channels"),
               frames = imagej_value(desc, "frames");
    if (channels > 1 || frames > 1) {
        set_err(err, err_size, "%s: an ImageJ hyperstack with %ld channels and %ld frames: its pages interleave "
                "channels, slices and frames; save a single-channel, single-time-point Z stack", path,
                channels > 1 ? channels : 1, frames > 1 ? frames : 1);
        return -1;
    }
    if (images > pages) {
        set_err(err, err_size, "%s: ImageJ says images=%ld but the file has %d page(s): ImageJ stored the slices "
                "contiguously (its layout for files over 4 GB), which is not supported; save it as a .npy file or "
                "an OME-TIFF with one page per slice", path, images, pages);
        return -1;
    }
    return 0;
}

/* Decodes the current page into dst (height x width, uint16). 0 or -1 (err set). */
static int read_page(TIFF *tif, const char *path, int page, uint32_t height, uint32_t width, uint16_t *dst,
                     tiff_log *log, char *err, size_t err_size)
{
    char said[420];
    if (TIFFIsTiled(tif)) {
        uint32_t tw = 0, th = 0;
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
        const tmsize_t tile_bytes = TIFFTileSize(tif);
        if (tw == 0 || th == 0 || tile_bytes != (tmsize_t)tw * th * 2) {
            set_err(err, err_size, "%s: page %d: bad tile layout (%ux%u tiles of %lld bytes)%s", path, page, tw, th,
                    (long long)tile_bytes, libtiff_said(log, said, sizeof said));
            return -1;
        }
        uint16_t *tile = malloc((size_t)tile_bytes);
        if (!tile) {
            set_err(err, err_size, "%s: page %d: out of memory for a %ux%u tile", path, page, tw, th);
            return -1;
        }
        for (uint32_t y = 0; y < height; y += th) {
            for (uint32_t x = 0; x < width; x += tw) {
                const uint32_t t = TIFFComputeTile(tif, x, y, 0, 0);
                if (TIFFReadEncodedTile(tif, t, tile, tile_bytes) != tile_bytes || log->errors || log->warnings) {
                    set_err(err, err_size, "%s: page %d: cannot decode tile %u at row %u, column %u%s", path, page, t,
                            y, x, libtiff_said(log, said, sizeof said));
                    free(tile);
                    return -1;
                }
                const uint32_t rows = height - y < th ? height - y : th, cols = width - x < tw ? width - x : tw;
                for (uint32_t r = 0; r < rows; r++)
                    memcpy(dst + (size_t)(y + r) * width + x, tile + (size_t)r * tw, (size_t)cols * 2);
            }
        }
        free(tile);
        return 0;
    }
    uint32_t rows_per_strip = height;
    TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
    if (rows_per_strip == 0 || rows_per_strip > height) rows_per_strip = height;
    const uint32_t strips = TIFFNumberOfStrips(tif);
    if (strips < (height + rows_per_strip - 1) / rows_per_strip) {
        set_err(err, err_size, "%s: page %d: %u strips for %u rows of %u: the strip table is short", path, page,
                strips, height, rows_per_strip);
        return -1;
    }
    for (uint32_t s = 0, y = 0; y < height; s++, y += rows_per_strip) {
        const uint32_t rows = height - y < rows_per_strip ? height - y : rows_per_strip;
        const tmsize_t want = (tmsize_t)rows * width * 2;
        if (TIFFReadEncodedStrip(tif, s, dst + (size_t)y * width, want) != want || log->errors || log->warnings) {
            set_err(err, err_size, "%s: page %d: cannot decode strip %u (rows %u..%u): data missing or corrupt%s", path,
                    page, s, y, y + rows - 1, libtiff_said(log, said, sizeof said));
            return -1;
        }
    }
    return 0;
}

/* ---- the IFD chain, read from the bytes ----
 *
 * libtiff reads a next-page pointer that the file cuts short as 0, "no more pages", without a word, so a
 * stack cut inside one came back with pages missing. The reader therefore walks the chain itself, on the
 * same descriptor (pread: libtiff's file position is untouched): every directory, with its entries and its
 * next-page pointer, must lie inside the file, every pointer must be 0 or point into the file, and libtiff
 * must read each page exactly where the chain says it is. */
typedef struct ifd_chain {
    int fd;
    uint64_t size;  /* the file's, from fstat on fd */
    int big_endian; /* "MM" */
    int bigtiff;    /* version 43: 8-byte counts and offsets */
    uint64_t first; /* the header's first IFD offset */
} ifd_chain;

static uint64_t get_uint(const uint8_t *b, unsigned n, int big_endian)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)b[big_endian ? n - 1 - i : i] << (8 * i);
    return v;
}

/* n bytes at offset off (inside the file: the caller checked); 0 or -1. */
static int read_at(int fd, uint64_t off, uint8_t *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        const ssize_t r = pread(fd, buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) errno = EIO; /* the file shrank since its size was taken */
        if (r <= 0) return -1;
        done += (size_t)r;
    }
    return 0;
}

/* The header (libtiff accepted it, so it is one of the four TIFF signatures). 0 or -1 (err set). */
static int chain_start(ifd_chain *c, int fd, uint64_t size, const char *path, char *err, size_t err_size)
{
    uint8_t h[16];
    c->fd = fd;
    c->size = size;
    if (size < 8 || read_at(fd, 0, h, size < 16 ? 8 : 16)) {
        set_err(err, err_size, "%s: cannot read the TIFF header (%llu bytes)", path, (unsigned long long)size);
        return -1;
    }
    c->big_endian = h[0] == 'M';
    c->bigtiff = get_uint(h + 2, 2, c->big_endian) == 43;
    if (c->bigtiff && size < 16) {
        set_err(err, err_size, "%s: truncated: the file ends inside the 16-byte BigTIFF header (%llu bytes)", path,
                (unsigned long long)size);
        return -1;
    }
    c->first = c->bigtiff ? get_uint(h + 8, 8, c->big_endian) : get_uint(h + 4, 4, c->big_endian);
    return 0;
}

/* The directory of page at ifd: its entry count, its entries and its next-page pointer must lie inside the
 * file; *next gets the pointer, which must be 0 or point into the file. `from` says where ifd came from, for
 * the messages. 0 or -1 (err set). */
static int chain_check(const ifd_chain *c, const char *path, int page, uint64_t ifd, const char *from,
                       uint64_t *next, char *err, size_t err_size)
{
    const uint64_t count_bytes = c->bigtiff ? 8 : 2, entry_bytes = c->bigtiff ? 20 : 12, ptr = c->bigtiff ? 8 : 4;
    const unsigned long long size = (unsigned long long)c->size;
    uint8_t b[8];
    if (ifd > c->size || count_bytes > c->size - ifd || read_at(c->fd, ifd, b, (size_t)count_bytes)) {
        set_err(err, err_size, "%s: page %d: its directory (IFD) at offset %llu, %s, lies past the end of the file "
                "(%llu bytes): the file is truncated or corrupt", path, page, (unsigned long long)ifd, from, size);
        return -1;
    }
    const uint64_t n = get_uint(b, (unsigned)count_bytes, c->big_endian);
    const uint64_t room = c->size - ifd - count_bytes;
    if (n > room / entry_bytes || ptr > room - n * entry_bytes) {
        set_err(err, err_size, "%s: page %d: its directory (IFD) at offset %llu holds %llu entries of %llu bytes and "
                "a %llu-byte next-page pointer, which run past the end of the file (%llu bytes): the file is "
                "truncated (or the offset does not point at a directory)", path, page, (unsigned long long)ifd,
                (unsigned long long)n, (unsigned long long)entry_bytes, (unsigned long long)ptr, size);
        return -1;
    }
    const uint64_t at = ifd + count_bytes + n * entry_bytes;
    if (read_at(c->fd, at, b, (size_t)ptr)) {
        set_err(err, err_size, "%s: page %d: cannot read the next-page pointer at offset %llu: %s", path, page,
                (unsigned long long)at, strerror(errno));
        return -1;
    }
    *next = get_uint(b, (unsigned)ptr, c->big_endian);
    if (*next != 0 && (*next > c->size || count_bytes > c->size - *next)) {
        set_err(err, err_size, "%s: page %d: the next-page (IFD) pointer at offset %llu is %llu, past the end of the "
                "file (%llu bytes): the file is truncated or corrupt", path, page, (unsigned long long)at,
                (unsigned long long)*next, size);
        return -1;
    }
    return 0;
}

/* A libtiff warning that means lost or doubtful data, logged while page was read: refused. 0 or -1. */
static int refuse_warning(const tiff_log *log, const char *path, int page, const char *what, char *err,
                          size_t err_size)
{
    if (!log->warnings) return 0;
    set_err(err, err_size, "%s: page %d: %s: libtiff warned \"%s\": lost or doubtful data, refused", path, page, what,
            log->first_warning);
    return -1;
}

int gw_tiff_read_u16(const char *path, int max_pages, gw_tiff_stack *s, char *err, size_t err_size)
{
    if (!s) {
        set_err(err, err_size, "%s: gw_tiff_read_u16: the stack s is NULL", path ? path : "(null)");
        return -1;
    }
    memset(s, 0, sizeof *s);
    if (!path || !*path) {
        set_err(err, err_size, "%s: cannot open: no path", path ? "(empty path)" : "(null)");
        return -1;
    }
    /* Regular files only, opened without blocking (a FIFO or a device fails here at once), and everything
     * after reads this descriptor: the size checked is the size of the file read. */
    struct stat st;
    const int fd = gw_infile_open(path, &st, err, err_size);
    if (fd < 0) return -1;
    tiff_log log = {{0}, 0, {0}, 0};
    char said[420];
    /* "m": read(2), not mmap: a file cut short while it is read gives a read error, not SIGBUS. */
    TIFF *tif = open_logged(path, fd, "rm", &log);
    if (!tif) {
        set_err(err, err_size, "%s: not a readable TIFF file%s", path, libtiff_said(&log, said, sizeof said));
        close(fd); /* libtiff closes the descriptor only when it opened the TIFF */
        return -1;
    }
    uint16_t *data = NULL;
    uint32_t width = 0, height = 0;
    int pages = 0;
    const uint64_t file_size = (uint64_t)st.st_size;
    /* Pass 1: the chain and every page's tags. */
    ifd_chain chain;
    uint64_t ifd = 0, next = 0;
    if (chain_start(&chain, fd, file_size, path, err, err_size)) goto fail;
    ifd = chain.first;
    if (chain_check(&chain, path, 0, ifd, "where the header points", &next, err, err_size)) goto fail;
    for (;;) {
        if (TIFFCurrentDirOffset(tif) != ifd) {
            set_err(err, err_size, "%s: page %d: libtiff read its directory at offset %llu, the chain of directories "
                    "puts it at %llu", path, pages, (unsigned long long)TIFFCurrentDirOffset(tif),
                    (unsigned long long)ifd);
            goto fail;
        }
        uint32_t w, h;
        if (check_page(tif, path, pages, &w, &h, err, err_size)) goto fail;
        if (pages == 0) {
            width = w;
            height = h;
        } else if (w != width || h != height) {
            set_err(err, err_size, "%s: page %d is %ux%u (width x height), page 0 is %ux%u: all pages must have the "
                    "same size", path, pages, w, h, width, height);
            goto fail;
        }
        if (check_page_data(tif, path, pages, w, h, file_size, err, err_size)) goto fail;
        if (refuse_warning(&log, path, pages, "its directory", err, err_size)) goto fail;
        pages++;
        if (max_pages > 0 && pages > max_pages) {
            set_err(err, err_size, "%s: more than %d pages: at most %d Z slices are accepted", path, max_pages,
                    max_pages);
            goto fail;
        }
        if (next == 0) break; /* the last page, by the file's own chain */
        char from[96];
        snprintf(from, sizeof from, "where page %d's next-page pointer points", pages - 1);
        ifd = next;
        if (chain_check(&chain, path, pages, ifd, from, &next, err, err_size)) goto fail;
        if (!TIFFReadDirectory(tif) || log.errors) {
            set_err(err, err_size, "%s: cannot read the directory of page %d at offset %llu%s", path, pages,
                    (unsigned long long)ifd, log.errors || log.warnings ? libtiff_said(&log, said, sizeof said)
                                                                        : " (libtiff found no page there)");
            goto fail;
        }
    }
    if (!TIFFSetDirectory(tif, 0) || log.errors) {
        set_err(err, err_size, "%s: cannot go back to page 0%s", path, libtiff_said(&log, said, sizeof said));
        goto fail;
    }
    if (check_imagej(tif, path, pages, err, err_size)) goto fail;
    const uint64_t plane = (uint64_t)width * height;
    if (plane > SIZE_MAX / 2 / (uint64_t)pages) {
        set_err(err, err_size, "%s: %d pages of %ux%u: too large for this machine", path, pages, width, height);
        goto fail;
    }
    data = malloc((size_t)(plane * (uint64_t)pages * 2));
    if (!data) {
        set_err(err, err_size, "%s: out of memory for %d pages of %ux%u", path, pages, width, height);
        goto fail;
    }
    /* Pass 2: the pixels. */
    for (int p = 0; p < pages; p++) {
        if (p > 0 && (!TIFFReadDirectory(tif) || log.errors)) {
            set_err(err, err_size, "%s: cannot read the directory of page %d%s", path, p,
                    libtiff_said(&log, said, sizeof said));
            goto fail;
        }
        if (read_page(tif, path, p, height, width, data + (size_t)p * plane, &log, err, err_size)) goto fail;
    }
    if (refuse_warning(&log, path, pages - 1, "after the last page", err, err_size)) goto fail;
    close_logged(tif);
    s->pages = pages;
    s->height = height;
    s->width = width;
    s->data = data;
    return 0;
fail:
    close_logged(tif); /* closes fd */
    free(data);
    return -1;
}

void gw_tiff_free(gw_tiff_stack *s)
{
    if (!s) return;
    free(s->data);
    memset(s, 0, sizeof *s);
}

/* ---- writing ---- */

static int write_pages(TIFF *tif, gw_tiff_type type, int pages, uint32_t height, uint32_t width, const void *data)
{
    const size_t item = type == GW_TIFF_U8 ? 1 : type == GW_TIFF_U16 ? 2 : 4;
    const size_t row_bytes = (size_t)width * item;
    uint32_t rows_per_strip = (uint32_t)(65536 / row_bytes);
    if (rows_per_strip < 1) rows_per_strip = 1;
    if (rows_per_strip > height) rows_per_strip = height;
    const uint8_t *src = data;
    for (int p = 0; p < pages; p++) {
        int ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, width) && TIFFSetField(tif, TIFFTAG_IMAGELENGTH, height) &&
                 TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, (uint16_t)(item * 8)) &&
                 TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)1) &&
                 TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT,
                              (uint16_t)(type == GW_TIFF_F32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT)) &&
                 TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, (uint16_t)PHOTOMETRIC_MINISBLACK) &&
                 TIFFSetField(tif, TIFFTAG_PLANARCONFIG, (uint16_t)PLANARCONFIG_CONTIG) &&
                 TIFFSetField(tif, TIFFTAG_COMPRESSION, (uint16_t)COMPRESSION_NONE) &&
                 TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip);
        if (ok && pages > 1)
            ok = TIFFSetField(tif, TIFFTAG_SUBFILETYPE, (uint32_t)FILETYPE_PAGE) &&
                 TIFFSetField(tif, TIFFTAG_PAGENUMBER, (uint16_t)p, (uint16_t)pages);
        if (!ok) return -1;
        for (uint32_t s = 0, y = 0; y < height; s++, y += rows_per_strip) {
            const uint32_t rows = height - y < rows_per_strip ? height - y : rows_per_strip;
            const tmsize_t bytes = (tmsize_t)(rows * row_bytes);
            /* libtiff takes a non-const buffer but does not modify it for uncompressed host-order data */
            if (TIFFWriteEncodedStrip(tif, s, (void *)(uintptr_t)(src + (size_t)y * row_bytes), bytes) != bytes)
                return -1;
        }
        if (!TIFFWriteDirectory(tif)) return -1;
        src += (size_t)height * row_bytes;
    }
    return 0;
}

int gw_tiff_stage(gw_outfile *f, const char *path, gw_tiff_type type, int pages, uint32_t height, uint32_t width,
                  const void *data, char *err, size_t err_size)
{
    const int known_type = type == GW_TIFF_U8 || type == GW_TIFF_U16 || type == GW_TIFF_F32;
    const size_t item = type == GW_TIFF_U8 ? 1 : type == GW_TIFF_U16 ? 2 : 4;
    /* One message per argument, each naming it and its rule. pages*height*width*item can exceed 2^64: no
     * buffer that large exists, so such sizes cannot describe data. */
    const char *bad_arg = !f                              ? "the staged file f is NULL"
                      : !path || !*path                   ? "path is NULL or empty"
                      : !data                             ? "data is NULL"
                      : pages < 1 || pages > 65535        ? "pages is outside 1..65535"
                      : height < 1 || width < 1           ? "height and width must be at least 1"
                      : !known_type                       ? "type is not GW_TIFF_U8, GW_TIFF_U16 or GW_TIFF_F32"
                      : (uint64_t)height * width > SIZE_MAX / item / (unsigned)pages
                          ? "pages*height*width*item overflows size_t: larger than any buffer"
                          : NULL;
    if (f) *f = (gw_outfile)GW_OUTFILE_INIT;
    if (bad_arg) {
        set_err(err, err_size, "%s: gw_tiff_write: bad arguments (%d pages of %ux%u, type %d): %s; nothing written",
                path ? path : "(null)", pages, height, width, (int)type, bad_arg);
        return -1;
    }
    const uint64_t bytes = (uint64_t)pages * height * width * item;
    /* A classic TIFF addresses 4 GiB; leave room for the directories. */
    const char *mode = bytes > 0xF0000000ull ? "w8" : "w";
    if (gw_outfile_open(f, path, err, err_size)) return -1;
    /* libtiff closes the descriptor it is given: give it a duplicate and keep ours for fsync. */
    const int fd = dup(f->fd);
    if (fd < 0) {
        set_err(err, err_size, "%s: dup failed: %s; nothing written", path, strerror(errno));
        gw_outfile_discard(f);
        return -1;
    }
    tiff_log log = {{0}, 0, {0}, 0};
    char said[420];
    TIFF *tif = open_logged(f->tmp, fd, mode, &log);
    if (!tif) {
        close(fd);
        set_err(err, err_size, "%s: cannot start a TIFF file%s; nothing written", path,
                libtiff_said(&log, said, sizeof said));
        gw_outfile_discard(f);
        return -1;
    }
    const int bad = write_pages(tif, type, pages, height, width, data);
    close_logged(tif); /* flushes the last directory; errors land in log */
    if (bad || log.errors) {
        set_err(err, err_size, "%s: write failed%s; nothing written", path, libtiff_said(&log, said, sizeof said));
        gw_outfile_discard(f);
        return -1;
    }
    if (gw_outfile_finish(f, err, err_size)) {
        gw_outfile_discard(f);
        return -1;
    }
    return 0;
}

int gw_tiff_write(const char *path, gw_tiff_type type, int pages, uint32_t height, uint32_t width, const void *data,
                  char *err, size_t err_size)
{
    gw_outfile f;
    if (gw_tiff_stage(&f, path, type, pages, height, width, data, err, err_size)) return -1;
    if (gw_outfile_commit(&f, err, err_size)) {
        gw_outfile_discard(&f);
        return -1;
    }
    return 0;
}
