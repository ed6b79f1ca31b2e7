/* SPDX-License-Identifier: MIT
 * Private to lib/io's ARC reader: its strict JSON syntax pass (gw_arc_syntax.c) and the two byte classes both
 * passes use.
 */
#ifndef GW_ARC_SYNTAX_H
#define GW_ARC_SYNTAX_H

#include <stddef.h>

/* JSON whitespace: space, tab, line feed, carriage return; nothing else (RFC 8259). */
static inline int gw_arc_is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The value of a hexadecimal digit, or -1. */
static inline int gw_arc_hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Checks json[start..json_len) (start: the first byte after leading whitespace) as one strict JSON value with
 * nothing after it, lists and objects nested at most GW_ARC_MAX_NESTING deep. 0, or -1 with err "NAME: invalid
 * JSON at line L, column C (byte B): WHAT", "NAME: nesting deeper than ..." or "... unexpected end of input". */
int gw_arc_syntax_check(const char *json, size_t json_len, size_t start, const char *name, char *err,
                        size_t err_size);

#endif /* GW_ARC_SYNTAX_H */
