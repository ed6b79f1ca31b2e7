/* SPDX-License-Identifier: MIT
 * Bad-input tables of the TIFF stack reader and writer (lib/io/include/gw_tiff.h): NULL arguments, files that are
 * not TIFFs or are cut short, pages with no size or a declared size far beyond their data (which must fail
 * before the pixels are allocated), sizes whose product overflows, and places the writer cannot write.
 * Hostile inputs: a FIFO, a device and a directory (at once, never blocking); stacks cut inside or after a
 * next-page pointer, a pointer past the end, a chain that loops (never a shorter stack); strips whose size
 * libtiff would guess or cut with only a warning (refused as lost or doubtful data).
 * Each row checks the return, the words of the message (the file, the page and the rule), that the stack
 * comes back zeroed, and that no file in the work directory was created or changed. The table of unsuitable
 * pages (8-bit, RGB, float, signed, min-is-white, mismatched sizes, ImageJ layouts) is test_gw_tiff.c's.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "bad_input_util.h"
#include "gw_test_util.h"
#include "gw_tiff.h"

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int b = 0; b < 4; b++) p[b] = (uint8_t)(v >> (8 * b));
}

/* A one-page little-endian classic TIFF, written by hand so that its tags can lie: width x height of
 * `bits` grayscale in one strip holding data_len bytes. */
static size_t tiff_image(uint8_t *buf, size_t cap, uint32_t width, uint32_t height, uint16_t bits, uint32_t data_len)
{
    enum { N_TAGS = 9 };
    const uint32_t ifd = 8, data_at = ifd + 2 + 12 * N_TAGS + 4;
    cr_assert(data_at + data_len <= cap, "tiff image too large");
    memset(buf, 0, data_at + data_len);
    memcpy(buf, "II*\0", 4);
    put32(buf + 4, ifd);
    put16(buf + ifd, N_TAGS);
    const struct {
        uint16_t tag, type;
        uint32_t value;
    } tags[N_TAGS] = {
        {256, 4, width}, {257, 4, height}, {258, 3, bits}, {259, 3, 1}, {262, 3, 1},
        {273, 4, data_at}, {277, 3, 1}, {278, 4, height}, {279, 4, data_len},
    };
    for (int t = 0; t < N_TAGS; t++) {
        uint8_t *e = buf + ifd + 2 + 12 * t;
        put16(e, tags[t].tag);
        put16(e + 2, tags[t].type);
        put32(e + 4, 1);
        if (tags[t].type == 3) put16(e + 8, (uint16_t)tags[t].value);
        else put32(e + 8, tags[t].value);
    }
    for (uint32_t k = 0; k < data_len; k++) buf[data_at + k] = (uint8_t)k;
    return data_at + data_len;
}

/* A one-page 2x2 uint16 file laid out as libtiff writes one: the strip first, its directory after it, so
 * that bytes follow the strip. The strip is strip_len bytes of `strip`; StripByteCounts says byte_count
 * (no_count: the tag is left out); compression as given. */
static size_t strip_first_image(uint8_t *buf, size_t cap, const uint8_t *strip, uint32_t strip_len, uint32_t byte_count,
                                int no_count, uint16_t compression)
{
    const uint32_t data_at = 8, ifd = data_at + strip_len + (strip_len & 1u);
    const int n_tags = no_count ? 8 : 9;
    cr_assert(ifd + 2 + 12u * (unsigned)n_tags + 4 <= cap, "tiff image too large");
    memset(buf, 0, ifd);
    memcpy(buf, "II*\0", 4);
    put32(buf + 4, ifd);
    memcpy(buf + data_at, strip, strip_len);
    put16(buf + ifd, (uint16_t)n_tags);
    const struct {
        uint16_t tag, type;
        uint32_t value;
    } tags[9] = {
        {256, 4, 2}, {257, 4, 2}, {258, 3, 16}, {259, 3, compression}, {262, 3, 1},
        {273, 4, data_at}, {277, 3, 1}, {278, 4, 2}, {279, 4, byte_count},
    };
    for (int t = 0; t < n_tags; t++) {
        uint8_t *e = buf + ifd + 2 + 12 * t;
        put16(e, tags[t].tag);
        put16(e + 2, tags[t].type);
        put32(e + 4, 1);
        put32(e + 8, 0);
        if (tags[t].type == 3) put16(e + 8, (uint16_t)tags[t].value);
        else put32(e + 8, tags[t].value);
    }
    put32(buf + ifd + 2 + 12 * n_tags, 0);
    return ifd + 2 + 12u * (unsigned)n_tags + 4;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The offset of page's next-page pointer in a classic little-endian file (page < 0: the header's). */
