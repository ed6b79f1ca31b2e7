/* SPDX-License-Identifier: MIT
 * The fuzzer's input as a file, for readers that only take a path (gw_npy_read, gw_tiff_read_u16): one
 * memfd per process, rewritten for every input, named by its /proc/self/fd path. No disk writes, nothing
 * to clean up, and the readers' stat/fopen/mmap see an ordinary regular file.
 */
#ifndef FUZZ_MEMFILE_H
#define FUZZ_MEMFILE_H

#include <stddef.h>
#include <stdint.h>

/* The path of a regular file holding exactly data[0..size); aborts when the memfd cannot be written
 * (a broken harness must not pass as "no crash found"). */
const char *fuzz_memfile(const uint8_t *data, size_t size);

#endif /* FUZZ_MEMFILE_H */
