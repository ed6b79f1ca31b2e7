/* SPDX-License-Identifier: MIT
 * Device memory high-water of our own host paths (docs/monitor.md, "Device memory"): every cudaMalloc and
 * cudaFree the process makes is counted here (the gpuwitness binary sends them through
 * tools/gpuwitness/cli/gw_devmem_wrap.c with the linker's --wrap), with a time-stamped log of the bytes
 * allocated, so that any time window (a kernel call, a bench case, a trace's iterations) can ask for the
 * most bytes held inside it. Plain C, thread-safe, prints nothing.
 *
 * Why our own allocations and not CUPTI's memory records: it is exact (every byte the moment it is asked
 * for), per process (other processes on the card do not count; NVML's "memory used" covers the card),
 * needs no CUPTI subscriber (a single slot, taken by the ledger, nsys and compute-sanitizer), costs one
 * lock per allocation, and is tested without a GPU.
 */
#ifndef GW_DEVMEM_H
#define GW_DEVMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An allocation of bytes at ptr succeeded / ptr is being freed (unknown pointers and NULL are ignored). */
void gw_devmem_alloc(const void *ptr, size_t bytes);
void gw_devmem_free(const void *ptr);

/* Bytes held now, and allocations made since the process started. */
uint64_t gw_devmem_live(void);
uint64_t gw_devmem_allocations(void);

/* The most bytes held at any moment of [t0_us, t1_us] (CLOCK_MONOTONIC, gw_monitor_now_us), and how many
 * allocations were made inside it. 0, or 1 when the log no longer reaches back to t0 (peak is then a
 * lower bound). */
int gw_devmem_window(uint64_t t0_us, uint64_t t1_us, uint64_t *peak_bytes, uint64_t *allocations);

/* One point of the log: at t_us the process held bytes. */
typedef struct gw_devmem_point {
    uint64_t t_us;
    uint64_t bytes;
} gw_devmem_point;

/* The points of [t0_us, t1_us], preceded by the value at t0_us, into a malloc'd array (*points, *count):
 * the counter track of a Chrome trace. 0, or -1 when out of memory. */
int gw_devmem_points(uint64_t t0_us, uint64_t t1_us, gw_devmem_point **points, size_t *count);

/* Forgets everything (tests). */
void gw_devmem_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* GW_DEVMEM_H */
