/* SPDX-License-Identifier: MIT
 * TIFF stacks through libtiff (pkg-config libtiff-4), plain C, no CUDA.
 *
 * Read: a multi-page 16-bit grayscale TIFF (classic or BigTIFF), each page one Z slice. Every page must have
 * 1 sample per pixel, 16 bits per sample, unsigned integer samples, min-is-black photometric (or none), the
 * size of page 0, and a compression this libtiff can decode (none, LZW, Deflate, PackBits, ... as built);
 * strips and tiles both work, big- and little-endian files both give host-order values. An ImageJ file whose
 * description announces more images than it has pages (ImageJ's contiguous layout over 4 GB) or several
 * channels or frames is refused rather than read as a wrong Z stack. Errors name the file, the page and the
 * rule, e.g. "s.tif: page 0: 8 bits per sample: expected 16 (uint16 grayscale)", and leave the stack zeroed.
 * libtiff's own messages are captured into the error (never printed).
 *
 * Hostile or damaged files. The path is opened with gw_infile_open (gw_infile.h): a FIFO, a device or a
 * directory fails at once with "not a regular file (a FIFO)" instead of blocking, and libtiff reads that one
 * descriptor (TIFFFdOpen, without mmap), so the size every check uses is the size of the file being read.
 * A stack must never come back shorter than the file says, so:
 *  - The chain of directories (IFDs) is walked from the bytes as well: every directory, its entries and its
 *    next-page pointer must lie inside the file, every next-page pointer must be 0 or point into the file,
 *    and libtiff must read every page the chain holds, where the chain puts it. (libtiff reads a next-page
 *    pointer cut by the end of the file as 0, "last page", without a word: a 3-page stack cut there read as
 *    2 pages.) "s.tif: page 1: the next-page (IFD) pointer at offset 1608 is 2252, past the end of the file
 *    (1612 bytes): the file is truncated or corrupt".
 *  - Every libtiff warning is an error ("page P: ...: libtiff warned "...": lost or doubtful data, refused"),
 *    except those that only say libtiff skipped something this reader never uses: an unknown (private)
 *    tag, tags out of order, a text tag without its NUL or padded with NULs, pre-1995 LZW codes, tiles not a
 *    multiple of 16. The others mean lost or guessed data, for example: "Bogus StripByteCounts" or
 *    "missing required StripByteCounts" (libtiff guesses the strip size and can read the bytes after the
 *    strip as pixels), "Discarding N bytes to avoid buffer overrun" and "Terminating PackBitsDecode due to
 *    lack of data" (a page decoded short or cut), "IFD looping" (the chain ends early where it loops),
 *    "Incorrect count / Incompatible type / IO error during reading of TAG; tag ignored" (a tag lost, its
 *    default used instead), "Photometric/Planarconfig tag value assumed incorrect" and "SamplesPerPixel tag
 *    is missing" (libtiff reinterprets the page). A warning text that libtiff rewords is refused, never
 *    silently accepted.
 *
 * Write: uncompressed, min-is-black, strips of about 64 KiB, one page per image (SUBFILETYPE page and
 * PAGENUMBER when there are several), BigTIFF only when the data would not fit a classic TIFF, through a
 * temporary file renamed over the target (gw_outfile.h), so a failed write leaves no partial file.
 */
#ifndef GW_TIFF_H
#define GW_TIFF_H

#include <stddef.h>
#include <stdint.h>

#include "gw_outfile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gw_tiff_type {
    GW_TIFF_U8 = 0,  /* 8-bit unsigned grayscale (focus_stack idx) */
    GW_TIFF_U16 = 1, /* 16-bit unsigned grayscale (input stacks, ff) */
    GW_TIFF_F32 = 2  /* 32-bit IEEE float grayscale (best) */
} gw_tiff_type;

typedef struct gw_tiff_stack {
    int pages;              /* Z */
    uint32_t height, width; /* Y, X */
    uint16_t *data;         /* [pages][height][width], host byte order */
} gw_tiff_stack;

/* Reads every page of path (a regular file: gw_infile_open); max_pages > 0 refuses files with more pages
 * before reading their data. 0, or -1 with err filled ("<path>: ...") and *s zeroed; a truncated file, an
 * IFD pointer past the end and a libtiff warning of lost or doubtful data are all -1, never a shorter stack. */
int gw_tiff_read_u16(const char *path, int max_pages, gw_tiff_stack *s, char *err, size_t err_size);
void gw_tiff_free(gw_tiff_stack *s);

/* Writes pages images of height x width from data ([pages][height][width], host order). 0, or -1 with err
 * and no file left behind (an existing file at path is kept). */
int gw_tiff_write(const char *path, gw_tiff_type type, int pages, uint32_t height, uint32_t width, const void *data,
                  char *err, size_t err_size);
/* The same, but stops before the rename: on 0 the caller must gw_outfile_commit or gw_outfile_discard f;
 * on -1 nothing is left. */
int gw_tiff_stage(gw_outfile *f, const char *path, gw_tiff_type type, int pages, uint32_t height, uint32_t width,
                  const void *data, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* GW_TIFF_H */
