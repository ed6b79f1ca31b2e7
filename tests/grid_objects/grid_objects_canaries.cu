/* SPDX-License-Identifier: MIT
 * Planted faults for grid_objects (test builds only; never part of kernels/). A canary executable is linked
 * with --wrap=grid_objects_launch (gw_wrap_launcher, tests/gw_tests.cmake), so every call its test makes lands
 * in __wrap_grid_objects_launch here, and __real_grid_objects_launch is the kernel library's. One fault per
 * build, chosen by a compile definition; each must be caught by the guard named in
 * tests/grid_objects/gpu_tests.cmake:
 *
 *   GRID_OBJECTS_CANARY_CPU_FALLBACK  copies the inputs back, runs grid_objects_ref on the host, uploads the
 *                                     result: right answer, no GPU code -> witness "no GPU code ran"
 *   GRID_OBJECTS_CANARY_NO_LAUNCH     returns cudaSuccess, does nothing -> poison and witness
 *   GRID_OBJECTS_CANARY_PARTIAL_GRID  labels only the first half of the grids, as a launch sized off by half
 *                                     would -> witness "partial execution" (and the poison in the rest)
 *   GRID_OBJECTS_CANARY_STALE_OUTPUT  first call real, later calls return cudaSuccess without launching; the
 *                                     tests re-poison before every call -> "poison"
 *   GRID_OBJECTS_CANARY_WRONG_LABEL   a correct launch, then in every grid with two objects or more, the cells
 *                                     of the last object get the first object's label: canonical-looking, every
 *                                     other guard passes -> only the exact comparison, "result differs"
 *   GRID_OBJECTS_CANARY_UNPADDED_OUTPUTS  the launch on labels and objects of buf_bytes entries, the size before
 *                                     the padding rule, with out_entries still claiming the padded size: right
 *                                     answer, but a 16-bit atomic's 4-byte word runs 2 bytes past an array ->
 *                                     only compute-sanitizer's memcheck, "Invalid __global__ read of size 4"
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "grid_objects.h"
#include "grid_objects_ref.h"

#define LAUNCH_ARGS                                                                                                    \
    const grid_objects_params *p, const uint8_t *d_in, const uint64_t *d_offset, const uint16_t *d_height,             \
        const uint16_t *d_width, const uint8_t *d_variants, uint16_t *d_labels, grid_objects_object *d_objects,        \
        uint32_t *d_n_objects, int16_t *d_bg, grid_objects_status_record *d_status, gw_witness *d_witness,             \
        cudaStream_t stream
#define REAL_CALL(params)                                                                                              \
    __real_grid_objects_launch(params, d_in, d_offset, d_height, d_width, d_variants, d_labels, d_objects,            \
                               d_n_objects, d_bg, d_status, d_witness, stream)

extern "C" cudaError_t __real_grid_objects_launch(LAUNCH_ARGS);
extern "C" cudaError_t __wrap_grid_objects_launch(LAUNCH_ARGS);

#if defined(GRID_OBJECTS_CANARY_CPU_FALLBACK)

/* A "GPU" function that computes on the CPU (docs/witness.md, failure mode 2): correct outputs, the status
 * as the device would set it, and no kernel, so the witness stays empty. */
extern "C" cudaError_t __wrap_grid_objects_launch(LAUNCH_ARGS)
{
    if (!p || p->n_grids == 0 || !d_in || !d_offset || !d_height || !d_width || !d_labels || !d_objects ||
        !d_n_objects || !d_bg || !d_status) /* host-visible rejections and empty batches: the real answer */
        return REAL_CALL(p);
    const size_t n = p->n_grids, buf = (size_t)p->buf_bytes, out = (size_t)grid_objects_out_entries(p->buf_bytes);
    cudaError_t err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) return err;
    uint8_t *in = (uint8_t *)malloc(buf ? buf : 1), *variants = d_variants ? (uint8_t *)malloc(n) : NULL;
    uint64_t *offset = (uint64_t *)malloc(n * sizeof *offset);
    uint16_t *h = (uint16_t *)malloc(n * 2), *w = (uint16_t *)malloc(n * 2);
    uint16_t *labels = (uint16_t *)malloc((out ? out : 1) * 2);
    grid_objects_object *objects = (grid_objects_object *)malloc((out ? out : 1) * sizeof *objects);
    uint32_t *n_objects = (uint32_t *)malloc(n * 4);
    int16_t *bg = (int16_t *)malloc(n * 2);
    err = cudaErrorMemoryAllocation;
    if (in && offset && h && w && labels && objects && n_objects && bg && (variants || !d_variants)) {
        err = cudaMemcpy(in, d_in, buf, cudaMemcpyDeviceToHost);
        /* keep what lies outside the grids as it is */
        if (!err) err = cudaMemcpy(labels, d_labels, out * 2, cudaMemcpyDeviceToHost);
        if (!err) err = cudaMemcpy(objects, d_objects, out * sizeof *objects, cudaMemcpyDeviceToHost);
        if (!err) err = cudaMemcpy(offset, d_offset, n * sizeof *offset, cudaMemcpyDeviceToHost);
        if (!err) err = cudaMemcpy(h, d_height, n * 2, cudaMemcpyDeviceToHost);
        if (!err) err = cudaMemcpy(w, d_width, n * 2, cudaMemcpyDeviceToHost);
        if (!err && variants) err = cudaMemcpy(variants, d_variants, n, cudaMemcpyDeviceToHost);
    }
    if (!err) {
        grid_objects_status_record rec = {GRID_OBJECTS_STATUS_NONE};
        const int s = grid_objects_ref(p, in, offset, h, w, variants, labels, objects, n_objects, bg);
        if (s == GRID_OBJECTS_OK) {
            err = cudaMemcpy(d_labels, labels, out * 2, cudaMemcpyHostToDevice);
            if (!err) err = cudaMemcpy(d_objects, objects, out * sizeof *objects, cudaMemcpyHostToDevice);
            if (!err) err = cudaMemcpy(d_n_objects, n_objects, n * 4, cudaMemcpyHostToDevice);
            if (!err) err = cudaMemcpy(d_bg, bg, n * 2, cudaMemcpyHostToDevice);
        } else {
            size_t index = 0;
            grid_objects_validate(p, in, offset, h, w, variants, d_labels, d_objects, d_n_objects, d_bg, &index);
            rec.packed = ((unsigned long long)index << 8) | (unsigned)s |
                         (s == GRID_OBJECTS_ERR_OVERLAP ? GRID_OBJECTS_STATUS_OVERLAP_BIT : 0ull);
        }
        if (!err) err = cudaMemcpy(d_status, &rec, sizeof rec, cudaMemcpyHostToDevice);
    }
    free(in), free(variants), free(offset), free(h), free(w), free(labels), free(objects), free(n_objects), free(bg);
    return err;
}

