/* SPDX-License-Identifier: MIT
 * ARC task JSON (fchollet/ARC-AGI format) read and write, in plain C.
 * A task is {"train": [pair...], "test": [pair...]}, a pair {"input": grid, "output": grid} (test pairs
 * may lack "output"), a grid a list of equal-length rows of integers 0..9, 1..GW_ARC_MAX_DIM each way.
 * Errors name the file, the place (e.g. "train[2].output row 3", indices from 0) and the rule; on error
 * nothing is kept and the task is zeroed. Full list: docs/errors.md, "Readers and writers".
 *
 * Strict JSON (RFC 8259). The text must be UTF-8 JSON and nothing else: whitespace between tokens is only space,
 * tab, line feed and carriage return (a control character such as 0x01, 0x1f or NUL there is refused, as is a byte
 * order mark), a control character inside a string must be escaped, strings must be valid UTF-8, a number has no
 * leading zero (01), no '+' and no bare '.', and literals are exactly true, false and null (no NaN, Infinity,
 * single quotes, comments or trailing commas), and an escaped UTF-16 surrogate (\uD83D) must come with its other
 * half (a lone one is not a character). Syntax errors say "invalid JSON at line L, column C (byte B): WHAT"
 * (columns count bytes from 1); a text that ends early says "unexpected end of input". Lists and objects may nest
 * GW_ARC_MAX_NESTING levels (the task object is level 1, a grid's rows level 5); deeper, valid or not, is refused
 * as "nesting deeper than 1000 levels at line L, column C". A cell must be written as a plain integer 0..9: 1.0,
 * 1e0 and 1.5 are refused with the cell rule ("a cell must be an integer 0..9"). (This reader used to take 1.0 as
 * 1; a cell is now an integer as written, not as valued.)
 *
 * Why a reader of its own and not cJSON (or another parser of Debian's): cJSON is lenient by design (it skips
 * every byte 0x01..0x20 as whitespace, takes 01 as 1, gives an error position clamped to the last byte and a
 * bare "invalid JSON" at its nesting limit), and no tree parser (cJSON, jansson, json-c) keeps the original
 * text of a value, which the writer needs to give back the members it does not interpret. So the reader
 * makes two passes over the bytes, both linear and neither recursive: a strict RFC 8259 syntax pass with the
 * nesting limit (which names the rule, the line and the column of the first fault), then a structure pass
 * over the text known to be valid, which builds the grids and keeps the other members as text. It allocates
 * the grids and one record of the rest, never a node per value.
 *
 * Members kept. Every member the reader does not interpret (a top-level key other than "train" and "test", such as
 * the "name" two ARC-AGI-1 training files carry; a key other than "input" and "output" in a pair) is kept with its
 * key and value exactly as written (escapes, spacing and number spelling included), in its place among its
 * siblings, and gw_arc_write writes it back there (a pair that lists "output" before "input" keeps that order too);
 * grids are always written in the writer's own form (below). Duplicate keys among such members are kept as they
 * are; "train", "test", "input" and "output" must each appear at most once (a key is compared after unescaping:
 * "tr\u0061in" is "train").
 *
 * Grids in O(1). gw_arc_parse and gw_arc_read build an index of the grids, so gw_arc_grid_count and
 * gw_arc_grid_at take constant time on the task they return. Change the grids of such a task freely (their
 * cells, and height and width with cells to match; cells is malloc'd and the task owns it: a transform
 * writes its result through gw_arc_grid_at, then gw_arc_write), but not its lists, counts or has_output
 * flags: build a new task for that. A task built by hand (with designated initializers, so kept is NULL) is
 * answered by a walk over its pairs.
 */
#ifndef GW_ARC_H
#define GW_ARC_H

#include <stddef.h>
#include <stdint.h>

#include "gw_outfile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GW_ARC_MAX_DIM 255      /* grid_d4's limit; real ARC grids are at most 30 x 30 */
#define GW_ARC_MAX_NESTING 1000 /* lists and objects; an ARC task needs 5 */

typedef struct gw_arc_grid {
    uint16_t height, width;
    uint8_t *cells; /* height*width, row-major; malloc'd by the reader, freed by gw_arc_free */
} gw_arc_grid;

typedef struct gw_arc_pair {
    gw_arc_grid input, output;
    int has_output;
} gw_arc_pair;

struct gw_arc_kept; /* private: the members kept as text, their order, and the grid index */

typedef struct gw_arc_task {
    size_t n_train, n_test;
    gw_arc_pair *train, *test;
    struct gw_arc_kept *kept; /* set by gw_arc_parse/gw_arc_read, freed by gw_arc_free; NULL in a task built
                                 by hand (then written as {"train": ..., "test": ...}) */
} gw_arc_task;

/* 0 on success; -1 with err filled. The task is zeroed on error. json need not be NUL-terminated: only
 * json_len bytes are read. */
int gw_arc_parse(const char *json, size_t json_len, const char *name, gw_arc_task *task, char *err, size_t err_size);
/* Opens path with gw_infile_open (a FIFO, a device or a directory is refused at once: "not a regular file
 * (a FIFO)"), then gw_arc_parse with path as the name. */
int gw_arc_read(const char *path, gw_arc_task *task, char *err, size_t err_size);
/* Writes the task as ARC JSON on one line, in Python json.dump's spacing ({"train": [{"input": [[1, 2]],
 * "output": [[3]]}], "test": [...]}), with the kept members in their places; the writer refuses what the
 * reader would refuse, so every written file reads back. 0 on success; -1 with err filled (ending in
 * "; nothing written"): no file left behind, an existing file at path kept. gw_arc_write is gw_arc_stage,
 * then gw_outfile_commit. */
int gw_arc_write(const char *path, const gw_arc_task *task, char *err, size_t err_size);
/* The same, but stops before the rename (as gw_npy_stage): on 0 the caller owns the staged file f, written
 * and finished, and must gw_outfile_commit (or commit it with others) or gw_outfile_discard it; on -1
 * nothing is left and f needs no discard (but allows it). */
int gw_arc_stage(gw_outfile *f, const char *path, const gw_arc_task *task, char *err, size_t err_size);
void gw_arc_free(gw_arc_task *task);

/* Number of grids (train and test inputs and present outputs) and a pointer to grid i in file order:
 * train[0].input, train[0].output, train[1].input, ..., test[0].input, test[0].output (if present), ...
 * A NULL task has 0 grids; gw_arc_grid_at gives NULL for it and for i >= the count. O(1) on a task from
 * gw_arc_parse/gw_arc_read (see "Grids in O(1)" above). */
size_t gw_arc_grid_count(const gw_arc_task *task);
gw_arc_grid *gw_arc_grid_at(gw_arc_task *task, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* GW_ARC_H */
