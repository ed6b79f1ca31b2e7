/* SPDX-License-Identifier: MIT
 * A scratch directory for the harnesses that write files (the run_* harnesses follow the CLI through its
 * output files): one per process, made on first use in /dev/shm (tmpfs: fsync and rename cost no disk I/O;
 * $TMPDIR or /tmp without it) and removed at exit, with what the harness needs to check that a command left
 * exactly the files it should. Every helper aborts when the file system does not do what it asked (a broken
 * harness must not pass as "no crash found").
 */
#ifndef FUZZ_SCRATCH_H
#define FUZZ_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

/* The directory, "<base>/<prefix>.XXXXXX", made on the first call. */
const char *fuzz_scratch_dir(const char *prefix);
/* "<dir>/<name>" in a static buffer of its own per call site slot (slot 0..7: several names at once). */
const char *fuzz_scratch_path(int slot, const char *name);
/* The directory holds exactly the entries named (n of them, any order), nothing else: aborts naming the
 * first stray or missing entry and `when`. */
void fuzz_scratch_expect(const char *const *names, size_t n, const char *when);
/* Removes every entry (files, and directories the harness made, which must be empty). */
void fuzz_scratch_clear(void);
/* The whole content of a regular file (malloc'd, *len bytes; never NULL). */
uint8_t *fuzz_slurp(const char *path, size_t *len);
/* Writes a small file whole (creates or truncates). */
void fuzz_put_file(const char *path, const void *data, size_t len);

#endif /* FUZZ_SCRATCH_H */
