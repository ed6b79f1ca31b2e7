/* SPDX-License-Identifier: MIT
 * gw_emu_device.h: what nvcc gives CUDA device code, for the host compiler (docs/emu.md, "Compiling a kernel").
 * The emulated build of a kernel compiles its unchanged .cu file as C++17 with this header in front of it
 * (-include gw_emu_device.h) and lib/emu/include ahead of the toolkit's headers, after a build step has
 * rewritten the two constructs C++ has no spelling for (gw_emu_rewrite.cmake):
 *     kernel<<<grid, block[, shared[, stream]]>>>(args)  ->  gw_emu_launch_of(kernel, "kernel", grid, block...)(args)
 *     extern __shared__ T name[];                         ->  T *const name = (T *)gw_emu_dynamic_shared();
 * Everything else maps here: the qualifiers to nothing (a device function is a host function), __shared__ to
 * static (one block runs at a time, so a static is the block's; AddressSanitizer puts redzones around it),
 * the built-in variables to the running thread's, the barriers, votes and shuffles to the emulator's
 * rendezvous, the atomics to the host's, preceded by a scheduling point, and the runtime's C++ overloads
 * (cudaFuncSetAttribute(kernel, ...)) to its C calls. __CUDACC__ and __CUDA_ARCH__ stay undefined: this is
 * host code, and the witness records architecture 0.
 */
#ifndef GW_EMU_DEVICE_H
#define GW_EMU_DEVICE_H

#if !defined(__cplusplus) || __cplusplus < 201703L || defined(__STRICT_ANSI__)
#error "gw_emu_device.h: the emulated build compiles device code as GNU C++17 (-std=gnu++17: __syncwarp()'s comma)"
#endif
#if defined(__CUDACC__) || defined(__CUDA_ARCH__)
#error "gw_emu_device.h is for the host compiler, never nvcc"
#endif

/* Device code compiled for the emulated device: kernels/gw_witness.h and the seams of docs/emu.md test it. */
#define GW_EMU_DEVICE 1

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include <cuda_runtime_api.h>
#include <vector_types.h>

#include "gw_emu.h"

/* ---- qualifiers (host_defines.h turned them into attributes the host compiler does not know) ---- */
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __constant__
#undef __forceinline__
#undef __noinline__
#undef __align__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#ifndef __restrict__
#define __restrict__ __restrict
#endif

#include <vector_functions.h> /* make_uint4 and the others, with the qualifiers above */

/* ---- built-in variables ---- */
#define threadIdx (*reinterpret_cast<const uint3 *>(gw_emu_current()->thread_idx))
#define blockIdx (*reinterpret_cast<const uint3 *>(gw_emu_current()->block_idx))
#define blockDim (*reinterpret_cast<const uint3 *>(gw_emu_current()->block_dim))
#define gridDim (*reinterpret_cast<const uint3 *>(gw_emu_current()->grid_dim))
#define warpSize GW_EMU_WARP

/* ---- barriers, votes and shuffles ---- */
#define __syncthreads() (void)gw_emu_barrier(GW_EMU_BAR_SYNC, 0, "__syncthreads", __FILE__, __LINE__)
#define __syncthreads_or(p) gw_emu_barrier(GW_EMU_BAR_OR, (p) != 0, "__syncthreads_or", __FILE__, __LINE__)
#define __syncthreads_and(p) gw_emu_barrier(GW_EMU_BAR_AND, (p) != 0, "__syncthreads_and", __FILE__, __LINE__)
#define __syncthreads_count(p) gw_emu_barrier(GW_EMU_BAR_COUNT, (p) != 0, "__syncthreads_count", __FILE__, __LINE__)
#define __syncwarp(...) gw_emu_syncwarp(__FILE__, __LINE__, ##__VA_ARGS__)
#define __ballot_sync(mask, p) \
    (unsigned)gw_emu_warp(GW_EMU_WARP_BALLOT, (mask), (p) != 0, 0, 32, "__ballot_sync", __FILE__, __LINE__)
#define __activemask() gw_emu_active_mask()
#define __shfl_sync(mask, v, src, ...) \
    gw_emu_shfl(GW_EMU_WARP_SHFL, (mask), (v), (src), gw_emu_width(__VA_ARGS__), "__shfl_sync", __FILE__, __LINE__)
#define __shfl_up_sync(mask, v, delta, ...) \
    gw_emu_shfl(GW_EMU_WARP_SHFL_UP, (mask), (v), (delta), gw_emu_width(__VA_ARGS__), "__shfl_up_sync", __FILE__, __LINE__)
#define __shfl_down_sync(mask, v, delta, ...)                                                                      \
    gw_emu_shfl(GW_EMU_WARP_SHFL_DOWN, (mask), (v), (delta), gw_emu_width(__VA_ARGS__), "__shfl_down_sync", __FILE__, \
                __LINE__)
#define __shfl_xor_sync(mask, v, lanes, ...)                                                                      \
    gw_emu_shfl(GW_EMU_WARP_SHFL_XOR, (mask), (v), (lanes), gw_emu_width(__VA_ARGS__), "__shfl_xor_sync", __FILE__, \
                __LINE__)

static inline int gw_emu_width() { return GW_EMU_WARP; }
static inline int gw_emu_width(int width) { return width; }

static inline void gw_emu_syncwarp(const char *file, int line, unsigned mask = 0xFFFFFFFFu)
{
    (void)gw_emu_warp(GW_EMU_WARP_SYNC, mask, 0, 0, GW_EMU_WARP, "__syncwarp", file, line);
}

