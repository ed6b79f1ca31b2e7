/* SPDX-License-Identifier: MIT
 * Host-side focus_stack outputs for the CLI: allocation, poison, byte-exact comparison with the reference
 * (floats as bits, docs/focus_stack.md, "Test groups", item 5) and the checks that need no reference.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "focus_stack_host.h"

static size_t pixels(focus_stack_params p)
{
    return (size_t)p.n * (size_t)p.y * (size_t)p.x;
}

int gw_focus_out_alloc(gw_focus_out *o, focus_stack_params p, int with_best, int with_focus)
{
    memset(o, 0, sizeof *o);
    const size_t px = pixels(p);
    o->idx = malloc(px);
    o->ff = malloc(px * sizeof *o->ff);
    if (with_best) o->best = malloc(px * sizeof *o->best);
    if (with_focus) o->focus = malloc(px * (size_t)p.z * sizeof *o->focus);
    if (!o->idx || !o->ff || (with_best && !o->best) || (with_focus && !o->focus)) {
        gw_focus_out_free(o);
        return -1;
    }
    return 0;
}

void gw_focus_out_free(gw_focus_out *o)
{
    free(o->idx);
    free(o->ff);
    free(o->best);
    free(o->focus);
    memset(o, 0, sizeof *o);
}

void gw_focus_out_poison(gw_focus_out *o, focus_stack_params p, uint8_t byte)
{
    const size_t px = pixels(p);
    memset(o->idx, byte, px);
    memset(o->ff, byte, px * sizeof *o->ff);
    if (o->best) memset(o->best, byte, px * sizeof *o->best);
    if (o->focus) memset(o->focus, byte, px * (size_t)p.z * sizeof *o->focus);
}

static void append(char *msg, size_t size, const char *fmt, ...)
{
    const size_t used = strlen(msg);
    if (used + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + used, size - used, fmt, ap);
    va_end(ap);
}

/* "(n=0, y=3, x=7)" or with z for per-slice arrays. */
static void place_text(size_t i, focus_stack_params p, int per_slice, char *buf, size_t size)
{
    const size_t x = i % (size_t)p.x, y = i / (size_t)p.x % (size_t)p.y;
    if (per_slice) {
        const size_t z = i / ((size_t)p.x * p.y) % (size_t)p.z, n = i / ((size_t)p.x * p.y * p.z);
        snprintf(buf, size, "(n=%zu, z=%zu, y=%zu, x=%zu)", n, z, y, x);
    } else {
        snprintf(buf, size, "(n=%zu, y=%zu, x=%zu)", i / ((size_t)p.x * p.y), y, x);
    }
}

/* Compares one array; appends "name: k of m differ, first at ...: got ..., reference ..." when it differs. */
static size_t compare_array(const char *name, const void *got, const void *want, size_t count, size_t item,
                            focus_stack_params p, int per_slice, char *msg, size_t msg_size)
{
    if (memcmp(got, want, count * item) == 0) return 0;
    size_t diffs = 0, first = 0;
    const uint8_t *g = got, *w = want;
    for (size_t i = 0; i < count; i++)
        if (memcmp(g + i * item, w + i * item, item) != 0 && diffs++ == 0) first = i;
    char place[96], a[64], b[64];
    place_text(first, p, per_slice, place, sizeof place);
    if (item == 1) {
        snprintf(a, sizeof a, "%u", (unsigned)g[first]);
        snprintf(b, sizeof b, "%u", (unsigned)w[first]);
    } else if (item == 2) {
        uint16_t u, v;
        memcpy(&u, g + first * 2, 2);
        memcpy(&v, w + first * 2, 2);
        snprintf(a, sizeof a, "%u", (unsigned)u);
        snprintf(b, sizeof b, "%u", (unsigned)v);
    } else {
        float u, v;
        uint32_t ub, vb;
        memcpy(&u, g + first * 4, 4);
        memcpy(&v, w + first * 4, 4);
        memcpy(&ub, &u, 4);
        memcpy(&vb, &v, 4);
        snprintf(a, sizeof a, "%.9g (0x%08x)", (double)u, (unsigned)ub);
        snprintf(b, sizeof b, "%.9g (0x%08x)", (double)v, (unsigned)vb);
    }
    append(msg, msg_size, "%s%s: %zu of %zu differ, first at %s: got %s, reference %s", msg[0] ? "; " : "", name,
           diffs, count, place, a, b);
    return diffs;
}

int gw_focus_out_compare(const gw_focus_out *got, const gw_focus_out *want, focus_stack_params p, char *msg,
                         size_t msg_size)
{
    msg[0] = '\0';
    const size_t px = pixels(p);
    size_t diffs = compare_array("idx", got->idx, want->idx, px, 1, p, 0, msg, msg_size);
    diffs += compare_array("ff", got->ff, want->ff, px, 2, p, 0, msg, msg_size);
    if (got->best) diffs += compare_array("best", got->best, want->best, px, 4, p, 0, msg, msg_size);
    if (got->focus) diffs += compare_array("focus", got->focus, want->focus, px * (size_t)p.z, 4, p, 1, msg, msg_size);
    return diffs != 0;
}

int gw_focus_out_consistent(const gw_focus_out *o, const uint16_t *in, focus_stack_params p, char *msg,
                            size_t msg_size)
{
    msg[0] = '\0';
    const size_t px = pixels(p), plane = (size_t)p.y * p.x;
    size_t bad = 0;
    for (size_t i = 0; i < px; i++) {
        const size_t n = i / plane, at = i % plane;
        char place[96];
        const unsigned z = o->idx[i];
        if (z >= (unsigned)p.z) {
            if (bad++ == 0) {
                place_text(i, p, 0, place, sizeof place);
                snprintf(msg, msg_size, "idx %u at %s is not a slice (Z = %d)", z, place, p.z);
            }
            continue;
        }
        const size_t src = (n * (size_t)p.z + z) * plane + at;
        if (o->ff[i] != in[src] && bad++ == 0) {
            place_text(i, p, 0, place, sizeof place);
            snprintf(msg, msg_size, "ff at %s is %u, but the input at the chosen slice %u holds %u", place,
                     (unsigned)o->ff[i], z, (unsigned)in[src]);
        }
        if (o->best && o->focus && memcmp(&o->best[i], &o->focus[src], sizeof(float)) != 0 && bad++ == 0) {
            place_text(i, p, 0, place, sizeof place);
            snprintf(msg, msg_size, "best at %s is %.9g, but focus at the chosen slice %u is %.9g", place,
                     (double)o->best[i], z, (double)o->focus[src]);
        }
    }
    if (bad) append(msg, msg_size, " (%zu violation(s) in all)", bad);
    return bad != 0;
}

void gw_focus_params_text(focus_stack_params p, char *buf, size_t size)
{
    static const char *const borders[3] = {"zero", "replicate", "reflect101"};
    const char *measure = p.measure == FOCUS_STACK_LAP_ABS ? "lap" : "log";
    const char *border = p.border >= 0 && p.border < 3 ? borders[p.border] : "?";
    if (p.window >= 3)
        snprintf(buf, size, "ksize %d, %s, %s border, window %d", p.ksize, measure, border, p.window);
    else
        snprintf(buf, size, "ksize %d, %s, %s border, no window", p.ksize, measure, border);
}
