/* SPDX-License-Identifier: MIT
 * cub::BlockReduce on the emulated device (docs/emu.md, "CUB"): CUB's interface, for the sizes and operators
 * gpuwitness' kernels use, with the semantics CUB documents, not its algorithm: every thread writes its value
 * into TempStorage, a barrier, thread 0 folds them in thread order. As in CUB the aggregate is defined in
 * thread 0 only; every other thread gets a poison value (NaN, or all bits set), so a kernel that reads it
 * elsewhere computes nonsense here too. Like CUB, it does not synchronise after itself: reusing TempStorage
 * needs the kernel's own __syncthreads, which ThreadSanitizer checks in the emu-tsan tier. Tested against a
 * serial fold (tests/emu/test_emu_cub.cpp).
 */
#ifndef GW_EMU_CUB_BLOCK_REDUCE_CUH
#define GW_EMU_CUB_BLOCK_REDUCE_CUH

#include <cstring>
#include <limits>
#include <type_traits>

#include "gw_emu.h"

namespace cub {

template <typename T> static inline T gw_emu_poison()
{
    if (std::numeric_limits<T>::has_quiet_NaN) return std::numeric_limits<T>::quiet_NaN();
    T v;
    std::memset(&v, 0xFF, sizeof v);
    return v;
}

template <typename T, int BLOCK_DIM_X, int ALGORITHM = 0, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1>
class BlockReduce {
    static constexpr int BLOCK_THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z;

  public:
    struct TempStorage {
        T values[BLOCK_THREADS];
    };

    explicit BlockReduce(TempStorage &storage) : storage_(storage) {}

    template <typename Op> T Reduce(T input, Op op)
    {
        const unsigned tid = gw_emu_block_thread(BLOCK_THREADS, "cub::BlockReduce");
        storage_.values[tid] = input;
        (void)gw_emu_barrier(GW_EMU_BAR_SYNC, 0, "cub::BlockReduce::Reduce", __FILE__, __LINE__);
        if (tid) return gw_emu_poison<T>();
        T acc = storage_.values[0];
        for (int i = 1; i < BLOCK_THREADS; i++) acc = op(acc, storage_.values[i]);
        return acc;
    }

    T Sum(T input)
    {
        return Reduce(input, [](const T &a, const T &b) { return a + b; });
    }

  private:
    TempStorage &storage_;
};

} // namespace cub

#endif /* GW_EMU_CUB_BLOCK_REDUCE_CUH */
