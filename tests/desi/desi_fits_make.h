/* SPDX-License-Identifier: MIT
 * Test-time FITS files for gw_desi's tests, written with cfitsio directly (never with gw_desi itself, so a
 * reader bug cannot hide behind a matching writer bug): a small synthetic GAUSS-HERMITE PSF (PSFVER 2 or 3)
 * with one thing broken on request, a PSFVER 2 -> 3 converter for the real DESI PSF (third-party data is
 * never committed: its v3 form is made in the test's directory), and preprocessed images, small or CCD-sized,
 * plain or tile-compressed, with one thing broken on request; a few break a finished file in its bytes.
 */
#ifndef DESI_FITS_MAKE_H
#define DESI_FITS_MAKE_H

#include <stddef.h>

/* The synthetic PSF: fibres 10..11 (2), ncoef 2, GHDEGX = GHDEGY = 1, HSIZEX 3, HSIZEY 4, NPIX 100 x 200,
 * domain (5000, 6000), the XTRACE/YTRACE (v3) domain (4000, 7000) unless trace_wmin/max say otherwise.
 * Coefficient k of fibre f in table row r (0-based, rows in desi_psf_rows order): 100 r + 10 f + k + 0.5. */
#define DESI_SYN_NFIBRE 2
#define DESI_SYN_NCOEF 2
extern const char *const desi_psf_rows[]; /* X, Y, GHSIGX, ..., CONT; NULL-terminated */
double desi_syn_coef(int row, int f, int k);

typedef struct desi_psf_opts {
    int ver;                    /* 2 or 3 */
    const char *drop_key;       /* keyword left out (primary PSFTYPE/PSFVER, or the table's) */
    const char *bad_key;        /* keyword written with bad_value (a raw FITS value: "16", "'abc'", "2.5") */
    const char *bad_value;
    const char *drop_param;     /* table row left out */
    const char *dup_param;      /* table row written twice */
    const char *nan_param;      /* its coefficient (fibre 1, k 1) is NaN (v3: "X" puts it in XTRACE) */
    const char *swap_param;     /* v2: its row's WAVEMIN/WAVEMAX swapped */
    int short_coeff;            /* COEFF of nfibre*ncoef - 1 values, no TDIM */
    int drop_coeff_col;         /* no COEFF column */
    int no_table;               /* primary only */
    const char *table_extname;  /* v3: the table's EXTNAME (default PSF) */
    int trace_rows;             /* v3: XTRACE rows (0: nfibre) */
    const char *drop_trace;     /* v3: "XTRACE" or "YTRACE" left out */
    const char *trace_drop_key; /* v3: keyword left out of XTRACE */
    double trace_wmin, trace_wmax; /* v3: XTRACE's domain (both 0: 4000, 7000) */
    const char *extra_hdu;      /* a 2 x 2 image HDU of this EXTNAME appended ("XTRACE": two of that name) */
    size_t append;              /* bytes of append_byte appended to the finished file */
    char append_byte;
} desi_psf_opts;

/* Writes the PSF to path (overwritten); the test fails if cfitsio does. */
void desi_write_psf(const char *path, const desi_psf_opts *o);

/* Rewrites the PSFVER 2 PSF at v2 as PSFVER 3 at v3: the table HDU 'PSF' without X and Y (domain from row 1
 * into WAVEMIN/WAVEMAX keywords), XTRACE and YTRACE images with the X and Y rows and their domains. */
void desi_convert_v2_to_v3(const char *v2, const char *v3);

/* A preprocessed image, 6 columns x 4 rows unless nx, ny say otherwise, uncompressed unless asked, with one
 * thing broken on request. */
typedef struct desi_img_opts {
    int nx, ny;             /* columns, rows (0: 6, 4); the pixel rows below assume the default */
    const char *drop_hdu;   /* "IMAGE", "IVAR" or "MASK" left out */
    int ivar_rows;          /* IVAR rows (0: ny) */
    int image_1d;           /* IMAGE is 1-D (nx * ny pixels) */
    int nan_image;          /* IMAGE pixel (row 2, column 3) is NaN */
    int negative_ivar;      /* IVAR pixel (row 1, column 5) is -1 */
    int float_mask;         /* MASK is float32 */
    int image_primary;      /* IMAGE is the primary HDU */
    int mask_pixel;         /* MASK pixel (row 3, column 0) is 4 (else 0 everywhere) */
    int nan_under_mask;     /* IMAGE and IVAR pixel (row 3, column 0) are NaN (with mask_pixel: masked) */
    const char *blank_hdu;  /* "IMAGE", "IVAR" or "MASK" is int32 with BLANK = -999, pixel (row 1, column 2) BLANK */
    int compress;           /* every HDU tile-compressed, a row per tile: GZIP_2 lossless floats, RICE_1 int32 */
    int zblank;             /* with compress and blank_hdu: the undefined value in keyword ZBLANK, not BLANK */
    int mask_column_tiles;  /* MASK tile-compressed (RICE_1) in one-column tiles, ZTILE = (1, ny) */
    int gzip_1;             /* with compress: every HDU GZIP_1 (MASK's int32 too), not GZIP_2 and RICE_1 */
    int tile_x, tile_y;     /* with compress: tiles of tile_x x tile_y pixels, the last ones cut by the edges
                               (0: a row per tile) */
    int quantize;           /* with compress: IMAGE and IVAR quantized to int32 in steps of 0.01 (as astropy
                               writes floats), not lossless */
    const char *cut_hdu;    /* with compress: in this HDU, tile cut_tile (its table row, 1-based) counts cut_bytes */
    int cut_tile;           /* fewer in COMPRESSED_DATA's descriptor (0: 8, gzip's trailer: the stream never ends; */
    int cut_bytes;          /* negative: more, the next tile's bytes or past the heap) */
    const char *extra_hdu;  /* a 2 x 2 image HDU of this EXTNAME appended after MASK */
    const char *table_hdu;  /* "IMAGE", "IVAR" or "MASK" written as a binary table instead */
    const char *damage_key; /* the first card of this keyword in HDU damage_hdu (0 = primary) of the finished */
    const char *damage_card; /* file becomes damage_card */
    int damage_hdu;
} desi_img_opts;

void desi_write_image(const char *path, const desi_img_opts *o);
/* desi_write_image's pixel values: IMAGE 10 r + c + 0.25, IVAR r + c + 1. */
double desi_img_value(int r, int c);
double desi_img_ivar(int r, int c);

#endif /* DESI_FITS_MAKE_H */
