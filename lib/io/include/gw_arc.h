/* SPDX-License-Identifier: MIT
 * ARC task JSON (fchollet/ARC-AGI format) read and write, with cJSON.
 * A task is {"train": [pair...], "test": [pair...]}, a pair {"input": grid, "output": grid} (test pairs
 * may lack "output"), a grid a list of equal-length rows of integers 0..9, 1..GW_ARC_MAX_DIM each way.
 * Errors name the file, the place (e.g. "train[2].output row 3", indices from 0) and the rule; on error
 * nothing is kept. Other top-level keys (two ARC-AGI-1 files carry a "name") are ignored and not written
 * back; a number such as 1.0 reads as the integer 1 (cJSON keeps no number text).
 */
#ifndef GW_ARC_H
#define GW_ARC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GW_ARC_MAX_DIM 255 /* grid_d4's limit; real ARC grids are at most 30 x 30 */

typedef struct gw_arc_grid {
    uint16_t height, width;
    uint8_t *cells; /* height*width, row-major */
} gw_arc_grid;

typedef struct gw_arc_pair {
    gw_arc_grid input, output;
    int has_output;
} gw_arc_pair;

typedef struct gw_arc_task {
    size_t n_train, n_test;
    gw_arc_pair *train, *test;
} gw_arc_task;

/* 0 on success; -1 with err filled. The task is zeroed on error. */
int gw_arc_parse(const char *json, size_t json_len, const char *name, gw_arc_task *task, char *err, size_t err_size);
int gw_arc_read(const char *path, gw_arc_task *task, char *err, size_t err_size);
/* Writes the task as ARC JSON (compact rows). 0 on success; -1 with err filled, no file left behind. */
int gw_arc_write(const char *path, const gw_arc_task *task, char *err, size_t err_size);
void gw_arc_free(gw_arc_task *task);

/* Number of grids (train and test inputs and present outputs) and a pointer to grid i in file order:
 * train[0].input, train[0].output, train[1].input, ..., test[0].input, test[0].output (if present), ...
 * A NULL task has 0 grids; gw_arc_grid_at gives NULL for it and for i >= the count. */
size_t gw_arc_grid_count(const gw_arc_task *task);
gw_arc_grid *gw_arc_grid_at(gw_arc_task *task, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* GW_ARC_H */
