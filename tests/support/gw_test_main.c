/* SPDX-License-Identifier: MIT
 * main() for every gpuwitness Criterion executable: the exit-code contract of docs/testing.md, "Exit codes".
 *   0  every test ran and passed          1  a test failed or crashed, or nothing ran
 *   77 every test skipped (no usable GPU and GW_REQUIRE_GPU unset), which CTest shows as Skipped
 * Criterion's own main exits 0 for an all-skipped suite, which CTest would count as a pass.
 * The verdict is taken in the runner process from the POST_ALL stats; no CUDA call happens here.
 */
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>
#include <criterion/hooks.h>

static size_t tests_run, tests_skipped, tests_bad;

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
    tests_run = stats->nb_tests;
    tests_skipped = stats->tests_skipped;
    tests_bad = stats->tests_failed + stats->tests_crashed;
}

int main(int argc, char *argv[])
{
    /* A green result must never be forced: CI scripts unset it too, this is the second lock. */
    if (getenv("CRITERION_ALWAYS_SUCCEED")) {
        fprintf(stderr, "gw_test_main: CRITERION_ALWAYS_SUCCEED is set; refusing to run (it hides failures)\n");
        return 1;
    }
    struct criterion_test_set *tests = criterion_initialize();
    int args = criterion_handle_args(argc, argv, true);
    if (args <= 0) { /* --help, --list, --version, or a bad option */
        criterion_finalize(tests);
        return args == 0 ? 0 : 1;
    }
    int all_passed = criterion_run_all_tests(tests);
    criterion_finalize(tests);
    if (!all_passed || tests_bad) return 1;
    if (tests_run == 0) {
        fprintf(stderr, "gw_test_main: no test ran\n");
        return 1;
    }
    if (tests_skipped == tests_run) return 77;
    return 0;
}
