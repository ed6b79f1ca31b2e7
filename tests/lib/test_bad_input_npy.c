/* SPDX-License-Identifier: MIT
 * Bad-input tables of the .npy reader and writer (lib/io/include/gw_npy.h): NULL and out-of-range arguments, wrong
 * dtypes, absurd header lengths, files that are not regular (a FIFO, /dev/null, a directory: each fails at
 * once, never blocking), files cut short, sizes that overflow, and places the writer cannot write. Each row
 * checks the return, the words of the message (the file or argument and the rule), that the array comes back
 * zeroed, and that no file in the work directory was created or changed. The malformed-header table (syntax,
 * keys, ranks, truncation) and every prefix of whole files are test_gw_npy.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "bad_input_util.h"
#include "gw_npy.h"
#include "gw_test_util.h"

/* A .npy file image: preamble of version major.0 with header_len (as given, even when it lies), the header
 * text, then data_len bytes of data. */
static size_t npy_image(uint8_t *buf, size_t cap, unsigned major, uint32_t header_len, const char *text,
                        size_t data_len)
{
    const size_t pre = major == 1 ? 10 : 12, text_len = strlen(text);
    cr_assert(pre + text_len + data_len <= cap, "npy image too large");
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (uint8_t)major;
    buf[7] = 0;
    for (size_t b = 0; b < pre - 8; b++) buf[8 + b] = (uint8_t)(header_len >> (8 * b));
    memcpy(buf + pre, text, text_len);
    memset(buf + pre + text_len, 0x11, data_len);
    return pre + text_len + data_len;
}

#define HDR(descr, shape) "{'descr': '" descr "', 'fortran_order': False, 'shape': " shape ", }\n"

static int is_zeroed(const gw_npy_array *a)
{
    static const gw_npy_array zero;
    return memcmp(a, &zero, sizeof zero) == 0;
}

/* ---------------------------------------------------------------- gw_npy_read */

enum { R_PATH_NULL = 1, R_ARRAY_NULL = 2, R_DEV_NULL = 4, R_AUTO_LEN = 8, R_FIFO = 16, R_DIR = 32, R_EMPTY_PATH = 64,
       R_CUT = 128 /* the image cut to header_len bytes */, R_FROM_END = 256 /* with R_CUT: less header_len bytes */ };

typedef struct read_case {
    const char *name;
    unsigned mode;
    unsigned major;
    uint32_t header_len; /* with R_AUTO_LEN: the text's length */
    const char *text;
    size_t data_len;
    gw_npy_dtype dtype;
    int min_ndim, max_ndim;
    const char *words; /* "bad.npy" stands for the file's path, "DIR" for the work directory */
} read_case;

