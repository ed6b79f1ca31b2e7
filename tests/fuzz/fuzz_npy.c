/* SPDX-License-Identifier: MIT
 * gw_npy_read on arbitrary bytes as a file (through fuzz_memfile: the reader takes only a path, which it
 * opens with gw_infile_open). Read twice:
 * as anything (any dtype, rank 1..GW_NPY_MAX_NDIM) and as the CLI reads a stack (uint16, rank 3 or 4); the
 * second must accept exactly the files of the first that are uint16 of rank 3 or 4, with the same array.
 * An accepted file is exactly preamble + header + count elements and the array holds those bytes (swapped
 * for a '>' descr); a rejected one leaves the array zeroed and a message naming the file.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "fuzz_memfile.h"
#include "gw_npy.h"

static int is_zeroed(const gw_npy_array *a)
{
    return a->data == NULL && a->ndim == 0 && a->count == 0;
}

/* The element bytes equal the file's, as they are or with each element reversed. */
static int same_elements(const uint8_t *file, const uint8_t *mem, size_t count, size_t item)
{
    if (memcmp(file, mem, count * item) == 0) return 1;
    for (size_t i = 0; i < count; i++)
        for (size_t b = 0; b < item; b++)
            if (file[i * item + b] != mem[i * item + item - 1 - b]) return 0;
    return 1;
}

static void check_accepted(const gw_npy_array *a, const uint8_t *data, size_t size)
{
    const size_t item = gw_npy_dtype_size(a->dtype);
    FUZZ_REQUIRE(item != 0, "dtype %d", (int)a->dtype);
    FUZZ_REQUIRE(a->ndim >= 1 && a->ndim <= GW_NPY_MAX_NDIM, "ndim %d", a->ndim);
    size_t count = 1;
    for (int i = 0; i < a->ndim; i++) {
        FUZZ_REQUIRE(a->shape[i] >= 1, "dimension %d is %lld", i, (long long)a->shape[i]);
        count *= (size_t)a->shape[i];
    }
    FUZZ_REQUIRE(count == a->count && a->data, "count %zu, shape product %zu", a->count, count);
    /* Accepted means the magic and a version byte were there. */
    const size_t pre = data[6] == 1 ? 10 : 12;
    size_t header = (size_t)data[8] | (size_t)data[9] << 8;
    if (pre == 12) header |= (size_t)data[10] << 16 | (size_t)data[11] << 24;
    FUZZ_REQUIRE(pre + header + count * item == size, "file of %zu bytes, header %zu + %zu data bytes", size,
                 pre + header, count * item);
    FUZZ_REQUIRE(same_elements(data + pre + header, a->data, count, item), "the array is not the file's data");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    char err[512] = "";
    gw_npy_array any, stack;
    const int rc_any = gw_npy_read(path, GW_NPY_ANY, 1, GW_NPY_MAX_NDIM, NULL, &any, err, sizeof err);
    if (rc_any == 0) {
        check_accepted(&any, data, size);
    } else {
        FUZZ_REQUIRE(rc_any == -1 && is_zeroed(&any), "rc %d, array not zeroed", rc_any);
        FUZZ_REQUIRE(strncmp(err, path, strlen(path)) == 0, "the message does not name the file: '%s'", err);
    }
    const int rc_stack = gw_npy_read(path, GW_NPY_U2, 3, 4, "[Z][Y][X] or [N][Z][Y][X]", &stack, err, sizeof err);
    const int stack_expected = rc_any == 0 && any.dtype == GW_NPY_U2 && any.ndim >= 3 && any.ndim <= 4;
    FUZZ_REQUIRE((rc_stack == 0) == stack_expected, "uint16 rank 3..4 read gave %d, the any-read %d (dtype %d, "
                 "rank %d): %s", rc_stack, rc_any, (int)any.dtype, any.ndim, err);
    if (rc_stack == 0) {
        FUZZ_REQUIRE(stack.count == any.count && memcmp(stack.shape, any.shape, sizeof stack.shape) == 0 &&
                         memcmp(stack.data, any.data, stack.count * 2) == 0,
                     "the two reads of one file differ");
        gw_npy_free(&stack);
    } else {
        FUZZ_REQUIRE(is_zeroed(&stack), "array not zeroed");
    }
    gw_npy_free(&any);
    return 0;
}