static uint32_t next_pointer_at(const uint8_t *b, int page)
{
    uint32_t at = 4;
    for (int p = 0; p <= page; p++) {
        const uint32_t ifd = get32(b + at);
        at = ifd + 2 + 12u * ((unsigned)b[ifd] | (unsigned)b[ifd + 1] << 8);
    }
    return at;
}

/* ---------------------------------------------------------------- gw_tiff_read_u16 */

typedef enum file_kind {
    F_NONE,         /* path NULL */
    F_DEV_NULL,     /* /dev/null */
    F_BYTES,        /* bytes below */
    F_HAND,         /* tiff_image(width, height, bits, data_len) */
    F_CUT_WRITTEN,  /* a 3-page 16x16 file from gw_tiff_write, cut to `cut` bytes (-k: 1/k of its size) */
    F_CUT_NEXT,     /* the same file cut `cut` bytes after the start of page `page`'s next-page pointer */
    F_PATCH_NEXT,   /* the same file, page `page`'s next-page pointer set to `value` (0: page 0's directory) */
    F_STRIP_FIRST,  /* strip_first_image(bytes, len, data_len as StripByteCounts, no_count, compression) */
    F_FIFO,         /* a FIFO in the work directory */
    F_DIRECTORY,    /* the work directory itself */
    F_EMPTY_PATH,   /* "" */
} file_kind;

typedef struct read_case {
    const char *name;
    file_kind kind;
    const char *bytes;
    size_t len;
    uint32_t width, height;
    uint16_t bits;
    uint32_t data_len;
    long cut;
    int stack_null;
    const char *words; /* "f.tif" stands for the file's path, "DIR" for the work directory */
    int page;
    uint32_t value;
    int no_count;
    uint16_t compression;
} read_case;

/* PackBits: one literal run of 128 bytes for a page of 8 (libtiff keeps 8 and discards the rest, warning) */
#define PACKBITS_RUN_PAST_THE_PAGE "\x7f" \
    "abcdefghabcdefghabcdefghabcdefghabcdefghabcdefghabcdefghabcdefgh" \
    "abcdefghabcdefghabcdefghabcdefghabcdefghabcdefghabcdefghabcdefgh"

