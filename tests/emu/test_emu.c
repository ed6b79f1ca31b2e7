/* SPDX-License-Identifier: MIT
 * The emulated device itself (lib/emu, docs/emu.md), on the probe kernels of emu_probe_kernels.cu: barriers
 * are barriers, a warp's shuffles and votes give what CUDA defines, CUB's block primitives agree with a serial
 * fold and scan, the device-code errors that hang or corrupt a GPU are named (kernel, block, warp, call) and
 * end the launch with a sticky cudaErrorLaunchFailure, the seed decides the interleaving of atomics and
 * nothing else, and the runtime keeps CUDA's rules (deferred work, copy directions, launch limits).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "emu_probe_kernels.h"
#include "gw_emu.h"

#define CHECK(call)                                                                                            \
    do {                                                                                                       \
        const cudaError_t e_ = (call);                                                                         \
        cr_assert(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorName(e_));                                   \
    } while (0)

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    CHECK(cudaMalloc(&p, bytes));
    return p;
}

/* Every test starts on a healthy device: a failed launch is sticky until cudaDeviceReset. */
static void reset(void) { cudaDeviceReset(); }
TestSuite(emu, .init = reset, .fini = reset);

Test(emu, a_barrier_orders_the_writes_of_every_thread_before_the_reads_of_any)
{
    enum { BLOCKS = 3, THREADS = 256 };
    int *d = dev_alloc(BLOCKS * THREADS * sizeof(int)), h[BLOCKS * THREADS];
    CHECK(emu_neighbour(d, BLOCKS, THREADS, 0));
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int b = 0; b < BLOCKS; b++)
        for (int t = 0; t < THREADS; t++)
            cr_assert_eq(h[b * THREADS + t], ((t + 1) % THREADS) * 3 + b, "block %d thread %d", b, t);
    CHECK(cudaFree(d));
}

Test(emu, syncthreads_votes_count_or_and_as_cuda_defines_them)
{
    int *d = dev_alloc(3 * sizeof(int)), h[3];
    CHECK(emu_votes(d, 100));
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    cr_assert_eq(h[0], 34); /* t % 3 == 0 for t < 100 */
    cr_assert_eq(h[1], 1);
    cr_assert_eq(h[2], 1);
    CHECK(cudaFree(d));
}

Test(emu, warp_shuffles_and_ballots_follow_the_lanes)
{
    enum { THREADS = 64 };
    int *d = dev_alloc(4 * THREADS * sizeof(int)), h[4 * THREADS];
    CHECK(emu_warp(d, THREADS));
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int t = 0; t < THREADS; t++) {
        const int lane = t % 32, base = t - lane;
        cr_assert_eq(h[4 * t], 32 * base + 31 * 32 / 2, "thread %d: butterfly sum %d", t, h[4 * t]);
        cr_assert_eq(h[4 * t + 1], lane ? t - 1 : t, "thread %d: shfl_up", t); /* lane 0 keeps its own */
        cr_assert_eq(h[4 * t + 2], lane < 31 ? t + 1 : t, "thread %d: shfl_down", t);
        cr_assert_eq((unsigned)h[4 * t + 3], 0xAAAAAAAAu, "thread %d: ballot", t);
    }
    CHECK(cudaFree(d));
}

