/* SPDX-License-Identifier: MIT
 * Host-side timing for gpuwitness bench: min / median / max of repeated runs, and the CPU reference loop.
 */
#include <stdlib.h>

#include "gw_bench.h"

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void gw_bench_stats_from(double *ms, int count, gw_bench_stats *s)
{
    s->count = count;
    s->min = s->median = s->max = 0;
    if (count <= 0) return;
    qsort(ms, (size_t)count, sizeof *ms, compare_double);
    s->min = ms[0];
    s->max = ms[count - 1];
    s->median = count % 2 ? ms[count / 2] : 0.5 * (ms[count / 2 - 1] + ms[count / 2]);
}

int gw_bench_cpu_time(int reps, int (*fn)(void *ctx), void *ctx, gw_bench_stats *s)
{
    s->count = 0;
    double *times = malloc((size_t)(reps > 0 ? reps : 1) * sizeof *times);
    if (!times) return -1;
    for (int r = 0; r < reps; r++) {
        const double t0 = gw_cli_now_ms();
        const int rc = fn(ctx);
        times[r] = gw_cli_now_ms() - t0;
        if (rc) {
            free(times);
            return rc;
        }
    }
    gw_bench_stats_from(times, reps, s);
    free(times);
    return 0;
}