static const read_case read_cases[] = {
    {"path NULL", F_NONE, NULL, 0, 0, 0, 0, 0, 0, 0, "(null): cannot open: no path", 0, 0, 0, 0},
    {"s NULL", F_HAND, NULL, 0, 2, 2, 16, 8, 0, 1, "f.tif: gw_tiff_read_u16: the stack s is NULL", 0, 0, 0, 0},
    {"/dev/null (a character device)", F_DEV_NULL, NULL, 0, 0, 0, 0, 0, 0, 0,
     "/dev/null: not a regular file (a character device)", 0, 0, 0, 0},
    {"empty file", F_BYTES, "", 0, 0, 0, 0, 0, 0, 0, "f.tif: not a readable TIFF file", 0, 0, 0, 0},
    {"the 4-byte signature only", F_BYTES, "II*\0", 4, 0, 0, 0, 0, 0, 0, "f.tif: not a readable TIFF file", 0, 0, 0, 0},
    {"header whose first directory is past the end", F_BYTES, "II*\0\x00\x10\x00\x00", 8, 0, 0, 0, 0, 0, 0,
     "f.tif: not a readable TIFF file", 0, 0, 0, 0},
    {"big-endian signature, then garbage", F_BYTES, "MM\0*garbage!", 12, 0, 0, 0, 0, 0, 0,
     "f.tif: not a readable TIFF file", 0, 0, 0, 0},
    {"width 0", F_HAND, NULL, 0, 0, 2, 16, 8, 0, 0,
     "f.tif: not a readable TIFF file (libtiff: |scanline size is zero", 0, 0, 0, 0},
    {"65536x65536 declared, 8 bytes stored (fails before an 8 GiB allocation)", F_HAND, NULL, 0, 65536, 65536, 16, 8,
     0, 0, "f.tif: page 0: cannot decode strip 0|data missing or corrupt", 0, 0, 0, 0},
    {"2^32-1 x 2^32-1 declared (the size overflows)", F_HAND, NULL, 0, UINT32_MAX, UINT32_MAX, 16, 8, 0, 0,
     "f.tif: not a readable TIFF file", 0, 0, 0, 0},
    {"strip cut short: 2x2 of 16 bits in 6 bytes", F_HAND, NULL, 0, 2, 2, 16, 6, 0, 0,
     "f.tif: page 0: cannot decode strip 0|data missing or corrupt", 0, 0, 0, 0},
    {"a written 3-page stack cut to half its size", F_CUT_WRITTEN, NULL, 0, 0, 0, 0, 0, -2, 0,
     "f.tif: page 0: the next-page (IFD) pointer at offset|past the end of the file", 0, 0, 0, 0},
    {"a written 3-page stack cut to 200 bytes", F_CUT_WRITTEN, NULL, 0, 0, 0, 0, 0, 200, 0,
     "f.tif: not a readable TIFF file (libtiff: ", 0, 0, 0, 0},
    /* hostile inputs: never block, never a shorter stack, never a guessed strip */
    {.name = "a FIFO", .kind = F_FIFO, .words = "/f.fifo: not a regular file (a FIFO)"},
    {.name = "a directory", .kind = F_DIRECTORY, .words = "DIR: not a regular file (a directory)"},
    {.name = "path empty", .kind = F_EMPTY_PATH, .words = "(empty path): cannot open: no path"},
    {.name = "cut inside page 0's next-page pointer (once read as 1 page)", .kind = F_CUT_NEXT, .page = 0, .cut = 2,
     .words = "f.tif: page 0: its directory (IFD) at offset|next-page pointer, which run past the end of the file|"
              "truncated"},
    {.name = "cut inside page 1's next-page pointer (once read as 2 pages)", .kind = F_CUT_NEXT, .page = 1, .cut = 3,
     .words = "f.tif: page 1: its directory (IFD) at offset|run past the end of the file|truncated"},
    {.name = "cut inside the last page's next-page pointer (once read as all 3 pages)", .kind = F_CUT_NEXT, .page = 2,
     .cut = 1, .words = "f.tif: page 2: its directory (IFD) at offset|run past the end of the file"},
    {.name = "cut right after page 1's next-page pointer", .kind = F_CUT_NEXT, .page = 1, .cut = 4,
     .words = "f.tif: page 1: the next-page (IFD) pointer at offset|past the end of the file|truncated or corrupt"},
    {.name = "page 0's next-page pointer 2^31 (past the end)", .kind = F_PATCH_NEXT, .page = 0, .value = 1u << 31,
     .words = "f.tif: page 0: the next-page (IFD) pointer at offset|is 2147483648, past the end of the file"},
    {.name = "the last page's next-page pointer loops back to page 0", .kind = F_PATCH_NEXT, .page = 2, .value = 0,
     .words = "f.tif: cannot read the directory of page 3 at offset|IFD looping"},
    {.name = "page 1's next-page pointer points at itself", .kind = F_PATCH_NEXT, .page = 1, .value = 1,
     .words = "f.tif: cannot read the directory of page 2 at offset|IFD looping"},
    {.name = "one strip stored in 6 of 8 bytes, its directory next (libtiff would read 2 directory bytes as pixels)",
     .kind = F_STRIP_FIRST, .bytes = "\x01\x02\x03\x04\x05\x06", .len = 6, .data_len = 6, .compression = 1,
     .words = "f.tif: page 0: its directory: libtiff warned|Bogus \"StripByteCounts\"|lost or doubtful data, refused"},
    {.name = "StripByteCounts missing (libtiff would guess it)", .kind = F_STRIP_FIRST,
     .bytes = "\x01\x02\x03\x04\x05\x06\x07\x08", .len = 8, .no_count = 1, .compression = 1,
     .words = "f.tif: page 0: its directory: libtiff warned|missing required \"StripByteCounts\"|lost or doubtful"},
    {.name = "a PackBits run past the page (libtiff would discard it)", .kind = F_STRIP_FIRST,
     .bytes = PACKBITS_RUN_PAST_THE_PAGE, .len = 129, .data_len = 129, .compression = 32773,
     .words = "f.tif: page 0: cannot decode strip 0|libtiff warned: PackBitsDecode: Discarding 120 bytes"},
};