/* The launch succeeds when enqueued; the device error comes at the synchronisation, sticky, with words. */
static void expect_device_error(const char *words)
{
    cr_assert_eq(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
    cr_assert_eq(cudaGetLastError(), cudaErrorLaunchFailure, "a failed launch is sticky");
    cr_assert_eq(cudaGetLastError(), cudaErrorLaunchFailure, "and stays so until cudaDeviceReset");
    const char *m = gw_emu_last_device_error();
    cr_assert(strstr(m, words), "the message lacks \"%s\": %s", words, m);
    CHECK(cudaDeviceReset());
    cr_assert_str_empty(gw_emu_last_device_error());
}

Test(emu, a_barrier_that_half_the_block_skips_is_named_not_a_hang)
{
    int *d = dev_alloc(64 * sizeof(int));
    CHECK(emu_divergent_barrier(d));
    expect_device_error("every thread must reach the same barrier");
}

Test(emu, a_lane_outside_its_own_mask_is_named)
{
    int *d = dev_alloc(32 * sizeof(int));
    CHECK(emu_foreign_mask(d));
    expect_device_error("with mask 0xfffffffe, which does not name the calling lane 0");
}

Test(emu, lanes_that_return_instead_of_joining_a_shuffle_are_named)
{
    int *d = dev_alloc(32 * sizeof(int));
    CHECK(emu_missing_lane(d));
    expect_device_error("__shfl_xor_sync");
}

Test(emu, cub_block_reduce_and_scans_agree_with_a_serial_fold_and_scan)
{
    enum { THREADS = 128, ITEMS = 4 };
    double values[THREADS], sum_serial = 0.0, sum = 0.0;
    int items[THREADS * ITEMS], scan[THREADS * ITEMS], excl[THREADS], aggregate[THREADS];
    srand(7);
    for (int i = 0; i < THREADS; i++) values[i] = (double)(rand() % 1000) / 8.0, sum_serial += values[i];
    for (int i = 0; i < THREADS * ITEMS; i++) items[i] = rand() % 100000 - 50000;
    double *d_values = dev_alloc(sizeof values), *d_sum = dev_alloc(sizeof(double));
    int *d_items = dev_alloc(sizeof items), *d_scan = dev_alloc(sizeof scan), *d_excl = dev_alloc(sizeof excl);
    int *d_aggregate = dev_alloc(sizeof aggregate);
    CHECK(cudaMemcpy(d_values, values, sizeof values, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_items, items, sizeof items, cudaMemcpyHostToDevice));
    CHECK(emu_cub(d_values, d_items, d_sum, d_scan, d_excl, d_aggregate, THREADS));
    CHECK(cudaMemcpy(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(scan, d_scan, sizeof scan, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(excl, d_excl, sizeof excl, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(aggregate, d_aggregate, sizeof aggregate, cudaMemcpyDeviceToHost));
    cr_assert_eq(sum, sum_serial, "BlockReduce::Sum %g, serial %g", sum, sum_serial); /* eighths: exact */
    int running = items[0], before = 0, total = 0;
    for (int t = 0; t < THREADS; t++) total += items[ITEMS * t];
    for (int i = 0; i < THREADS * ITEMS; i++) {
        running = items[i] > running ? items[i] : running;
        cr_assert_eq(scan[i], running, "InclusiveScan(max) item %d: %d, serial %d", i, scan[i], running);
    }
    for (int t = 0; t < THREADS; t++) {
        cr_assert_eq(excl[t], before, "ExclusiveSum thread %d", t);
        cr_assert_eq(aggregate[t], total, "ExclusiveSum's aggregate in thread %d", t);
        before += items[ITEMS * t];
    }
}

Test(emu, a_cub_primitive_sized_for_another_block_is_named)
{
    int *d = dev_alloc(1024 * sizeof(int));
    CHECK(emu_cub((const double *)d, d, (double *)d, d, d, d, 64));
    expect_device_error("for 128 threads in a block of 64 threads");
}

/* The tickets of 4 blocks of 64 threads: the order the atomics happened in. */
static void tickets(unsigned *order)
{
    unsigned *d_counter = dev_alloc(sizeof(unsigned)), *d_order = dev_alloc(256 * sizeof(unsigned));
    unsigned short *d_cas = dev_alloc(2 * sizeof(unsigned short)), cas = 0;
    CHECK(cudaMemset(d_counter, 0, sizeof(unsigned)));
    CHECK(cudaMemset(d_cas, 0, 2 * sizeof(unsigned short)));
    CHECK(emu_tickets(d_counter, d_order, d_cas, 4, 64));
    CHECK(cudaMemcpy(order, d_order, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&cas, d_cas, sizeof cas, cudaMemcpyDeviceToHost));
    cr_assert_eq(cas, 256, "the 16-bit compare-and-swap loop counted %u of 256", cas);
    unsigned seen[256] = {0};
    for (int i = 0; i < 256; i++) seen[order[i]]++;
    for (int i = 0; i < 256; i++) cr_assert_eq(seen[i], 1, "thread %d took %u tickets", i, seen[i]);
}

Test(emu, the_seed_draws_the_interleaving_of_atomics_and_repeats_it)
{
    unsigned a[256], b[256], c[256];
    setenv("GW_EMU_SEED", "11", 1);
    tickets(a);
    CHECK(cudaDeviceReset()); /* the launch count, which the seed mixes in, starts again */
    tickets(b);
    CHECK(cudaDeviceReset());
    setenv("GW_EMU_SEED", "12", 1);
    tickets(c);
    cr_assert(!memcmp(a, b, sizeof a), "the same seed gave two interleavings");
    cr_assert(memcmp(a, c, sizeof a), "seeds 11 and 12 gave the same interleaving");
    int in_order = 1;
    for (int i = 0; i < 256; i++) in_order &= a[i] == (unsigned)i;
    cr_assert(!in_order, "seed 11 ran the atomics in program order: no interleaving at all");
}

Test(emu, work_runs_when_the_host_synchronises_not_when_it_is_enqueued)
{
    enum { THREADS = 64 };
    int *d = dev_alloc(THREADS * sizeof(int)), *h = NULL;
    CHECK(cudaMallocHost((void **)&h, THREADS * sizeof(int)));
    for (int i = 0; i < THREADS; i++) h[i] = -7;
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(emu_neighbour(d, 1, THREADS, s));
    CHECK(cudaMemcpyAsync(h, d, THREADS * sizeof(int), cudaMemcpyDeviceToHost, s));
    cr_assert_eq(h[0], -7, "the host read the result before synchronising and found it there");
    CHECK(cudaStreamSynchronize(s));
    cr_assert_eq(h[0], 3, "after the synchronisation: %d", h[0]);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(h));
    CHECK(cudaFree(d));
}

Test(emu, copies_are_checked_for_their_direction_and_their_allocation)
{
    char host[64] = {0};
    char *d = dev_alloc(32);
    cr_assert_eq(cudaMemcpy(d, host, 64, cudaMemcpyHostToDevice), cudaErrorInvalidValue, "64 bytes into 32");
    cr_assert_eq(cudaMemcpy(host, d, 16, cudaMemcpyHostToDevice), cudaErrorInvalidValue, "the kind says HtoD");
    cr_assert_eq(cudaPeekAtLastError(), cudaErrorInvalidValue, "a failed call is the last error");
    cr_assert_eq(cudaGetLastError(), cudaErrorInvalidValue);
    cr_assert_eq(cudaGetLastError(), cudaSuccess, "cudaGetLastError clears a call's error");
    CHECK(cudaMemcpy(d, host, 32, cudaMemcpyHostToDevice));
    cr_assert_eq(cudaFree(host), cudaErrorInvalidValue, "freeing what cudaMalloc did not give");
    void *huge = NULL;
    cr_assert_eq(cudaMalloc(&huge, (size_t)1 << 62), cudaErrorMemoryAllocation);
    cr_assert_eq(cudaPeekAtLastError(), cudaErrorMemoryAllocation, "kept pending, as gw_plant_pending_error needs");
    CHECK(cudaFree(d));
}

Test(emu, launch_limits_and_dynamic_shared_memory_follow_cuda)
{
    double *d = dev_alloc(8192 * sizeof(double)), h[8192];
    cr_assert_eq(emu_neighbour((int *)d, 1, 2048, 0), cudaErrorInvalidConfiguration, "2048 threads per block");
    cr_assert_eq(emu_neighbour((int *)d, 0, 32, 0), cudaErrorInvalidConfiguration, "an empty grid");
    cr_assert_eq(emu_dynamic_shared(d, 8192, 8192 * sizeof(double)), cudaErrorInvalidValue,
                 "64 KiB of dynamic shared memory without the attribute");
    CHECK(emu_allow_dynamic_shared(8192 * sizeof(double)));
    CHECK(emu_dynamic_shared(d, 8192, 8192 * sizeof(double)));
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 8192; i++) cr_assert_eq(h[i], 0.5 * (8191 - i), "element %d", i);
    CHECK(cudaFree(d));
}

Test(emu, the_device_says_it_is_emulated)
{
    struct cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    cr_assert(strstr(prop.name, "emulated") && strstr(prop.name, "not a GPU"), "%s", prop.name);
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    cr_assert_eq(count, 1);
}
