/* SPDX-License-Identifier: MIT
 * The first pass of the ARC reader (gw_arc.c): strict RFC 8259 JSON syntax with a nesting limit, over the
 * bytes, linear and not recursive. The first fault is reported with its line, column and byte offset, and the
 * rule it breaks; nothing is allocated but a fixed stack of brackets. The rules: gw_arc.h.
 */
#include "gw_arc_syntax.h"
#include "gw_io_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gw_arc.h" /* GW_ARC_MAX_NESTING */


static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}


/* Line and column (1-based, columns in bytes) of byte pos. */
static void text_position(const char *json, size_t pos, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (json[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

typedef struct syntax {
    const char *s;
    size_t n;
    const char *name;
    char *err;
    size_t err_size;
} syntax;

/* "NAME: invalid JSON at line L, column C (byte B): WHAT". Always -1. */
static int syntax_error(const syntax *x, size_t pos, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t line, col;
    text_position(x->s, pos, &line, &col);
    set_err(x->err, x->err_size, "%s: invalid JSON at line %zu, column %zu (byte %zu): %s", x->name, line, col, pos,
            what);
    return -1;
}

/* The text ends where more was needed. Always -1. */
static int end_error(const syntax *x, const char *inside)
{
    size_t line, col;
    text_position(x->s, x->n, &line, &col);
    set_err(x->err, x->err_size, "%s: invalid JSON: unexpected end of input at line %zu, column %zu (truncated "
            "file?)%s%s", x->name, line, col, inside ? ": the text ends inside " : "", inside ? inside : "");
    return -1;
}

/* A byte where a token was expected, for "got ..." (with the rule it breaks, when it is a control byte). */
static void describe_byte(unsigned char c, char *buf, size_t size)
{
    if (c == 0)
        snprintf(buf, size, "a NUL byte (0x00): strict JSON (RFC 8259) allows only space, tab, line feed and "
                 "carriage return between tokens");
    else if (c < 0x20)
        snprintf(buf, size, "control character 0x%02x: strict JSON (RFC 8259) allows only space, tab, line feed and "
                 "carriage return between tokens", c);
    else if (c == 0x7f)
        snprintf(buf, size, "byte 0x7f (DEL)");
    else if (c >= 0x80)
        snprintf(buf, size, "byte 0x%02x (outside strings JSON is ASCII)", c);
    else if (c == '\'')
        snprintf(buf, size, "' (a single quote: strings and member names take double quotes)");
    else if (c == 'N' || c == 'I')
        snprintf(buf, size, "'%c' (NaN and Infinity are not JSON numbers)", c);
    else
        snprintf(buf, size, "'%c'", c);
}

/* Length of the valid UTF-8 sequence at s[0..avail), 0 when it is invalid, or -1 when it is cut by the end. */
static int utf8_length(const unsigned char *s, size_t avail)
{
    const unsigned char c = s[0];
    int len;
    unsigned char lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F; /* no UTF-16 surrogates */
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F; /* nothing above U+10FFFF */
    else return 0;
    for (int k = 1; k < len; k++) {
        if ((size_t)k >= avail) return -1;
        const unsigned char b = s[k];
        if (k == 1 ? b < lo || b > hi : b < 0x80 || b > 0xBF) return 0;
    }
    return len;
}

/* The 4 hex digits of a \u escape at s[p..p+4). 0 with *v, or -1 with the error set. */
static int scan_hex4(const syntax *x, size_t p, unsigned *v)
{
    *v = 0;
    for (size_t k = 0; k < 4; k++) {
        if (p + k >= x->n) return end_error(x, "a string");
        const int h = gw_arc_hex_value((unsigned char)x->s[p + k]);
        if (h < 0) return syntax_error(x, p + k, "\\u must be followed by 4 hex digits");
        *v = *v * 16 + (unsigned)h;
    }
    return 0;
}

/* A string at *p (the opening quote); *p ends after the closing quote. */
static int scan_string(const syntax *x, size_t *p)
{
    const unsigned char *s = (const unsigned char *)x->s;
    size_t q = *p + 1;
    for (;;) {
        if (q >= x->n) return end_error(x, "a string");
        const unsigned char c = s[q];
        if (c == '"') break;
        if (c == '\\') {
            if (q + 1 >= x->n) return end_error(x, "a string");
            const unsigned char e = s[q + 1];
            if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
                q += 2;
                continue;
            }
            if (e != 'u') {
                char got[32];
                if (e >= 0x21 && e < 0x7f)
                    snprintf(got, sizeof got, "'%c'", e);
                else
                    snprintf(got, sizeof got, "byte 0x%02x", e);
                return syntax_error(x, q, "invalid escape: a backslash followed by %s; strict JSON allows \\\" \\\\ "
                                    "\\/ \\b \\f \\n \\r \\t and \\uXXXX", got);
            }
            unsigned v;
            if (scan_hex4(x, q + 2, &v)) return -1;
            if (v >= 0xDC00 && v <= 0xDFFF)
                return syntax_error(x, q, "escaped lone low surrogate \\u%04X: not a character (a low surrogate "
                                    "must follow a high one, \\uD800..\\uDBFF)", v);
            if (v >= 0xD800 && v <= 0xDBFF) {
                const size_t r = q + 6; /* where the low surrogate's \\u must be */
                unsigned w = 0;
                if (r >= x->n || (s[r] == '\\' && r + 1 >= x->n)) return end_error(x, "a string");
                if (s[r] != '\\' || s[r + 1] != 'u')
                    return syntax_error(x, q, "escaped lone high surrogate \\u%04X: not a character (it must be "
                                        "followed by a low surrogate, \\uDC00..\\uDFFF)", v);
                if (scan_hex4(x, r + 2, &w)) return -1;
                if (w < 0xDC00 || w > 0xDFFF)
                    return syntax_error(x, q, "escaped lone high surrogate \\u%04X: not a character (it must be "
                                        "followed by a low surrogate, \\uDC00..\\uDFFF)", v);
                q += 12;
                continue;
            }
            q += 6;
            continue;
        }
        if (c < 0x20)
            return syntax_error(x, q, "%s 0x%02x inside a string: strict JSON (RFC 8259) requires it escaped "
                                "(\\u%04x)", c ? "control character" : "NUL byte", c, c);
        if (c < 0x80) {
            q++;
            continue;
        }
        const int len = utf8_length(s + q, x->n - q);
        if (len < 0) return end_error(x, "a UTF-8 sequence in a string");
        if (len == 0)
            return syntax_error(x, q, "invalid UTF-8 in a string (byte 0x%02x): JSON text must be UTF-8 (RFC 8259)",
                                c);
        q += (size_t)len;
    }
    *p = q + 1;
    return 0;
}

/* A number at *p ('-' or a digit); *p ends after it. */
static int scan_number(const syntax *x, size_t *p)
{
    const unsigned char *s = (const unsigned char *)x->s;
    const size_t start = *p;
    size_t q = start;
    if (s[q] == '-') {
        q++;
        if (q >= x->n) return end_error(x, "a number");
        if (!is_digit(s[q])) return syntax_error(x, q, "a digit must follow '-' in a number");
    }
    if (s[q] == '0') {
        q++;
        if (q < x->n && is_digit(s[q])) {
            size_t e = q;
            while (e < x->n && is_digit(s[e]) && e - start < 40) e++;
            return syntax_error(x, start, "number with a leading zero (%.*s%s): strict JSON (RFC 8259) does not allow "
                                "one", (int)(e - start), x->s + start, e < x->n && is_digit(s[e]) ? "..." : "");
        }
    } else {
        while (q < x->n && is_digit(s[q])) q++;
    }
    if (q < x->n && s[q] == '.') {
        q++;
        if (q >= x->n) return end_error(x, "a number");
        if (!is_digit(s[q])) return syntax_error(x, q, "a digit must follow '.' in a number");
        while (q < x->n && is_digit(s[q])) q++;
    }
    if (q < x->n && (s[q] == 'e' || s[q] == 'E')) {
        q++;
        if (q < x->n && (s[q] == '+' || s[q] == '-')) q++;
        if (q >= x->n) return end_error(x, "a number");
        if (!is_digit(s[q])) return syntax_error(x, q, "the exponent of a number needs a digit");
        while (q < x->n && is_digit(s[q])) q++;
    }
    *p = q;
    return 0;
}

static int scan_literal(const syntax *x, size_t *p)
{
    const char *lit = x->s[*p] == 't' ? "true" : x->s[*p] == 'f' ? "false" : "null";
    const size_t len = strlen(lit);
    for (size_t k = 0; k < len; k++) {
        if (*p + k >= x->n) return end_error(x, lit);
        if (x->s[*p + k] != lit[k])
            return syntax_error(x, *p, "invalid literal: expected %s (literals are true, false and null, in lower "
                                "case)", lit);
    }
    *p += len;
    return 0;
}

enum { S_VALUE, S_VALUE_OR_CLOSE, S_KEY, S_KEY_OR_CLOSE, S_COLON, S_AFTER };

/* The whole text from p (its first non-whitespace byte): one JSON value, then only whitespace. */
static int syntax_pass(const syntax *x, size_t p)
{
    const unsigned char *s = (const unsigned char *)x->s;
    unsigned char stack[GW_ARC_MAX_NESTING];
    size_t depth = 0;
    int state = S_VALUE;
    char got[192];
    for (;;) {
        while (p < x->n && gw_arc_is_ws(s[p])) p++;
        if (state == S_AFTER && depth == 0) break;
        if (p >= x->n) {
            if (state == S_KEY || state == S_KEY_OR_CLOSE || state == S_COLON) return end_error(x, "an object");
            return end_error(x, depth ? (stack[depth - 1] == '{' ? "an object" : "a list") : NULL);
        }
        const unsigned char c = s[p];
        switch (state) {
        case S_VALUE_OR_CLOSE:
            if (c == ']') {
                depth--;
                p++;
                state = S_AFTER;
                continue;
            }
            /* fall through */
        case S_VALUE:
            if (c == '{' || c == '[') {
                if (depth == GW_ARC_MAX_NESTING) {
                    size_t line, col;
                    text_position(x->s, p, &line, &col);
                    set_err(x->err, x->err_size, "%s: nesting deeper than %d levels at line %zu, column %zu (byte "
                            "%zu): this reader allows lists and objects %d levels deep (an ARC task needs 5)", x->name,
                            GW_ARC_MAX_NESTING, line, col, p, GW_ARC_MAX_NESTING);
                    return -1;
                }
                stack[depth++] = c;
                p++;
                state = c == '{' ? S_KEY_OR_CLOSE : S_VALUE_OR_CLOSE;
                continue;
            }
            if (c == '"') {
                if (scan_string(x, &p)) return -1;
            } else if (c == '-' || is_digit(c)) {
                if (scan_number(x, &p)) return -1;
            } else if (c == 't' || c == 'f' || c == 'n') {
                if (scan_literal(x, &p)) return -1;
            } else if ((c == ']' || c == '}') && depth) {
                if (state == S_VALUE_OR_CLOSE) /* just after '[' */
                    return syntax_error(x, p, "'%c' where a value or ']' must follow '['", c);
                if (stack[depth - 1] == '{')
                    return syntax_error(x, p, "'%c' where a value must follow ':'", c);
                return syntax_error(x, p, "'%c' where a value must follow ',' (strict JSON has no trailing commas)",
                                    c);
            } else {
                describe_byte(c, got, sizeof got);
                return syntax_error(x, p, "expected a value (an object, a list, a string, a number, true, false or "
                                    "null), got %s", got);
            }
            state = S_AFTER;
            continue;
        case S_KEY_OR_CLOSE:
            if (c == '}') {
                depth--;
                p++;
                state = S_AFTER;
                continue;
            }
            /* fall through */
        case S_KEY:
            if (c == '"') {
                if (scan_string(x, &p)) return -1;
                state = S_COLON;
                continue;
            }
            if (c == '}') return syntax_error(x, p, "'}' where a member must follow ',' (strict JSON has no "
                                              "trailing commas)");
            describe_byte(c, got, sizeof got);
            return syntax_error(x, p, "expected a member name in double quotes, got %s", got);
        case S_COLON:
            if (c == ':') {
                p++;
                state = S_VALUE;
                continue;
            }
            describe_byte(c, got, sizeof got);
            return syntax_error(x, p, "expected ':' after a member name, got %s", got);
        default: /* S_AFTER inside a list or an object */
            if (c == ',') {
                p++;
                state = stack[depth - 1] == '{' ? S_KEY : S_VALUE;
                continue;
            }
            if (c == (stack[depth - 1] == '{' ? '}' : ']')) {
                depth--;
                p++;
                continue;
            }
            describe_byte(c, got, sizeof got);
            return syntax_error(x, p, stack[depth - 1] == '{' ? "expected ',' or '}' after an object member, got %s"
                                                              : "expected ',' or ']' after a list element, got %s",
                                got);
        }
    }
    if (p < x->n) {
        size_t line, col;
        text_position(x->s, p, &line, &col);
        set_err(x->err, x->err_size, "%s: invalid JSON: extra characters after the task object at line %zu, column "
                "%zu", x->name, line, col);
        return -1;
    }
    return 0;
}

int gw_arc_syntax_check(const char *json, size_t json_len, size_t start, const char *name, char *err, size_t err_size)
{
    const syntax x = {json, json_len, name, err, err_size};
    return syntax_pass(&x, start);
}
