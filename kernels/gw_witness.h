/* SPDX-License-Identifier: MIT
 * gw_witness.h: proof that a kernel really ran on the GPU (the gpuwitness "witness").
 *
 * The one file every gpuwitness kernel shares; copy it together with any kernel directory.
 * It compiles as C and C++ (host side: the record) and as CUDA (device side: the recording call).
 *
 * Protocol
 *   1. The caller allocates a gw_witness in device memory and zeroes it (cudaMemsetAsync(w, 0, sizeof *w)).
 *   2. The caller passes the pointer to a launcher as an ordinary argument; NULL turns recording off
 *      (the cost is then one predictable branch per block).
 *   3. Every block calls gw_witness_block_done() once, after its last store; the call holds a
 *      __syncthreads(), so a block that faults or returns early is never counted.
 *   4. After its own synchronisation the caller copies the record back and checks it against what the
 *      call should have produced (gpuwitness' host-side check: lib/witness/include/gw_witness_check.h).
 *
 * Why a zeroed record works for minima: arch_min and t_first are stored complemented (~value) and
 * maximised, so "nothing recorded" is all zero bytes and no sentinel has to be written first.
 * Use gw_witness_arch_min() and gw_witness_t_first() to read them.
 *
 * Example (the kernel side):
 *   __global__ void my_kernel(..., gw_witness *w) {
 *       unsigned long long t0 = gw_witness_clock(w);
 *       ... work, producing block_items outputs in this block (value needed in thread 0) ...
 *       gw_witness_block_done(w, block_items, t0);   // every thread of the block calls it
 *   }
 */
#ifndef GW_WITNESS_H
#define GW_WITNESS_H

#include <stdint.h>

/* GW_HAVE_CUDA_RUNTIME: defined when the CUDA runtime headers can be included. Kernel headers declare their
 * types and checks as plain C for everyone and their launchers only under it, so that a CPU reference
 * includes the same header where no CUDA toolkit is installed. Defined once here, for every kernel. */
#if defined(__CUDACC__)
#define GW_HAVE_CUDA_RUNTIME 1
#elif defined(__has_include) /* nested: a compiler without __has_include must not parse the call */
#if __has_include(<cuda_runtime_api.h>)
#define GW_HAVE_CUDA_RUNTIME 1
#endif
#endif
#ifdef GW_HAVE_CUDA_RUNTIME
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define GW_WITNESS_SM_WORDS 8 /* 256 multiprocessor ids */

typedef struct gw_witness {
    unsigned long long launches;    /* +1 per launch, by thread 0 of block 0 */
    unsigned long long grid_blocks; /* +gridDim.x*y*z per launch, by block 0: blocks the launches asked for */
    unsigned long long blocks;      /* +1 by every block that finished its work */
    unsigned long long items;       /* outputs produced, each block adds its own count once */
    unsigned long long t_first_inv; /* ~(earliest %globaltimer at a block start), ns */
    unsigned long long t_last;      /* latest %globaltimer at a block end, ns */
    unsigned int arch_min_inv;      /* ~(smallest __CUDA_ARCH__ that ran, e.g. 900) */
    unsigned int arch_max;          /* largest __CUDA_ARCH__ that ran */
    unsigned int sm_mask[GW_WITNESS_SM_WORDS]; /* bit s set: multiprocessor %smid == s ran a block */
} gw_witness;

static inline unsigned int gw_witness_arch_min(const gw_witness *w)
{
    return w->arch_min_inv ? ~w->arch_min_inv : 0u;
}

static inline unsigned long long gw_witness_t_first(const gw_witness *w)
{
    return w->t_first_inv ? ~w->t_first_inv : 0ull;
}

#ifdef __cplusplus
}
#endif

#if defined(__CUDACC__) || defined(GW_EMU_DEVICE)

/* The two PTX registers the record reads. On gpuwitness' emulated device (GW_EMU_DEVICE: the kernel compiled by the
 * host compiler, docs/emu.md) they come from the emulator: a monotonic clock and the emulated multiprocessor. */
#if defined(GW_EMU_DEVICE)
static __device__ __forceinline__ unsigned long long gw_witness_globaltimer(void) { return gw_emu_globaltimer(); }
static __device__ __forceinline__ unsigned int gw_witness_smid(void) { return gw_emu_smid(); }
#else
static __device__ __forceinline__ unsigned long long gw_witness_globaltimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
static __device__ __forceinline__ unsigned int gw_witness_smid(void)
{
    unsigned int sm_id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm_id));
    return sm_id;
}
#endif

/* The device timer in ns; 0 when recording is off, so callers can read it unconditionally. */
static __device__ __forceinline__ unsigned long long gw_witness_clock(const gw_witness *w)
{
    return w ? gw_witness_globaltimer() : 0;
}

/* Called by every thread of the block after the block's last store. block_items is read from
 * thread 0 only. The barrier makes "finished" mean every thread got here. */
static __device__ __forceinline__ void gw_witness_block_done(gw_witness *w, unsigned long long block_items,
                                                             unsigned long long t_start)
{
    if (!w) return; /* uniform across the block: w is a kernel argument */
    __syncthreads();
    if (threadIdx.x | threadIdx.y | threadIdx.z) return;
#ifdef __CUDA_ARCH__
    const unsigned int arch = __CUDA_ARCH__;
#else
    const unsigned int arch = 0; /* host code: the emulated device */
#endif
    const unsigned int sm_id = gw_witness_smid();
    const unsigned long long t_end = gw_witness_globaltimer();
    if ((blockIdx.x | blockIdx.y | blockIdx.z) == 0) {
        atomicAdd(&w->launches, 1ull);
        atomicAdd(&w->grid_blocks, (unsigned long long)gridDim.x * gridDim.y * gridDim.z);
    }
    atomicAdd(&w->blocks, 1ull);
    if (block_items) atomicAdd(&w->items, block_items);
    atomicMax(&w->t_first_inv, ~t_start);
    atomicMax(&w->t_last, t_end);
    atomicMax(&w->arch_min_inv, ~arch);
    atomicMax(&w->arch_max, arch);
    atomicOr(&w->sm_mask[(sm_id / 32u) % GW_WITNESS_SM_WORDS], 1u << (sm_id % 32u));
}

#endif /* __CUDACC__ || GW_EMU_DEVICE */
#endif /* GW_WITNESS_H */
