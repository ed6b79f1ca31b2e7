/* SPDX-License-Identifier: MIT
 * NumPy .npy files (format versions 1.0, 2.0 and 3.0), read and written in plain C, no CUDA.
 *
 * Read: the header is parsed strictly (numpy.lib.format): magic "\x93NUMPY", a supported version, a header
 * length inside the file and at most 1 MiB, a Python dict literal with exactly the keys 'descr',
 * 'fortran_order' and 'shape', then padding (spaces, newline). Only C-order arrays of the first three dtypes below
 * are accepted ('<' or '>' byte order; '>' is swapped to the host's order); every dimension must be at least
 * 1, the element count must fit in memory, and the file must hold exactly the data the header describes
 * (shorter: truncated; longer: trailing bytes). Errors name the file and the rule, e.g.
 *   "x.npy: dtype '<f8' (float64): expected '<u2' (uint16)"
 *   "x.npy: truncated: the header describes 1048576 data bytes (shape (4, 512, 256), uint16), the file holds 1000"
 * and leave the array zeroed. The path is opened with gw_infile_open (gw_infile.h) and read through that one
 * descriptor: a FIFO, a device or a directory fails at once ("x.npy: not a regular file (a FIFO)") instead
 * of blocking, and the sizes checked are those of the file read; a file cut anywhere (every prefix of a
 * valid file) is refused, and so is one that grows while it is read.
 *
 * Write: version 1.0 (2.0 when the header needs more than 65535 bytes), C order, little-endian, the header
 * padded to a multiple of 64 bytes as numpy does, through a temporary file renamed over the target
 * (gw_outfile.h), so a failed write leaves no partial file. np.load reads the result.
 */
#ifndef GW_NPY_H
#define GW_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "gw_outfile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gw_npy_dtype {
    GW_NPY_ANY = -1, /* read: accept any of the dtypes below */
    GW_NPY_U1 = 0,   /* '|u1' uint8   */
    GW_NPY_U2 = 1,   /* '<u2' uint16  */
    GW_NPY_F4 = 2,   /* '<f4' float32 */
    GW_NPY_F8 = 3,   /* '<f8' float64, write only (ex2d_patch's frame outputs) */
    GW_NPY_I4 = 4    /* '<i4' int32, write only (ex2d_patch's per-patch info) */
} gw_npy_dtype;

#define GW_NPY_MAX_NDIM 8                 /* ranks above this are refused as a wrong rank */
#define GW_NPY_MAX_HEADER_BYTES (1u << 20) /* a longer header is not a real .npy file */

typedef struct gw_npy_array {
    gw_npy_dtype dtype;
    int ndim;
    int64_t shape[GW_NPY_MAX_NDIM];
    size_t count; /* product of the shape */
    void *data;   /* count elements in the host's byte order, C order */
} gw_npy_array;

/* "|u1", "<u2", "<f4", "<f8", "<i4"; "uint8", "uint16", "float32", "float64", "int32"; 1, 2, 4, 8, 4. */
const char *gw_npy_dtype_descr(gw_npy_dtype dtype);
const char *gw_npy_dtype_name(gw_npy_dtype dtype);
size_t gw_npy_dtype_size(gw_npy_dtype dtype);

/* Reads path, requiring dtype (or GW_NPY_ANY) and a rank in [min_ndim, max_ndim]; layout describes the
 * accepted shapes in the rank error (e.g. "[Z][Y][X] or [N][Z][Y][X]"; may be NULL). 0, or -1 with err
 * filled and *a zeroed. */
int gw_npy_read(const char *path, gw_npy_dtype dtype, int min_ndim, int max_ndim, const char *layout, gw_npy_array *a,
                char *err, size_t err_size);
void gw_npy_free(gw_npy_array *a);

/* Writes data (count = product of shape, host byte order) as a .npy file; 0, or -1 with err and no file
 * left behind (an existing file at path is kept). */
int gw_npy_write(const char *path, gw_npy_dtype dtype, int ndim, const int64_t *shape, const void *data, char *err,
                 size_t err_size);
/* The same, but stops before the rename: on 0 the caller owns the staged file f and must
 * gw_outfile_commit or gw_outfile_discard it; on -1 nothing is left. */
int gw_npy_stage(gw_outfile *f, const char *path, gw_npy_dtype dtype, int ndim, const int64_t *shape,
                 const void *data, char *err, size_t err_size);

/* "(17, 512, 512)" / "(5,)" into buf, as numpy writes shapes. */
void gw_npy_format_shape(int ndim, const int64_t *shape, char *buf, size_t buf_size);

#ifdef __cplusplus
}
#endif

#endif /* GW_NPY_H */
