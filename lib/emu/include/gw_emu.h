/* SPDX-License-Identifier: MIT
 * gw_emu: an emulated CUDA device on the CPU (docs/emu.md). A kernel's unchanged .cu file, compiled as C++ by
 * the host compiler with gw_emu_device.h in front of it (and its <<<...>>> launches rewritten into calls, a
 * mechanical build step), runs here: every thread of a block is a fiber of its own, so __syncthreads is a real
 * barrier and a warp's __shfl_*_sync a real rendezvous of the lanes its mask names; blocks run one at a time
 * in an order drawn from a seed, and inside a block the scheduler switches threads at every barrier, warp
 * operation and atomic in an order drawn from the same seed. The CUDA runtime calls this project makes
 * (memory, copies, memsets, streams, events, errors, device properties, occupancy, function attributes) are
 * implemented with CUDA's own signatures, so host code links this library instead of cudart.
 *
 * Emulation proves the device code's logic, its barriers, its warp protocol and its bounds, never a GPU:
 * the witness records architecture 0 ("emulated on the CPU"), which gw_witness_check refuses unless the
 * caller expects emulation. Timing, occupancy, the GPU's memory model and nvcc's code are not emulated.
 *
 * This header is the emulator's own C interface, used by gw_emu_device.h and by tests of the emulator;
 * everything else only sees the CUDA runtime API.
 *
 * Environment: GW_EMU_SEED (a whole number; default 1) draws the block order and the interleavings, so a run
 * is repeated exactly with the same seed. Errors of the device code (a deadlock, a lane outside its own
 * mask, lanes whose masks disagree, threads at different __syncthreads) are printed on stderr, naming the
 * kernel, the block, the warp and the call, and end the launch with cudaErrorLaunchFailure, sticky as a
 * fault on a GPU is.
 */
#ifndef GW_EMU_H
#define GW_EMU_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The emulated device: what cudaGetDeviceProperties reports (docs/emu.md, "The emulated device"). */
#define GW_EMU_SM_COUNT 4
#define GW_EMU_MAX_THREADS_PER_BLOCK 1024
#define GW_EMU_SHARED_PER_BLOCK (48 * 1024)
#define GW_EMU_SHARED_PER_BLOCK_OPTIN (227 * 1024)
#define GW_EMU_SHARED_PER_SM (228 * 1024)
#define GW_EMU_MEMORY_BYTES ((size_t)8 << 30)
#define GW_EMU_WARP 32

/* What one emulated thread sees: the built-in variables, and where it is. */
typedef struct gw_emu_self {
    unsigned thread_idx[3], block_idx[3], block_dim[3], grid_dim[3];
    unsigned tid;  /* linear index in the block: x + y*bx + z*bx*by */
    unsigned lane; /* tid % 32 */
    unsigned warp; /* tid / 32 */
} gw_emu_self;

/* The emulated thread running now; NULL outside a kernel. */
const gw_emu_self *gw_emu_current(void);

/* One launch, as the rewritten <<<grid, block, shared, stream>>> gives it. body(closure) runs the kernel for
 * the current thread; free_closure(closure) is called once the launch has run or failed. */
typedef struct gw_emu_launch_desc {
    const char *kernel;     /* its name, for messages */
    const void *func;       /* its identity, for cudaFuncSetAttribute / cudaFuncGetAttributes */
    unsigned grid[3], block[3];
    size_t dynamic_shared;
    cudaStream_t stream;
    void (*body)(void *closure);
    void *closure;
    void (*free_closure)(void *closure);
} gw_emu_launch_desc;

/* Checks the configuration (cudaErrorInvalidConfiguration: a zero or too large grid or block; cudaErrorInvalidValue:
 * dynamic shared memory above the function's limit; a pending sticky error), then enqueues the launch on its
 * stream. It runs when the stream is synchronised (or a synchronous call drains the queue), as the GPU
 * would run it later: host code that reads results before synchronising reads what was there before.
 * Returns the error, which is also the thread's last error as a launch's is. */
cudaError_t gw_emu_launch(const gw_emu_launch_desc *d);

/* The message of the last device-code error (what gw_emu printed on stderr when the launch failed), or "" when
 * there was none since the process started or cudaDeviceReset. */
const char *gw_emu_last_device_error(void);

/* The calls of device code (gw_emu_device.h), all on the current thread. */
enum gw_emu_barrier_kind { GW_EMU_BAR_SYNC, GW_EMU_BAR_OR, GW_EMU_BAR_AND, GW_EMU_BAR_COUNT };
int gw_emu_barrier(int kind, int predicate, const char *call, const char *file, int line);

enum gw_emu_warp_kind {
    GW_EMU_WARP_SYNC, GW_EMU_WARP_BALLOT, GW_EMU_WARP_SHFL, GW_EMU_WARP_SHFL_UP, GW_EMU_WARP_SHFL_DOWN,
    GW_EMU_WARP_SHFL_XOR
};
/* A rendezvous of the lanes that mask names: every one of them must make the same call with the same mask.
 * value: this lane's operand (shuffles: 8 bytes of it); arg: the source lane, delta or lane mask; width: the
 * shuffle's segment. Returns the shuffled value or the ballot. */
uint64_t gw_emu_warp(int kind, unsigned mask, uint64_t value, int arg, int width, const char *call, const char *file,
                     int line);
/* The lanes of the calling warp that have not returned (what __activemask can honestly say here). */
unsigned gw_emu_active_mask(void);

/* The calling thread's linear index in its block, after checking that the block has block_threads threads
 * (a CUB block primitive's template size must be the block's: who names it in the error). */
unsigned gw_emu_block_thread(unsigned block_threads, const char *who);

/* Before every atomic: the scheduler may switch to another thread here (drawn from the seed), so lock-free
 * code meets other interleavings than program order. */
void gw_emu_atomic_point(void);

/* The seams around inline PTX (docs/emu.md, "Seams"): %globaltimer (a monotonic clock, ns) and %smid (the
 * emulated multiprocessor running the block). */
unsigned long long gw_emu_globaltimer(void);
unsigned gw_emu_smid(void);

/* The block's dynamic shared memory (extern __shared__): exactly the launch's bytes, on the heap, so that
 * AddressSanitizer sees an access past its end. */
void *gw_emu_dynamic_shared(void);

/* A device-code error: printed with the kernel, block and thread, and the launch fails. Does not return. */
void gw_emu_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#ifdef __cplusplus
}
#endif

#endif /* GW_EMU_H */
