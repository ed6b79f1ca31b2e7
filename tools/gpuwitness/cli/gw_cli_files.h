/* SPDX-License-Identifier: MIT
 * The output rule of every command that writes (docs/errors.md, "Outputs"), checked once, before any input is
 * read and before any work:
 *   - each output is a file name (not ending in '/') in a directory that exists and can be written;
 *   - an output that exists already is a regular file (through symlinks): never a directory, FIFO or device;
 *   - no output is an input: not by name, and not by identity (a hard link, a symlink, another spelling);
 *   - no two outputs are one file: not the same directory entry, and not two names of one file.
 * The check sorts the files by identity, so a command of n files makes O(n) stat() calls and O(n log n)
 * comparisons: re-running over 8,000 existing outputs costs what the first run did.
 *
 *     const gw_cli_file outs[] = {{"--out", out_path, NULL}};
 *     const gw_cli_file ins[] = {{"--psf", psf_path, NULL}, {"--image", image_path, NULL}};
 *     if (gw_cli_check_outputs("gpuwitness run ex2d", outs, 1, ins, 2)) return GW_EXIT_USAGE;  // printed
 */
#ifndef GW_CLI_FILES_H
#define GW_CLI_FILES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A file a command names. option: the argument that named it ("--out", "--json"), or NULL for a positional
 * input; from: for an output derived from an input's name (run --out-dir), that input, else NULL. */
typedef struct gw_cli_file {
    const char *option;
    const char *path;
    const char *from;
} gw_cli_file;

/* 0 when the outputs keep the rule above; -1 after printing "CMD: WHICH 'PATH': RULE" on stderr for the
 * first output that breaks it. An input that does not exist is still matched by its directory entry (that it
 * cannot be read is its reader's error, later). */
int gw_cli_check_outputs(const char *cmd, const gw_cli_file *outputs, size_t n_outputs, const gw_cli_file *inputs,
                         size_t n_inputs);

#ifdef __cplusplus
}
#endif

#endif /* GW_CLI_FILES_H */
