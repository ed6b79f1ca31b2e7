/* SPDX-License-Identifier: MIT
 * SHA-256 (FIPS 180-4), for comparing label maps with the golden vectors' digests. Test code only.
 */
#ifndef GO_SHA256_H
#define GO_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* The digest of len bytes at data. */
void go_sha256(const void *data, size_t len, uint8_t digest[32]);

/* The first n_hex (even, at most 64) lowercase hex digits of the digest of data, into hex (n_hex + 1 bytes). */
void go_sha256_hex(const void *data, size_t len, char *hex, size_t n_hex);

#endif /* GO_SHA256_H */
