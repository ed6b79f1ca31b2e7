/* SPDX-License-Identifier: MIT
 * focus_stack_check against an independent reading of its rules (focus_stack.h: the first failing code in
 * enum order, the size in 128 bits), then focus_stack_ref. Parameters are decoded from the input, each as a
 * small value (-8..231) or, after a marker byte, any int32; one of in, idx, ff may be NULL. A rejected call
 * must return the same code from focus_stack_ref and leave its (small, poisoned) buffers untouched. An
 * accepted call with at most max_voxels voxels runs on exact-size buffers filled from the input: every idx
 * is a slice index, ff is that slice's pixel, and best is the largest focus value, taken at idx.
 */
#include <stdlib.h>
#include <string.h>

#include "focus_stack_ref.h"
#include "fuzz_bytes.h"
#include "fuzz_check.h"

enum { max_voxels = 2048, dummy_bytes = 64, poison = 0x5A };

typedef __int128 i128;

static int take_param(fuzz_bytes *b)
{
    const unsigned v = (unsigned)fuzz_take(b, 1);
    return v < 0xF0 ? (int)v - 8 : (int)(int32_t)(uint32_t)fuzz_take(b, 4);
}

static int expected_status(focus_stack_params p, const void *in, const void *idx, const void *ff)
{
    if (!in || !idx || !ff) return FOCUS_STACK_ERR_NULL;
    if (p.n < 1 || p.z < 1 || p.y < 1 || p.x < 1 || p.z > 255) return FOCUS_STACK_ERR_DIM;
    if (p.ksize != 3 && p.ksize != 5 && p.ksize != 7) return FOCUS_STACK_ERR_KSIZE;
    if (!(p.window == 0 || p.window == 1 || (p.window >= 3 && p.window <= 7567 && p.window % 2 == 1)))
        return FOCUS_STACK_ERR_WINDOW;
    if (p.measure < 0 || p.measure > 1 || p.border < 0 || p.border > 2) return FOCUS_STACK_ERR_ENUM;
    const i128 bytes = (i128)p.n * p.z * p.y * p.x * 4;
    const i128 limit = SIZE_MAX < (uint64_t)INT64_MAX ? (i128)SIZE_MAX : (i128)INT64_MAX;
    return bytes > limit ? FOCUS_STACK_ERR_OVERFLOW : FOCUS_STACK_OK;
}

static void *alloc_or_die(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    FUZZ_REQUIRE(p != NULL, "out of memory");
    return p;
}

/* A rejected call: the reference must say the same and write nothing. */
static void check_rejected(focus_stack_params p, int want, int null_choice)
{
    uint8_t *buf[5];
    for (int i = 0; i < 5; i++) {
        buf[i] = alloc_or_die(dummy_bytes);
        memset(buf[i], poison, dummy_bytes);
    }
    const int rc = focus_stack_ref(&p, null_choice == 0 ? NULL : (uint16_t *)buf[0], null_choice == 1 ? NULL : buf[1],
                                   null_choice == 2 ? NULL : (uint16_t *)buf[2], (float *)buf[3], (float *)buf[4], 1);
    FUZZ_REQUIRE(rc == want, "focus_stack_ref returned %d for a call focus_stack_check rejects with %d", rc, want);
    for (int i = 0; i < 5; i++) {
        for (int k = 0; k < dummy_bytes; k++)
            FUZZ_REQUIRE(buf[i][k] == poison, "a rejected call wrote output %d byte %d", i, k);
        free(buf[i]);
    }
}

static void run_accepted(focus_stack_params p, fuzz_bytes *rest, int with_best, int with_focus)
{
    const size_t plane = (size_t)p.y * p.x, pixels = (size_t)p.n * plane, voxels = pixels * (size_t)p.z;
    uint16_t *in = alloc_or_die(voxels * 2);
    for (size_t i = 0; i < voxels; i++) in[i] = (uint16_t)fuzz_take(rest, 2);
    uint8_t *idx = alloc_or_die(pixels);
    uint16_t *ff = alloc_or_die(pixels * 2);
    float *best = with_best ? alloc_or_die(pixels * 4) : NULL;
    float *focus = with_focus ? alloc_or_die(voxels * 4) : NULL;
    const int rc = focus_stack_ref(&p, in, idx, ff, best, focus, 1);
    FUZZ_REQUIRE(rc == FOCUS_STACK_OK, "focus_stack_ref returned %d for accepted parameters", rc);
    for (size_t i = 0; i < pixels; i++) {
        const size_t n = i / plane, pix = i % plane;
        FUZZ_REQUIRE(idx[i] < p.z, "pixel %zu: idx %u, z %d", i, (unsigned)idx[i], p.z);
        FUZZ_REQUIRE(ff[i] == in[(n * (size_t)p.z + idx[i]) * plane + pix], "pixel %zu: ff is not slice idx", i);
        if (!focus) continue;
        const float *f = focus + n * (size_t)p.z * plane + pix;
        for (int z = 0; z < p.z; z++)
            FUZZ_REQUIRE(f[(size_t)z * plane] <= f[(size_t)idx[i] * plane], "pixel %zu: slice %d scores above idx", i,
                         z);
        if (best)
            FUZZ_REQUIRE(memcmp(&best[i], &f[(size_t)idx[i] * plane], 4) == 0, "pixel %zu: best is not focus[idx]", i);
    }
    free(in);
    free(idx);
    free(ff);
    free(best);
    free(focus);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_bytes b = {data, size};
    const unsigned control = (unsigned)fuzz_take(&b, 1);
    const int null_choice = (int)(control % 8); /* 0..2 name in, idx or ff; 3..7 none */
    const int with_best = (control >> 3) & 1, with_focus = (control >> 4) & 1;
    focus_stack_params p;
    p.n = take_param(&b);
    p.z = take_param(&b);
    p.y = take_param(&b);
    p.x = take_param(&b);
    p.ksize = take_param(&b);
    p.measure = take_param(&b);
    p.border = take_param(&b);
    p.window = take_param(&b);

    static const int dummy = 0;
    const void *ptr[3] = {&dummy, &dummy, &dummy};
    if (null_choice < 3) ptr[null_choice] = NULL;
    const int want = expected_status(p, ptr[0], ptr[1], ptr[2]);
    const int got = focus_stack_check(&p, ptr[0], ptr[1], ptr[2]);
    FUZZ_REQUIRE(got == want, "focus_stack_check: %d, expected %d (n %d z %d y %d x %d ksize %d measure %d border %d "
                 "window %d)", got, want, p.n, p.z, p.y, p.x, p.ksize, p.measure, p.border, p.window);
    if (want != FOCUS_STACK_OK)
        check_rejected(p, want, null_choice);
    else if ((i128)p.n * p.z * p.y * p.x <= max_voxels)
        run_accepted(p, &b, with_best, with_focus);
    return 0;
}
