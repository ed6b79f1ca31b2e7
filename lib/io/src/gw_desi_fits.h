/* SPDX-License-Identifier: MIT
 * Private to gw_desi: the cfitsio plumbing shared by the PSF, image and frame code (gw_desi.h says what the
 * files hold). A file is read whole through gw_infile's descriptor and parsed by cfitsio in memory; a file is
 * written by cfitsio into memory, then staged through gw_outfile.
 */
#ifndef GW_DESI_FITS_H
#define GW_DESI_FITS_H

#include <stddef.h>

#include <fitsio.h>

typedef struct gw_fits_hdu {
    char name[FLEN_VALUE]; /* EXTNAME, "" when none */
    int type;              /* IMAGE_HDU (tile-compressed images too), BINARY_TBL, ASCII_TBL */
} gw_fits_hdu;

typedef struct gw_fits_in {
    fitsfile *f;
    void *buf;     /* the file's bytes (cfitsio reads them in place) */
    size_t size;
    size_t blocks; /* the bytes cfitsio is given: the whole 2880-byte blocks of the file */
    gw_fits_hdu *hdus; /* [nhdu], cfitsio's HDU h is hdus[h - 1] */
    int nhdu;
} gw_fits_in;

/* Opens path (regular files only), checks that it starts like a FITS file and reads every HDU's header
 * once: a header cfitsio cannot parse ("<path>: HDU 2: corrupt tile-compressed image header (cfitsio: ...)"),
 * data that ends past the end of the file ("<path>: HDU 2: truncated: ..."), and any byte after the last
 * HDU ("<path>: 100 bytes after the last HDU ...") are refused, so that the readers meet only whole HDUs.
 * Every GZIP_1 or GZIP_2 tile of a tile-compressed image is inflated once with zlib, and a tile whose stream
 * does not end within it, with all its bytes and the tile's size, is refused ("<path>: HDU 'IMAGE': tile 3:
 * its GZIP data does not end within the tile's 48 bytes (zlib: ...): a damaged tile"): cfitsio would wait
 * for its end for ever. 0, or -1 with err naming path, and nothing left open. */
int gw_fits_open_read(const char *path, gw_fits_in *in, char *err, size_t err_size);
void gw_fits_close_read(gw_fits_in *in);

/* " (cfitsio: <status text>)" for a nonzero status, else ""; clears cfitsio's message stack either way. */
const char *gw_fits_said(int status, char *buf, size_t size);

/* Moves to the one HDU whose EXTNAME is name (case aside, as cfitsio compares) and checks its type
 * (IMAGE_HDU or BINARY_TBL). 0, or -1 with err: "<path>: HDU 'NAME' missing<missing>", "<path>: HDUs 1 and 3
 * are both named 'NAME': expected one", "<path>: HDU 'NAME' (HDU 2) is a binary table: expected an image". */
int gw_fits_move_named(gw_fits_in *in, const char *path, const char *name, int type, const char *missing, char *err,
                       size_t err_size);

/* Reads keyword key of the current HDU as an integer-valued number in [lo, hi]. 0, or -1 with err
 * "<path>: HDU <hdu>: keyword KEY ..." (why, if not NULL, names the limit: " (EX2D_MAX_DEGREE)"). */
int gw_fits_key_int(fitsfile *f, const char *path, const char *hdu, const char *key, long lo, long hi,
                    const char *why, int *out, char *err, size_t err_size);
/* The same for a finite double. */
int gw_fits_key_double(fitsfile *f, const char *path, const char *hdu, const char *key, double *out, char *err,
                       size_t err_size);

/* The first value of v[n] (rows of nx) that is not finite, or with ivar negative: -1 with err
 * "<path>: <what>[row][column] is <v>: expected finite ...". What the writers check, so that every file they
 * write reads back. */
int gw_fits_check_values(const char *path, const char *what, const double *v, size_t n, size_t nx, int ivar,
                         char *err, size_t err_size);

typedef struct gw_fits_out {
    fitsfile *f;
    void *buf;
    size_t size;
} gw_fits_out;

/* Starts an empty file in memory. */
int gw_fits_begin_write(gw_fits_out *out, const char *path, char *err, size_t err_size);
/* Appends an image HDU: bitpix (BYTE_IMG, LONG_IMG, ULONG_IMG, DOUBLE_IMG...), naxes (fastest first), the
 * data as datatype (TDOUBLE, TINT, TUINT...; NULL: zeros), EXTNAME extname (NULL: none). The first HDU of a
 * file is the primary. cfitsio's status accumulates in *status (nothing is done once it is nonzero). */
void gw_fits_put_image(fitsfile *f, const char *extname, int bitpix, int naxis, const LONGLONG *naxes, int datatype,
                       const void *data, int *status);
/* Flushes, closes, and writes the bytes to path through gw_outfile (staged, renamed when complete). Frees
 * everything either way. */
int gw_fits_commit_write(gw_fits_out *out, const char *path, char *err, size_t err_size);
/* Frees everything; no file is written. */
void gw_fits_abort_write(gw_fits_out *out);

#endif /* GW_DESI_FITS_H */