#elif defined(GRID_OBJECTS_CANARY_NO_LAUNCH)

extern "C" cudaError_t __wrap_grid_objects_launch(LAUNCH_ARGS)
{
    (void)p, (void)d_in, (void)d_offset, (void)d_height, (void)d_width, (void)d_variants, (void)d_labels;
    (void)d_objects, (void)d_n_objects, (void)d_bg, (void)d_status, (void)d_witness, (void)stream;
    return cudaSuccess;
}

#elif defined(GRID_OBJECTS_CANARY_PARTIAL_GRID)

extern "C" cudaError_t __wrap_grid_objects_launch(LAUNCH_ARGS)
{
    if (!p) return REAL_CALL(p);
    grid_objects_params half = *p;
    half.n_grids = p->n_grids / 2;
    return REAL_CALL(&half);
}

#elif defined(GRID_OBJECTS_CANARY_STALE_OUTPUT)

extern "C" cudaError_t __wrap_grid_objects_launch(LAUNCH_ARGS)
{
    static int calls; /* per test process: Criterion runs each test in its own */
    if (calls++ == 0) return REAL_CALL(p);
    return cudaSuccess;
}

#elif defined(GRID_OBJECTS_CANARY_WRONG_LABEL)

/* One thread walks the grids after the real labelling: the last object's cells take the first object's label. */
__global__ void wrong_label_kernel(size_t n, const uint64_t *offset, const uint16_t *height, const uint16_t *width,
                                   const uint32_t *n_objects, const grid_objects_object *objects, uint16_t *labels)
{
    for (size_t k = 0; k < n; k++) {
        /* a grid left unlabelled (rejected batch, skipped grid) still holds the poison: leave it alone */
        if (n_objects[k] < 2u || n_objects[k] > (unsigned)height[k] * width[k]) continue;
        const unsigned first = objects[offset[k]].first_cell, last = objects[offset[k] + n_objects[k] - 1].first_cell;
        for (unsigned i = 0; i < (unsigned)height[k] * width[k]; i++)
            if (labels[offset[k] + i] == last) labels[offset[k] + i] = (uint16_t)first;
    }
}

extern "C" cudaError_t __wrap_grid_objects_launch(LAUNCH_ARGS)
{
    cudaError_t err = REAL_CALL(p);
    if (err != cudaSuccess || !p || p->n_grids == 0) return err;
    wrong_label_kernel<<<1, 1, 0, stream>>>(p->n_grids, d_offset, d_height, d_width, d_n_objects, d_objects, d_labels);
    return cudaGetLastError();
}

#elif defined(GRID_OBJECTS_CANARY_UNPADDED_OUTPUTS)

/* Each call copies the caller's labels and objects into arrays of buf_bytes entries, runs the real launch on
 * them and copies them back, synchronously: the results are right, only the accesses past the arrays show. */
extern "C" cudaError_t __wrap_grid_objects_launch(LAUNCH_ARGS)
{
    if (!p || p->n_grids == 0 || !d_labels || !d_objects) return REAL_CALL(p);
    const size_t labels_bytes = (size_t)p->buf_bytes * sizeof *d_labels;
    const size_t objects_bytes = (size_t)p->buf_bytes * sizeof *d_objects;
    uint16_t *labels = NULL;
    grid_objects_object *objects = NULL;
    cudaError_t err = cudaMalloc((void **)&labels, labels_bytes);
    if (!err) err = cudaMalloc((void **)&objects, objects_bytes);
    if (!err) err = cudaMemcpyAsync(labels, d_labels, labels_bytes, cudaMemcpyDeviceToDevice, stream);
    if (!err) err = cudaMemcpyAsync(objects, d_objects, objects_bytes, cudaMemcpyDeviceToDevice, stream);
    if (!err)
        err = __real_grid_objects_launch(p, d_in, d_offset, d_height, d_width, d_variants, labels, objects, d_n_objects,
                                         d_bg, d_status, d_witness, stream);
    if (!err) err = cudaMemcpyAsync(d_labels, labels, labels_bytes, cudaMemcpyDeviceToDevice, stream);
    if (!err) err = cudaMemcpyAsync(d_objects, objects, objects_bytes, cudaMemcpyDeviceToDevice, stream);
    if (!err) err = cudaStreamSynchronize(stream);
    cudaFree(labels), cudaFree(objects);
    return err;
}

#else
#error "define one of GRID_OBJECTS_CANARY_CPU_FALLBACK, _NO_LAUNCH, _PARTIAL_GRID, _STALE_OUTPUT, _WRONG_LABEL, _UNPADDED_OUTPUTS"
#endif
