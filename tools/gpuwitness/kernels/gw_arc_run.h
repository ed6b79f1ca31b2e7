/* SPDX-License-Identifier: MIT
 * What `run` does alike for the kernels whose `run` reads ARC task files (grid_d4, grid_objects): N input
 * paths mapped to N output paths under --out-dir or -o (refusing outputs that are inputs, duplicates or not
 * regular files) and every input read into one packed grid_d4 batch (the witness report is the CLI core's
 * gw_cli_run_witness). Messages go to stderr as "gpuwitness run: ..." or "gpuwitness run <kernel>: ...";
 * results are GW_EXIT_* codes.
 */
#ifndef GW_ARC_RUN_H
#define GW_ARC_RUN_H

#include <stddef.h>

#include "grid_d4_batch.h"
#include "gw_arc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One input file of a run and what is made of it. */
typedef struct gw_arc_run_file {
    const char *path;          /* the input, as given on the command line */
    char *out_path;            /* where its result goes (gw_arc_run_plan) */
    gw_arc_task task;          /* its grids (gw_arc_run_read_batch) */
    size_t first_grid, n_grids; /* its grids in the batch: first_grid .. first_grid + n_grids - 1 */
} gw_arc_run_file;

/* After the kernel's own options are checked: there must be inputs, exactly one of out_dir and out_file,
 * and out_file only with one input (messages name the kernel); then *files gets one record per input and
 * every output path, checked before any input is read (the place must be writable in principle and must
 * not be an input or another output). GW_EXIT_OK; GW_EXIT_USAGE or GW_EXIT_FAIL (out of memory for the
 * records) with the message printed. *files is set whenever it was allocated, even on failure: free it
 * with gw_arc_run_files_free. */
int gw_arc_run_plan(const char *kernel, const char *const *inputs, size_t n_inputs, const char *out_dir,
                    const char *out_file, gw_arc_run_file **files);

/* Reads every input (each bad file is reported, then the count), then puts all grids of all files in one
 * packed batch b, in file order, with batch op `op` (the kernel's op or variant number), and sets each
 * file's first_grid and n_grids. GW_EXIT_OK, or GW_EXIT_FAIL (printed; b then holds nothing to free). */
int gw_arc_run_read_batch(gw_arc_run_file *files, size_t n, int op, grid_d4_batch *b);

/* The tasks and output paths of files[0..n-1], then files itself; NULL is fine. */
void gw_arc_run_files_free(gw_arc_run_file *files, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* GW_ARC_RUN_H */