/* A FIFO blocked the old .npy reader for ever, and gw_tiff checked it by path before opening the path again:
 * the timeout turns a hang into a failure. */
Test(gw_tiff_read_u16, rejects_with_the_file_page_and_rule_and_changes_no_file, .timeout = 240)
{
    char *dir = bi_make_dir("bad_input_tiff_read");
    char path[512], fifo[512];
    snprintf(path, sizeof path, "%s/f.tif", dir);
    snprintf(fifo, sizeof fifo, "%s/f.fifo", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    static uint8_t image[4096];
    static uint16_t pixels[3 * 16 * 16];
    for (size_t i = 0; i < sizeof read_cases / sizeof read_cases[0]; i++) {
        const read_case *c = &read_cases[i];
        char err[1024] = "";
        const char *p = path;
        switch (c->kind) {
        case F_NONE: p = NULL; break;
        case F_DEV_NULL: p = "/dev/null"; break;
        case F_FIFO: p = fifo; break;
        case F_DIRECTORY: p = dir; break;
        case F_EMPTY_PATH: p = ""; break;
        case F_BYTES: bi_write_file(path, c->bytes, c->len); break;
        case F_HAND: bi_write_file(path, image, tiff_image(image, sizeof image, c->width, c->height, c->bits,
                                                           c->data_len)); break;
        case F_STRIP_FIRST:
            bi_write_file(path, image, strip_first_image(image, sizeof image, (const uint8_t *)c->bytes,
                                                         (uint32_t)c->len, c->data_len, c->no_count, c->compression));
            break;
        case F_CUT_WRITTEN:
        case F_CUT_NEXT:
        case F_PATCH_NEXT: {
            for (size_t k = 0; k < sizeof pixels / sizeof pixels[0]; k++) pixels[k] = (uint16_t)(k * 257u);
            cr_assert_eq(gw_tiff_write(path, GW_TIFF_U16, 3, 16, 16, pixels, err, sizeof err), 0, "%s", err);
            struct stat st;
            cr_assert_eq(stat(path, &st), 0);
            cr_assert((size_t)st.st_size <= sizeof image);
            FILE *f = fopen(path, "rb");
            cr_assert(f);
            const size_t len = fread(image, 1, (size_t)st.st_size, f);
            fclose(f);
            cr_assert_eq(len, (size_t)st.st_size);
            if (c->kind == F_CUT_WRITTEN) {
                bi_write_file(path, image, (size_t)(c->cut < 0 ? st.st_size / -c->cut : c->cut));
            } else if (c->kind == F_CUT_NEXT) {
                bi_write_file(path, image, next_pointer_at(image, c->page) + (size_t)c->cut);
            } else {
                const uint32_t to = c->value == 0 ? get32(image + 4) /* page 0's directory */
                                    : c->value == 1 ? get32(image + next_pointer_at(image, c->page - 1)) /* itself */
                                                    : c->value;
                put32(image + next_pointer_at(image, c->page), to);
                bi_write_file(path, image, len);
            }
            break;
        }
        }
        bi_dir snap;
        bi_dir_take(&snap, dir);
        gw_tiff_stack s;
        memset(&s, 0xA5, sizeof s);
        const int rc = gw_tiff_read_u16(p, 0, c->stack_null ? NULL : &s, err, sizeof err);
        cr_expect_eq(rc, -1, "row \"%s\" was accepted", c->name);
        if (rc == 0) gw_tiff_free(&s);
        if (!c->stack_null)
            cr_expect(s.data == NULL && s.pages == 0 && s.height == 0 && s.width == 0,
                      "row \"%s\": the stack is not zeroed", c->name);
        char words[600];
        snprintf(words, sizeof words, "%s", c->words);
        if (!strncmp(c->words, "f.tif", 5)) snprintf(words, sizeof words, "%s%s", path, c->words + 5);
        if (!strncmp(c->words, "DIR", 3)) snprintf(words, sizeof words, "%s%s", dir, c->words + 3);
        bi_expect_words(c->name, err, words);
        cr_log_info("%s: %s", c->name, err);
        cr_expect_eq(gw_tiff_read_u16(p, 0, c->stack_null ? NULL : &s, NULL, 0), -1, "row \"%s\", err NULL", c->name);
        bi_dir_expect_unchanged(&snap, dir, c->name);
    }
    cr_log_info("gw_tiff_read_u16: %zu bad inputs rejected", sizeof read_cases / sizeof read_cases[0]);
    gw_remove_dir(dir);
    free(dir);
}

/* ---------------------------------------------------------------- gw_tiff_write and gw_tiff_stage */

enum { W_TARGET, W_PATH_NULL, W_PATH_EMPTY, W_MISSING_DIR, W_IS_DIR, W_DATA_NULL };

typedef struct write_case {
    const char *name;
    int mode;
    gw_tiff_type type;
    int pages;
    uint32_t height, width;
    const char *words;
} write_case;

static const write_case write_cases[] = {
    {"path NULL", W_PATH_NULL, GW_TIFF_U16, 1, 2, 2, "(null): gw_tiff_write: bad arguments|path is NULL or empty"},
    {"path empty", W_PATH_EMPTY, GW_TIFF_U16, 1, 2, 2, "gw_tiff_write: bad arguments|path is NULL or empty"},
    {"data NULL", W_DATA_NULL, GW_TIFF_U16, 1, 2, 2, "out.tif: gw_tiff_write: bad arguments|data is NULL"},
    {"pages 0", W_TARGET, GW_TIFF_U16, 0, 2, 2, "(0 pages of 2x2, type 1): pages is outside 1..65535"},
    {"pages -1", W_TARGET, GW_TIFF_U16, -1, 2, 2, "(-1 pages of 2x2, type 1): pages is outside 1..65535"},
    {"pages 65536", W_TARGET, GW_TIFF_U16, 65536, 2, 2, "pages is outside 1..65535"},
    {"height 0", W_TARGET, GW_TIFF_U16, 1, 0, 2, "(1 pages of 0x2, type 1): height and width must be at least 1"},
    {"width 0", W_TARGET, GW_TIFF_U8, 1, 2, 0, "height and width must be at least 1"},
    {"type 7", W_TARGET, (gw_tiff_type)7, 1, 2, 2, "type 7): type is not GW_TIFF_U8, GW_TIFF_U16 or GW_TIFF_F32"},
    {"type -1", W_TARGET, (gw_tiff_type)-1, 1, 2, 2, "type -1): type is not GW_TIFF_U8"},
    {"2^32-1 x 2^32-1 uint16 (the size overflows)", W_TARGET, GW_TIFF_U16, 1, UINT32_MAX, UINT32_MAX,
     "pages*height*width*item overflows size_t|larger than any buffer"},
    {"65535 pages of 2^32-1 x 2^32-1 float32", W_TARGET, GW_TIFF_F32, 65535, UINT32_MAX, UINT32_MAX,
     "pages*height*width*item overflows size_t"},
    {"directory missing", W_MISSING_DIR, GW_TIFF_U16, 1, 2, 2,
     "no/such/dir/out.tif: cannot create a temporary file beside it"},
    {"path is a directory", W_IS_DIR, GW_TIFF_U16, 1, 2, 2, "/sub: cannot replace the file: Is a directory"},
};

Test(gw_tiff_write, refuses_bad_arguments_and_places_and_keeps_the_existing_file)
{
    char *dir = bi_make_dir("bad_input_tiff_write");
    char target[256], sub[256], keep[300], missing[300];
    snprintf(target, sizeof target, "%s/out.tif", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(keep, sizeof keep, "%s/keep", sub);
    snprintf(missing, sizeof missing, "%s/no/such/dir/out.tif", dir);
    bi_write_file(target, "old", 3);
    cr_assert_eq(mkdir(sub, 0777), 0);
    bi_write_file(keep, "x", 1); /* rename() cannot replace a non-empty directory */
    const uint32_t data[4] = {1, 2, 3, 4}; /* room for 2x2 of any type; the huge rows must not read it */
    for (size_t i = 0; i < sizeof write_cases / sizeof write_cases[0]; i++) {
        const write_case *c = &write_cases[i];
        const char *p = c->mode == W_PATH_NULL      ? NULL
                        : c->mode == W_PATH_EMPTY   ? ""
                        : c->mode == W_MISSING_DIR  ? missing
                        : c->mode == W_IS_DIR       ? sub
                                                    : target;
        const void *d = c->mode == W_DATA_NULL ? NULL : data;
        bi_dir snap, sub_snap;
        bi_dir_take(&snap, dir);
        bi_dir_take(&sub_snap, sub);
        char err[1024] = "";
        const int rc = gw_tiff_write(p, c->type, c->pages, c->height, c->width, d, err, sizeof err);
        cr_expect_eq(rc, -1, "row \"%s\" was written", c->name);
        bi_expect_words(c->name, err, c->words);
        cr_log_info("%s: %s", c->name, err);
        bi_expect_words(c->name, err, "nothing written");
        if (c->mode != W_IS_DIR) { /* a directory as the target fails only at the rename */
            gw_outfile f = {(char *)"stale", (char *)"stale", 99};
            cr_expect_eq(gw_tiff_stage(&f, p, c->type, c->pages, c->height, c->width, d, err, sizeof err), -1,
                         "row \"%s\": gw_tiff_stage staged it", c->name);
            cr_expect(f.path == NULL && f.tmp == NULL && f.fd == -1, "row \"%s\": f not reset by a refused stage",
                      c->name);
            gw_outfile_discard(&f);
        }
        bi_dir_expect_unchanged(&snap, dir, c->name);
        bi_dir_expect_unchanged(&sub_snap, sub, c->name);
    }
    char err[512] = "";
    cr_expect_eq(gw_tiff_stage(NULL, target, GW_TIFF_U16, 1, 2, 2, data, err, sizeof err), -1);
    bi_expect_words("gw_tiff_stage f NULL", err, "out.tif: gw_tiff_write: bad arguments|the staged file f is NULL");
    cr_log_info("gw_tiff_write and gw_tiff_stage: %zu bad inputs refused, gw_tiff_stage: 1 more (f NULL)",
                sizeof write_cases / sizeof write_cases[0]);
    gw_remove_dir(sub);
    gw_remove_dir(dir);
    free(dir);
}
