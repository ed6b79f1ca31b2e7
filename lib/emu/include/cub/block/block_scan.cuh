/* SPDX-License-Identifier: MIT
 * cub::BlockScan on the emulated device (docs/emu.md, "CUB"): CUB's interface, for the calls gpuwitness'
 * kernels make, with the semantics CUB documents: every thread writes its value into TempStorage, a barrier,
 * then each folds the values of threads 0..its own in thread order (an inclusive scan; the exclusive sum
 * starts from 0 and leaves its own out). The block aggregate goes to every thread, as CUB gives it. Like CUB,
 * no barrier after itself: reusing TempStorage needs the kernel's own __syncthreads. Tested against a serial
 * scan (tests/emu/test_emu_cub.cpp).
 */
#ifndef GW_EMU_CUB_BLOCK_SCAN_CUH
#define GW_EMU_CUB_BLOCK_SCAN_CUH

#include "gw_emu.h"

namespace cub {

template <typename T, int BLOCK_DIM_X, int ALGORITHM = 0, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockScan {
    static constexpr int BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;

  public:
    struct TempStorage {
        T values[BLOCK_THREADS];
    };

    explicit BlockScan(TempStorage &storage) : storage_(storage) {}

    template <typename Op> void InclusiveScan(T input, T &output, Op op)
    {
        T aggregate;
        scan(input, output, aggregate, op, false, "cub::BlockScan::InclusiveScan");
    }
    template <typename Op> void InclusiveScan(T input, T &output, Op op, T &aggregate)
    {
        scan(input, output, aggregate, op, false, "cub::BlockScan::InclusiveScan");
    }
    void InclusiveSum(T input, T &output)
    {
        T aggregate;
        scan(input, output, aggregate, plus, false, "cub::BlockScan::InclusiveSum");
    }
    void ExclusiveSum(T input, T &output)
    {
        T aggregate;
        scan(input, output, aggregate, plus, true, "cub::BlockScan::ExclusiveSum");
    }
    void ExclusiveSum(T input, T &output, T &aggregate)
    {
        scan(input, output, aggregate, plus, true, "cub::BlockScan::ExclusiveSum");
    }
    /* ITEMS consecutive items per thread, in thread order: each thread's items scanned, then offset by the
     * scan of the threads before it. */
    template <int ITEMS, typename Op> void InclusiveScan(T (&input)[ITEMS], T (&output)[ITEMS], Op op)
    {
        T local[ITEMS];
        local[0] = input[0];
        for (int i = 1; i < ITEMS; i++) local[i] = op(local[i - 1], input[i]);
        T before, aggregate;
        scan(local[ITEMS - 1], before, aggregate, op, false, "cub::BlockScan::InclusiveScan");
        const unsigned tid = gw_emu_block_thread(BLOCK_THREADS, "cub::BlockScan::InclusiveScan");
        /* before is this thread's inclusive prefix; the items of the threads before it are their fold */
        T prior = storage_.values[0];
        for (unsigned t = 1; t < tid; t++) prior = op(prior, storage_.values[t]);
        for (int i = 0; i < ITEMS; i++) output[i] = tid ? op(prior, local[i]) : local[i];
        (void)before;
    }

  private:
    static T plus(const T &a, const T &b) { return a + b; }

    template <typename Op> void scan(T input, T &output, T &aggregate, Op op, bool exclusive_sum, const char *who)
    {
        const unsigned tid = gw_emu_block_thread(BLOCK_THREADS, who);
        storage_.values[tid] = input;
        (void)gw_emu_barrier(GW_EMU_BAR_SYNC, 0, who, __FILE__, __LINE__);
        T running = exclusive_sum ? T() : storage_.values[0];
        for (unsigned i = exclusive_sum ? 0 : 1; i < (exclusive_sum ? tid : tid + 1); i++)
            running = op(running, storage_.values[i]);
        output = running;
        T all = storage_.values[0];
        for (int i = 1; i < BLOCK_THREADS; i++) all = op(all, storage_.values[i]);
        aggregate = all;
    }

    TempStorage &storage_;
};

} // namespace cub

#endif /* GW_EMU_CUB_BLOCK_SCAN_CUH */
