/* SPDX-License-Identifier: MIT
 * Small helpers shared by several Criterion tests (not by kernels or the CLI).
 */
#ifndef GW_TEST_UTIL_H
#define GW_TEST_UTIL_H

#include <stddef.h>

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

/* Removes the files in dir, then dir itself (one level: what the tests create). */
void gw_remove_dir(const char *dir);

#endif /* GW_TEST_UTIL_H */
