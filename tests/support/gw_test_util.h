/* SPDX-License-Identifier: MIT
 * Small helpers shared by several Criterion tests (not by kernels or the CLI).
 */
#ifndef GW_TEST_UTIL_H
#define GW_TEST_UTIL_H

#include <stddef.h>

/* RUNNING_ON_VALGRIND: nonzero under Valgrind (valgrind.h's client request), 0 where the header is missing;
 * tests that time something shrink their problem under it. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* Fails the test unless the lines between the marker lines example-begin and example-end (alone on their
 * line, or after "//") are the same in a kernel header and in the test that compiles its example: the
 * usage snippet in a header must be code the build really compiles and runs. Lines are compared without
 * indentation, a block comment's leading "*" and trailing blanks; the example's own "//" comments count. */
void gw_assert_example_verbatim(const char *header_path, const char *test_path);

/* Appends a formatted line (with its newline) to msg, never writing past msg_size; msg stays terminated.
 * For test messages that list several findings. */
void gw_append_line(char *msg, size_t msg_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Entries in dir other than . and .. ((size_t)-1 when it cannot be opened). */
size_t gw_count_dir_entries(const char *dir);

/* Writes len bytes to path, created (mode 0600) or truncated; the test fails if it cannot. */
void gw_write_bytes(const char *path, const void *bytes, size_t len);

/* Removes the files in dir, then dir itself (one level: what the tests create). */
void gw_remove_dir(const char *dir);

/* The path of `relative` (as "arc/d4_golden.jsonl") in the data folder named by the environment variable
 * GW_DATA_DIR (docs/testing.md, "Data sets"), written to buf. `what` says in words what the file or folder
 * holds, for the messages. Without GW_DATA_DIR the calling test is skipped, naming the variable and what it
 * must hold; when CI is set, or GW_REQUIRE_GPU=1, it fails instead. A GW_DATA_DIR without the path fails the test. Only tests in a
 * suite whose name ends in "_data" may call it (CTest runs those apart, as <executable>.data, so their
 * skip is seen); any other caller fails. */
const char *gw_data_path(const char *relative, const char *what, char *buf, size_t size);

#endif /* GW_TEST_UTIL_H */
