/* SPDX-License-Identifier: MIT
 * lib/ of an installed gpuwitness, as a downstream program uses it (docs/install.md): the ledger's budget check
 * catching a round trip through the host, and a .npy written and read back through the staged writer.
 * argv[1]: a directory to write in. Exit status: 0 every check passed, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gw_ledger_check.h"
#include "gw_npy.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: use_guard_library DIR\n");
        return 1;
    }
    int bad = 0;
    /* The ledger: a call that should upload 64 bytes and run one kernel also sent them back and up again. */
    const gw_kernel_expect kernels[] = {{"my_kernel", 1}};
    const gw_copy_expect copies[] = {{GW_COPY_HTOD, 64, "in"}};
    const gw_ledger_budget budget = {kernels, 1, copies, 1};
    gw_activity_log log = {0};
    gw_activity a = {.kind = GW_ACTIVITY_COPY, .copy_kind = GW_COPY_HTOD, .bytes = 64, .iteration = -1};
    gw_activity_log_push(&log, &a);
    a.copy_kind = GW_COPY_DTOH;
    gw_activity_log_push(&log, &a);
    a.copy_kind = GW_COPY_HTOD;
    gw_activity_log_push(&log, &a);
    a = (gw_activity){.kind = GW_ACTIVITY_KERNEL, .iteration = -1};
    snprintf(a.name, sizeof a.name, "my_kernel");
    gw_activity_log_push(&log, &a);
    char msg[1024];
    const int violations = gw_ledger_check(&log, &budget, msg, sizeof msg);
    gw_activity_log_free(&log);
    if (violations < 1 || !strstr(msg, "round trip through the host")) {
        fprintf(stderr, "gw_ledger_check: %d violation(s), want the round trip named:\n%s\n", violations, msg);
        bad = 1;
    }

    /* .npy: a 2x3 uint16 array written (staged, then renamed) and read back. */
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/use_guard_library.npy", argv[1]);
    const uint16_t data[6] = {1, 2, 3, 4, 5, 65535};
    const int64_t shape[2] = {2, 3};
    gw_npy_array back;
    if (gw_npy_write(path, GW_NPY_U2, 2, shape, data, err, sizeof err)) {
        fprintf(stderr, "gw_npy_write: %s\n", err);
        bad = 1;
    } else if (gw_npy_read(path, GW_NPY_U2, 2, 2, "[Y][X]", &back, err, sizeof err)) {
        fprintf(stderr, "gw_npy_read: %s\n", err);
        bad = 1;
    } else {
        if (back.shape[0] != 2 || back.shape[1] != 3 || memcmp(back.data, data, sizeof data) != 0) {
            fprintf(stderr, "gw_npy: the array read back differs from the one written\n");
            bad = 1;
        }
        gw_npy_free(&back);
    }
    printf("use_guard_library: %s\n", bad ? "FAILED" : "ledger check and .npy round trip ok");
    return bad;
}
