/* SPDX-License-Identifier: MIT
 * The program of the malloc sweep's canaries (tests/emu/CMakeLists.txt): a pinned host allocation, then a device
 * allocation, and on the path where the second fails (GW_EMU_FAULT=malloc:2) a planted leak: the pinned memory
 * ("pinned") or a host scratch buffer ("host") is not freed. tests/cli/gw_emu_malloc_sweep.sh must report
 * either. Without a fault it frees everything and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

/* The device allocation, with a host scratch buffer beside it; on failure one of the two leaks. */
static int second_allocation(void *pinned, int leak_host)
{
    void *dev = NULL;
    char *scratch = malloc(64);
    if (!scratch) return 1;
    if (cudaMalloc(&dev, 16) != cudaSuccess) {
        fprintf(stderr, "emu_leak_probe: cudaMalloc(second) failed: out of memory\n");
        if (leak_host) cudaFreeHost(pinned); /* the planted leak: scratch */
        else free(scratch);                  /* the planted leak: pinned */
        return 1;
    }
    free(scratch);
    return cudaFree(dev) != cudaSuccess;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "pinned") != 0 && strcmp(argv[1], "host") != 0)) {
        fprintf(stderr, "usage: emu_leak_probe pinned|host\n");
        return 2;
    }
    void *pinned = NULL;
    if (cudaMallocHost(&pinned, 16) != cudaSuccess) {
        fprintf(stderr, "emu_leak_probe: cudaMallocHost(first) failed: out of memory\n");
        return 1;
    }
    if (second_allocation(pinned, strcmp(argv[1], "host") == 0)) return 1;
    return cudaFreeHost(pinned) != cudaSuccess;
}