template <typename T>
static inline T gw_emu_shfl(int kind, unsigned mask, T value, int arg, int width, const char *call, const char *file,
                            int line)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "a shuffle moves at most 8 bytes");
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof value);
    bits = gw_emu_warp(kind, mask, bits, arg, width, call, file, line);
    T out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}

/* ---- atomics: the host's, each after a point where the scheduler may switch threads ----
 * The calls and types the kernels make, as overloads for CUDA's own types, not templates, so that an argument
 * converts as it does for nvcc (an enum to int). atomicCAS includes unsigned short: a true 16-bit
 * compare-exchange here (the GPU's is a 32-bit one on the aligned word; docs/grid_objects.md, "Padding"). */
template <typename T, typename F> static inline T gw_emu_atomic_update(T *p, F f)
{
    gw_emu_atomic_point();
    T old, want;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do want = f(old);
    while (!__atomic_compare_exchange(p, &old, &want, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}
#define GW_EMU_ATOMIC(name, T, expr) \
    static inline T name(T *p, T v) { return gw_emu_atomic_update(p, [v](T old) -> T { return expr; }); }
#define GW_EMU_ATOMIC_INTS(name, expr)           \
    GW_EMU_ATOMIC(name, int, expr)               \
    GW_EMU_ATOMIC(name, unsigned, expr)          \
    GW_EMU_ATOMIC(name, unsigned long long, expr)
GW_EMU_ATOMIC_INTS(atomicAdd, old + v)
GW_EMU_ATOMIC_INTS(atomicMin, v < old ? v : old)
GW_EMU_ATOMIC_INTS(atomicMax, v > old ? v : old)
GW_EMU_ATOMIC_INTS(atomicOr, old | v)
#undef GW_EMU_ATOMIC_INTS
#undef GW_EMU_ATOMIC
#define GW_EMU_ATOMIC_CAS(T)                                                                         \
    static inline T atomicCAS(T *p, T compare, T v)                                                  \
    {                                                                                                \
        gw_emu_atomic_point();                                                                       \
        __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);      \
        return compare;                                                                              \
    }
GW_EMU_ATOMIC_CAS(int)
GW_EMU_ATOMIC_CAS(unsigned)
GW_EMU_ATOMIC_CAS(unsigned long long)
GW_EMU_ATOMIC_CAS(unsigned short)
#undef GW_EMU_ATOMIC_CAS

/* ---- the intrinsics the kernels use ---- */
static inline double __dmul_rn(double a, double b) { return a * b; } /* built with -ffp-contract=off: no fusing */
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline float __int2float_rn(int x) { return (float)x; } /* the host rounds to nearest too */
static inline float __ll2float_rn(long long x) { return (float)x; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    const uint64_t bytes = (uint64_t)y << 32 | x;
    unsigned r = 0;
    for (int i = 0; i < 4; i++) r |= (unsigned)(bytes >> (8 * ((s >> (4 * i)) & 7u)) & 0xFFu) << (8 * i);
    return r;
}
template <typename T> static inline T __ldg(const T *p) { return *p; }
static inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
#define GW_EMU_MINMAX(T)                                         \
    static inline T min(T a, T b) { return a < b ? a : b; }      \
    static inline T max(T a, T b) { return a > b ? a : b; }
GW_EMU_MINMAX(int)
GW_EMU_MINMAX(unsigned)
GW_EMU_MINMAX(long)
GW_EMU_MINMAX(unsigned long)
GW_EMU_MINMAX(long long)
GW_EMU_MINMAX(unsigned long long)
GW_EMU_MINMAX(float)
GW_EMU_MINMAX(double)
#undef GW_EMU_MINMAX

/* ---- the runtime's C++ overloads, as cuda_runtime.h has them ---- */
template <class T> static inline cudaError_t cudaFuncSetAttribute(T *entry, enum cudaFuncAttribute attr, int value)
{
    return ::cudaFuncSetAttribute(reinterpret_cast<const void *>(entry), attr, value);
}
template <class T> static inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, T *entry)
{
    return ::cudaFuncGetAttributes(attr, reinterpret_cast<const void *>(entry));
}
template <class T>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, T func, int block_size,
                                                                       size_t dynamic_shared)
{
    return ::cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, reinterpret_cast<const void *>(func), block_size,
                                                           dynamic_shared);
}

/* ---- launches: the rewritten <<<...>>> ---- */
template <typename... P> struct gw_emu_launcher {
    void (*kernel)(P...);
    const char *name;
    dim3 grid, block;
    size_t shared;
    cudaStream_t stream;

    /* The arguments are converted to the kernel's parameter types and copied now, as a launch copies them into
     * its parameter space; every thread of the launch then gets its own copies. */
    template <typename... A> void operator()(A &&...args) const
    {
        struct closure {
            void (*kernel)(P...);
            std::tuple<typename std::decay<P>::type...> args;
        };
        closure *c = new closure{kernel, std::tuple<typename std::decay<P>::type...>(std::forward<A>(args)...)};
        const gw_emu_launch_desc d = {
            name, reinterpret_cast<const void *>(kernel), {grid.x, grid.y, grid.z}, {block.x, block.y, block.z},
            shared, stream, [](void *p) { std::apply(static_cast<closure *>(p)->kernel, static_cast<closure *>(p)->args); },
            c, [](void *p) { delete static_cast<closure *>(p); }};
        (void)gw_emu_launch(&d);
    }
};

template <typename... P>
static inline gw_emu_launcher<P...> gw_emu_launch_of(void (*kernel)(P...), const char *name, dim3 grid, dim3 block,
                                                     size_t shared = 0, cudaStream_t stream = 0)
{
    return gw_emu_launcher<P...>{kernel, name, grid, block, shared, stream};
}

#endif /* GW_EMU_DEVICE_H */