static const read_case read_cases[] = {
    {"path NULL", R_PATH_NULL, 1, 0, "", 0, GW_NPY_U2, 3, 4, "gw_npy_read: no path given"},
    {"a NULL", R_ARRAY_NULL | R_AUTO_LEN, 1, 0, HDR("<u2", "(1, 1, 1)"), 2, GW_NPY_U2, 3, 4,
     "bad.npy: gw_npy_read: the array a is NULL"},
    {"dtype 7 (not a gw_npy_dtype)", R_AUTO_LEN, 1, 0, HDR("<u2", "(1, 1, 1)"), 2, (gw_npy_dtype)7, 3, 4,
     "bad.npy: gw_npy_read: dtype 7 is not GW_NPY_ANY, GW_NPY_U1, GW_NPY_U2 or GW_NPY_F4"},
    {"dtype -2", R_AUTO_LEN, 1, 0, HDR("<u2", "(1, 1, 1)"), 2, (gw_npy_dtype)-2, 3, 4, "dtype -2 is not GW_NPY_ANY"},
    {"dtype 3 (write-only float64)", R_AUTO_LEN, 1, 0, HDR("<f8", "(1, 1, 1)"), 8, (gw_npy_dtype)3, 3, 4,
     "bad.npy: gw_npy_read: dtype 3 is not GW_NPY_ANY, GW_NPY_U1, GW_NPY_U2 or GW_NPY_F4"},
    {"min_ndim above max_ndim", R_AUTO_LEN, 1, 0, HDR("<u2", "(1, 1, 1)"), 2, GW_NPY_U2, 4, 3,
     "bad.npy: gw_npy_read: ranks 4..3: need 0 <= min_ndim <= max_ndim <= 8"},
    {"max_ndim 9", R_AUTO_LEN, 1, 0, HDR("<u2", "(1, 1, 1)"), 2, GW_NPY_U2, 3, 9, "ranks 3..9: need 0 <= min_ndim"},
    {"min_ndim -1", R_AUTO_LEN, 1, 0, HDR("<u2", "(1, 1, 1)"), 2, GW_NPY_U2, -1, 4, "ranks -1..4: need 0 <= min_ndim"},
    {"/dev/null (a character device)", R_DEV_NULL, 1, 0, "", 0, GW_NPY_U2, 3, 4,
     "/dev/null: not a regular file (a character device)"},
    {"a FIFO (once blocked for ever in fopen)", R_FIFO, 1, 0, "", 0, GW_NPY_U2, 3, 4,
     "/f.fifo: not a regular file (a FIFO)"},
    {"a directory", R_DIR, 1, 0, "", 0, GW_NPY_U2, 3, 4, "DIR: not a regular file (a directory)"},
    {"path empty", R_EMPTY_PATH, 1, 0, "", 0, GW_NPY_U2, 3, 4, "gw_npy_read: no path given (the path is empty)"},
    {"the first 3 bytes of the magic", R_CUT, 1, 3, "", 0, GW_NPY_U2, 3, 4,
     "bad.npy: truncated: the file ends inside the .npy magic (3 of 6 bytes)"},
    {"a v2.0 preamble cut inside its 4-byte header length", R_CUT, 2, 10, "", 0, GW_NPY_U2, 3, 4,
     "bad.npy: truncated: the file ends inside the .npy preamble (10 of 12 bytes)"},
    {"a whole file but its last data byte", R_CUT | R_FROM_END, 1, 1, "{'descr': '|u1', 'fortran_order': False, "
     "'shape': (6,)}", 6, GW_NPY_ANY, 1, 1, "bad.npy: truncated: the header describes 6 data bytes (shape (6,), "
     "uint8), the file holds 5"},
    {"header length 0", 0, 1, 0, "", 0, GW_NPY_U2, 3, 4, "bad.npy: header: unexpected end of the header, expected '{'"},
    {"v3.0 header length 2^32-1", 0, 3, UINT32_MAX, "{", 0, GW_NPY_U2, 3, 4,
     "bad.npy: header length 4294967295 is absurd (more than 1 MiB): not a real .npy file"},
    {"v2.0 header length 1 MiB + 1", 0, 2, (1u << 20) + 1, "{", 0, GW_NPY_U2, 3, 4,
     "header length 1048577 is absurd (more than 1 MiB)"},
    {"float32 '<f4' where uint16 is wanted", R_AUTO_LEN, 1, 0, HDR("<f4", "(1, 1, 1)"), 4, GW_NPY_U2, 3, 4,
     "bad.npy: dtype '<f4' (float32): expected '<u2' (uint16)"},
    {"uint16 where float32 is wanted", R_AUTO_LEN, 1, 0, HDR("<u2", "(1, 1, 1)"), 2, GW_NPY_F4, 3, 4,
     "bad.npy: dtype '<u2' (uint16): expected '<f4' (float32)"},
    {"int32 with any dtype accepted", R_AUTO_LEN, 1, 0, HDR("<i4", "(1, 1, 1)"), 4, GW_NPY_ANY, 3, 4,
     "bad.npy: dtype '<i4' (int32): expected '|u1' (uint8), '<u2' (uint16) or '<f4' (float32)"},
    {"bool with any dtype accepted", R_AUTO_LEN, 1, 0, HDR("|b1", "(1, 1, 1)"), 1, GW_NPY_ANY, 3, 4,
     "dtype '|b1' (bool): expected"},
    {"descr of 40 characters", R_AUTO_LEN, 1, 0, HDR("<u2xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "(1, 1, 1)"), 2,
     GW_NPY_U2, 3, 4, "bad.npy: header: the descr string is too long (40 characters)"},
    {"a boolean in the shape", R_AUTO_LEN, 1, 0, HDR("<u2", "(True, 1, 1)"), 2, GW_NPY_U2, 3, 4,
     "bad.npy: header: expected an integer in the shape"},
    {"uint8 shape product overflows (2^62 x 4)", R_AUTO_LEN, 1, 0, HDR("|u1", "(4611686018427387904, 4, 1)"), 0,
     GW_NPY_U1, 3, 4, "bad.npy: shape (4611686018427387904, 4, 1): the size overflows"},
    {"float32 shape product overflows (2^61 x 1 x 1)", R_AUTO_LEN, 1, 0, HDR("<f4", "(2305843009213693952, 1, 1)"), 0,
     GW_NPY_F4, 3, 4, "the size overflows|times 4 bytes (float32)"},
};

/* The timeout turns a reader that blocks (the old one, on the FIFO row) into a failure. */
Test(gw_npy_read, rejects_with_the_file_and_the_rule_and_changes_no_file, .timeout = 240)
{
    char *dir = bi_make_dir("bad_input_npy_read");
    char path[512], fifo[512];
    snprintf(path, sizeof path, "%s/bad.npy", dir);
    snprintf(fifo, sizeof fifo, "%s/f.fifo", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    static uint8_t image[4096];
    for (size_t i = 0; i < sizeof read_cases / sizeof read_cases[0]; i++) {
        const read_case *c = &read_cases[i];
        if (c->mode & R_CUT) { /* the preamble with the text's length, the text and its data, cut */
            const size_t n = npy_image(image, sizeof image, c->major, (uint32_t)strlen(c->text), c->text, c->data_len);
            cr_assert(c->header_len < n, "row \"%s\": the cut is not inside the file", c->name);
            bi_write_file(path, image, c->mode & R_FROM_END ? n - c->header_len : c->header_len);
        } else {
            const uint32_t len = c->mode & R_AUTO_LEN ? (uint32_t)strlen(c->text) : c->header_len;
            bi_write_file(path, image, npy_image(image, sizeof image, c->major, len, c->text, c->data_len));
        }
        const char *p = c->mode & R_PATH_NULL  ? NULL
                        : c->mode & R_DEV_NULL ? "/dev/null"
                        : c->mode & R_FIFO     ? fifo
                        : c->mode & R_DIR      ? dir
                        : c->mode & R_EMPTY_PATH ? ""
                                                 : path;
        bi_dir snap;
        bi_dir_take(&snap, dir);
        gw_npy_array a;
        memset(&a, 0xA5, sizeof a);
        char err[1024] = "";
        const int rc = gw_npy_read(p, c->dtype, c->min_ndim, c->max_ndim, "[Z][Y][X]",
                                   c->mode & R_ARRAY_NULL ? NULL : &a, err, sizeof err);
        cr_expect_eq(rc, -1, "row \"%s\" was accepted", c->name);
        if (rc == 0) gw_npy_free(&a);
        if (!(c->mode & R_ARRAY_NULL)) cr_expect(is_zeroed(&a), "row \"%s\": the array is not zeroed", c->name);
        char words[600];
        snprintf(words, sizeof words, "%s", c->words);
        if (!strncmp(c->words, "bad.npy", 7)) snprintf(words, sizeof words, "%s%s", path, c->words + 7);
        if (!strncmp(c->words, "DIR", 3)) snprintf(words, sizeof words, "%s%s", dir, c->words + 3);
        bi_expect_words(c->name, err, words);
        cr_log_info("%s: %s", c->name, err);
        /* without room for a message: the same verdict, nothing written */
        char tiny[4] = "ZZZ";
        cr_expect_eq(gw_npy_read(p, c->dtype, c->min_ndim, c->max_ndim, NULL, c->mode & R_ARRAY_NULL ? NULL : &a,
                                 tiny, 1), -1, "row \"%s\", err_size 1", c->name);
        cr_expect(tiny[0] == '\0' && !memcmp(tiny + 1, "ZZ", 3), "row \"%s\": err_size 1 overrun", c->name);
        cr_expect_eq(gw_npy_read(p, c->dtype, c->min_ndim, c->max_ndim, NULL, c->mode & R_ARRAY_NULL ? NULL : &a,
                                 NULL, 0), -1, "row \"%s\", err NULL", c->name);
        bi_dir_expect_unchanged(&snap, dir, c->name);
    }
    cr_log_info("gw_npy_read: %zu bad inputs rejected", sizeof read_cases / sizeof read_cases[0]);
    gw_remove_dir(dir);
    free(dir);
}

/* ---------------------------------------------------------------- gw_npy_write and gw_npy_stage */

enum { W_TARGET, W_PATH_NULL, W_PATH_EMPTY, W_MISSING_DIR, W_IS_DIR, W_SHAPE_NULL, W_DATA_NULL };

typedef struct write_case {
    const char *name;
    int mode;
    gw_npy_dtype dtype;
    int ndim;
    int64_t shape[3];
    const char *words;
} write_case;

static const write_case write_cases[] = {
    {"path NULL", W_PATH_NULL, GW_NPY_U2, 2, {2, 3}, "(null): gw_npy_write: bad arguments|path is NULL or empty"},
    {"path empty", W_PATH_EMPTY, GW_NPY_U2, 2, {2, 3}, "gw_npy_write: bad arguments|path is NULL or empty"},
    {"dtype GW_NPY_ANY", W_TARGET, GW_NPY_ANY, 2, {2, 3},
     "out.npy: gw_npy_write: bad arguments (dtype -1, ndim 2): dtype is not GW_NPY_U1, GW_NPY_U2, GW_NPY_F4"},
    {"dtype 9", W_TARGET, (gw_npy_dtype)9, 2, {2, 3}, "(dtype 9, ndim 2): dtype is not GW_NPY_U1"},
    {"ndim 0", W_TARGET, GW_NPY_U2, 0, {2, 3}, "(dtype 1, ndim 0): ndim is outside 1..GW_NPY_MAX_NDIM (8)"},
    {"ndim 9", W_TARGET, GW_NPY_U2, 9, {2, 3}, "ndim 9): ndim is outside 1..GW_NPY_MAX_NDIM (8)"},
    {"ndim -1", W_TARGET, GW_NPY_U2, -1, {2, 3}, "ndim -1): ndim is outside 1..GW_NPY_MAX_NDIM"},
    {"shape NULL", W_SHAPE_NULL, GW_NPY_U2, 2, {2, 3}, "out.npy: gw_npy_write: bad arguments|shape is NULL"},
    {"data NULL", W_DATA_NULL, GW_NPY_U2, 2, {2, 3}, "out.npy: gw_npy_write: bad arguments|data is NULL"},
    {"a dimension of 0", W_TARGET, GW_NPY_U2, 2, {2, 0}, "out.npy: gw_npy_write: dimension 1 is 0 (must be at least 1"},
    {"a negative dimension", W_TARGET, GW_NPY_U2, 3, {1, -5, 2}, "dimension 1 is -5 (must be at least 1"},
    {"shape product overflows (2^40 x 2^40)", W_TARGET, GW_NPY_U1, 2, {(int64_t)1 << 40, (int64_t)1 << 40},
     "dimension 1 is 1099511627776|the size must fit in memory"},
    {"directory missing", W_MISSING_DIR, GW_NPY_U2, 2, {2, 3},
     "no/such/dir/out.npy: cannot create a temporary file beside it"},
    {"path is a directory", W_IS_DIR, GW_NPY_U2, 2, {2, 3}, "/sub: cannot replace the file: Is a directory"},
};

Test(gw_npy_write, refuses_bad_arguments_and_places_and_keeps_the_existing_file)
{
    char *dir = bi_make_dir("bad_input_npy_write");
    char target[256], sub[256], keep[300], missing[300];
    snprintf(target, sizeof target, "%s/out.npy", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(keep, sizeof keep, "%s/keep", sub);
    snprintf(missing, sizeof missing, "%s/no/such/dir/out.npy", dir);
    bi_write_file(target, "old", 3);
    cr_assert_eq(mkdir(sub, 0777), 0);
    bi_write_file(keep, "x", 1); /* rename() cannot replace a non-empty directory */
    const uint16_t data[6] = {1, 2, 3, 4, 5, 6};
    for (size_t i = 0; i < sizeof write_cases / sizeof write_cases[0]; i++) {
        const write_case *c = &write_cases[i];
        const char *p = c->mode == W_PATH_NULL      ? NULL
                        : c->mode == W_PATH_EMPTY   ? ""
                        : c->mode == W_MISSING_DIR  ? missing
                        : c->mode == W_IS_DIR       ? sub
                                                    : target;
        bi_dir snap, sub_snap;
        bi_dir_take(&snap, dir);
        bi_dir_take(&sub_snap, sub);
        char err[1024] = "";
        const int rc = gw_npy_write(p, c->dtype, c->ndim, c->mode == W_SHAPE_NULL ? NULL : c->shape,
                                    c->mode == W_DATA_NULL ? NULL : data, err, sizeof err);
        cr_expect_eq(rc, -1, "row \"%s\" was written", c->name);
        bi_expect_words(c->name, err, c->words);
        cr_log_info("%s: %s", c->name, err);
        bi_expect_words(c->name, err, "nothing written");
        /* the staged form refuses the same (a directory as the target fails only at the rename) and leaves
         * f safe to discard */
        if (c->mode != W_IS_DIR) {
            gw_outfile f = {(char *)"stale", (char *)"stale", 99};
            cr_expect_eq(gw_npy_stage(&f, p, c->dtype, c->ndim, c->mode == W_SHAPE_NULL ? NULL : c->shape,
                                      c->mode == W_DATA_NULL ? NULL : data, err, sizeof err), -1,
                         "row \"%s\": gw_npy_stage staged it", c->name);
            cr_expect(f.path == NULL && f.tmp == NULL && f.fd == -1, "row \"%s\": f not reset by a refused stage",
                      c->name);
            gw_outfile_discard(&f);
        }
        bi_dir_expect_unchanged(&snap, dir, c->name);
        bi_dir_expect_unchanged(&sub_snap, sub, c->name);
    }
    /* gw_npy_stage without a place for the staged file */
    char err[512] = "";
    const int64_t shape[2] = {2, 3};
    cr_expect_eq(gw_npy_stage(NULL, target, GW_NPY_U2, 2, shape, data, err, sizeof err), -1);
    bi_expect_words("gw_npy_stage f NULL", err, "out.npy: gw_npy_write: bad arguments|the staged file f is NULL");
    cr_log_info("gw_npy_write and gw_npy_stage: %zu bad inputs refused, gw_npy_stage: 1 more (f NULL)",
                sizeof write_cases / sizeof write_cases[0]);
    gw_remove_dir(sub);
    gw_remove_dir(dir);
    free(dir);
}

/* ---------------------------------------------------------------- names and shapes */

Test(gw_npy_names, out_of_range_dtypes_get_a_fixed_word)
{
    static const int dtypes[] = {GW_NPY_ANY, 99, -7, 1000};
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        cr_expect_str_eq(gw_npy_dtype_descr((gw_npy_dtype)dtypes[i]), "?", "gw_npy_dtype_descr(%d)", dtypes[i]);
        cr_expect_str_eq(gw_npy_dtype_name((gw_npy_dtype)dtypes[i]), "?", "gw_npy_dtype_name(%d)", dtypes[i]);
        cr_expect_eq(gw_npy_dtype_size((gw_npy_dtype)dtypes[i]), 0u, "gw_npy_dtype_size(%d)", dtypes[i]);
    }
}

typedef struct shape_case {
    const char *name;
    int ndim;
    int shape_null;
    int buf_null;
    size_t size;
    const char *want; /* NULL: only "terminated within size, nothing past it" */
} shape_case;

static const shape_case shape_cases[] = {
    {"ndim 9 (past the shape array)", 9, 0, 0, 64, "(invalid shape: ndim 9)"},
    {"ndim -1", -1, 0, 0, 64, "(invalid shape: ndim -1)"},
    {"shape NULL with ndim 2", 2, 1, 0, 64, "(invalid shape: ndim 2)"},
    {"buf NULL with buf_size 64", 2, 0, 1, 64, NULL},
    {"buf_size 0", 2, 0, 0, 0, NULL},
    {"buf_size 1", 2, 0, 0, 1, ""},
    {"buf_size 5 (truncated)", 2, 0, 0, 5, "(17,"},
};

Test(gw_npy_format_shape, refuses_impossible_shapes_and_never_overruns_the_buffer)
{
    static const int64_t shape[GW_NPY_MAX_NDIM] = {17, 512, 512, 1, 1, 1, 1, 1};
    for (size_t i = 0; i < sizeof shape_cases / sizeof shape_cases[0]; i++) {
        const shape_case *c = &shape_cases[i];
        char buf[128];
        memset(buf, 'Z', sizeof buf);
        gw_npy_format_shape(c->ndim, c->shape_null ? NULL : shape, c->buf_null ? NULL : buf, c->size);
        const size_t used = c->buf_null ? 0 : c->size;
        for (size_t k = used; k < sizeof buf; k++)
            cr_assert(buf[k] == 'Z', "row \"%s\": byte %zu written past buf_size %zu", c->name, k, used);
        if (used) cr_expect(memchr(buf, '\0', used) != NULL, "row \"%s\": not terminated", c->name);
        if (c->want) cr_expect_str_eq(buf, c->want, "row \"%s\"", c->name);
    }
}
