/* SPDX-License-Identifier: MIT
 * The device policy (lib/witness/include/gw_device.h): explicit devices, GW_DEVICE, GW_REQUIRE_GPU and CTest's GPU
 * resource variable. Host test: links cudart but needs no device; where a GPU is present the assertions
 * that depend on its absence take the other branch, so the test means the same thing on both machines. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "gw_device.h"

static void clean_env(void)
{
    unsetenv("GW_DEVICE");
    unsetenv("GW_REQUIRE_GPU");
    unsetenv("CTEST_RESOURCE_GROUP_0_GPUS");
}

TestSuite(device_policy, .init = clean_env);

static gw_probe_result probe(char *reason)
{
    int count = -1;
    gw_probe_result r = gw_device_probe(&count, reason, 200);
    cr_assert(r == GW_PROBE_OK ? count > 0 : count == 0, "probe %d left count %d", (int)r, count);
    return r;
}

Test(device_policy, probe_only_treats_missing_driver_or_device_as_no_gpu)
{
    char reason[200];
    gw_probe_result r = probe(reason);
    cr_assert(r == GW_PROBE_OK || r == GW_PROBE_NO_GPU, "unexpected probe failure: %s", reason);
    if (r == GW_PROBE_NO_GPU)
        cr_assert(strstr(reason, "cudaErrorInsufficientDriver") || strstr(reason, "cudaErrorNoDevice"), "%s", reason);
}

Test(device_policy, cpu_is_always_the_cpu)
{
    gw_device_choice c;
    char err[256];
    cr_assert_eq(gw_device_resolve("cpu", &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.kind, GW_DEVICE_CPU);
    cr_assert_eq(c.fell_back, 0);
}

Test(device_policy, auto_without_a_gpu_falls_back_and_says_why)
{
    char reason[200];
    gw_probe_result r = probe(reason);
    gw_device_choice c;
    char err[256];
    cr_assert_eq(gw_device_resolve("auto", &c, err, sizeof err), 0, "%s", err);
    if (r == GW_PROBE_OK) {
        cr_assert_eq(c.kind, GW_DEVICE_CUDA);
        cr_assert_eq(c.ordinal, 0);
    } else {
        cr_assert_eq(c.kind, GW_DEVICE_CPU);
        cr_assert_eq(c.fell_back, 1);
        cr_assert_str_eq(c.reason, reason);
    }
}

Test(device_policy, require_gpu_turns_the_fallback_into_an_error)
{
    char reason[200];
    if (probe(reason) == GW_PROBE_OK) cr_skip_test("a GPU is present: nothing to fall back from");
    setenv("GW_REQUIRE_GPU", "1", 1);
    gw_device_choice c;
    char err[256];
    cr_assert_eq(gw_device_resolve("auto", &c, err, sizeof err), -1);
    cr_assert(strstr(err, "no usable GPU") && strstr(err, "GW_REQUIRE_GPU=1"), "%s", err);
    cr_assert_eq(gw_device_resolve("cpu", &c, err, sizeof err), -1);
    cr_assert(strstr(err, "conflicts with GW_REQUIRE_GPU=1"), "%s", err);
}

Test(device_policy, require_gpu_accepts_only_the_value_1)
{
    setenv("GW_REQUIRE_GPU", "0", 1);
    cr_assert_eq(gw_require_gpu(), 0);
    setenv("GW_REQUIRE_GPU", "yes", 1);
    cr_assert_eq(gw_require_gpu(), 0);
    setenv("GW_REQUIRE_GPU", "1", 1);
    cr_assert_eq(gw_require_gpu(), 1);
}

Test(device_policy, explicit_cuda_never_falls_back)
{
    char reason[200];
    if (probe(reason) == GW_PROBE_OK) cr_skip_test("a GPU is present");
    gw_device_choice c;
    char err[256];
    cr_assert_eq(gw_device_resolve("cuda", &c, err, sizeof err), -1);
    cr_assert(strstr(err, "--device 'cuda': no usable GPU"), "%s", err);
    cr_assert_eq(gw_device_resolve("cuda:1", &c, err, sizeof err), -1);
}

Test(device_policy, gw_device_sets_the_default_and_is_named_in_errors)
{
    setenv("GW_DEVICE", "cpu", 1);
    gw_device_choice c;
    char err[256];
    cr_assert_eq(gw_device_resolve(NULL, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.kind, GW_DEVICE_CPU);
    setenv("GW_DEVICE", "gpu", 1);
    cr_assert_eq(gw_device_resolve("", &c, err, sizeof err), -1);
    cr_assert_str_eq(err, "GW_DEVICE 'gpu': must be one of cuda, cuda:N, cpu, auto");
}

Test(device_policy, rejects_malformed_device_names_with_the_rule)
{
    gw_device_choice c;
    char err[256];
    const char *bad[] = {"cuda:", "cuda:x", "cuda:-1", "cuda:1x", "cuda:99999", "CPU", "cuda0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(gw_device_resolve(bad[i], &c, err, sizeof err), -1, "%s accepted", bad[i]);
        cr_assert(strstr(err, "--device") && (strstr(err, "must be") || strstr(err, "ordinal")), "%s: %s", bad[i], err);
    }
}

/* The grammar of gw_device.h: "cuda", "cpu", "auto", or "cuda:" and 1-4 ASCII digits without sign, space or
 * leading zero, at most 1024. Every other spelling that starts with "cuda:" gets the ordinal rule, word for
 * word, from --device and from GW_DEVICE alike; the whole message is compared, so an answer that went on to
 * probe for a GPU ("no usable GPU: ...", "device N does not exist") or resolved a device fails here on any
 * machine, and GW_REQUIRE_GPU=1 and CTest's GPU variable change nothing. */
static const char *const bad_ordinals[] = {
    "cuda: 1", "cuda:+0", "cuda:-0", "cuda:+1", "cuda:-1", "cuda:00", "cuda:01", "cuda:007", "cuda:0000",
    "cuda:01024", "cuda:1 ", "cuda:\t1", "cuda:1\n", "cuda: ", "cuda:0x1", "cuda:1e2", "cuda:1.0", "cuda:1,",
    "cuda:1025", "cuda:9999", "cuda:10000", "cuda:99999999999999999999", "cuda:", "cuda:x", "cuda:1x",
    "cuda::1", "cuda:0:1", "cuda:\xd9\xa3" /* Arabic-Indic 3 */, "cuda:\xef\xbc\x91" /* fullwidth 1 */,
};
static const char *const bad_names[] = {"cuda ", " cuda", "CUDA", "Cuda:0", "cuda0", "cuda 0", "gpu", "cpu:0",
                                        "auto ", "cpu\n", "cuda;0", "0"};

static void expect_syntax_rule(const char *source, const char *spec, int ordinal_rule)
{
    gw_device_choice c;
    char err[512], want[512];
    if (ordinal_rule)
        snprintf(want, sizeof want,
                 "%s '%s': the device ordinal after 'cuda:' must be a number 0..1024, written as plain decimal digits "
                 "(no sign, space or leading zero)",
                 source, spec);
    else
        snprintf(want, sizeof want, "%s '%s': must be one of cuda, cuda:N, cpu, auto", source, spec);
    const int rc = strcmp(source, "GW_DEVICE") == 0 ? gw_device_resolve(NULL, &c, err, sizeof err)
                                                    : gw_device_resolve(spec, &c, err, sizeof err);
    cr_assert_eq(rc, -1, "%s '%s' was accepted (kind %d, ordinal %d)", source, spec, (int)c.kind, c.ordinal);
    cr_assert_str_eq(err, want, "%s '%s': not the syntax rule", source, spec);
    int ordinal = 7;
    cr_assert_eq(gw_device_spec_parse(spec, &ordinal), 0, "gw_device_spec_parse accepted '%s'", spec);
    cr_assert_eq(ordinal, -1);
}

static void expect_every_bad_spelling(void)
{
    for (size_t i = 0; i < sizeof bad_ordinals / sizeof bad_ordinals[0]; i++) {
        expect_syntax_rule("--device", bad_ordinals[i], 1);
        setenv("GW_DEVICE", bad_ordinals[i], 1);
        expect_syntax_rule("GW_DEVICE", bad_ordinals[i], 1);
        unsetenv("GW_DEVICE");
    }
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        expect_syntax_rule("--device", bad_names[i], 0);
        setenv("GW_DEVICE", bad_names[i], 1);
        expect_syntax_rule("GW_DEVICE", bad_names[i], 0);
        unsetenv("GW_DEVICE");
    }
}

Test(device_policy, every_other_spelling_gets_the_syntax_rule_before_any_gpu_question)
{
    expect_every_bad_spelling();
    setenv("GW_REQUIRE_GPU", "1", 1);
    expect_every_bad_spelling();
    setenv("CTEST_RESOURCE_GROUP_0_GPUS", "id:0,slots:1", 1);
    expect_every_bad_spelling();
}

Test(device_policy, the_one_spelling_of_each_device_parses_to_its_ordinal)
{
    static const struct {
        const char *spec;
        int ordinal;
    } good[] = {{"cuda", -1}, {"cpu", -1}, {"auto", -1}, {"cuda:0", 0},       {"cuda:1", 1},
                {"cuda:9", 9}, {"cuda:10", 10}, {"cuda:100", 100}, {"cuda:1000", 1000}, {"cuda:1024", 1024}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int ordinal = 7;
        cr_assert_eq(gw_device_spec_parse(good[i].spec, &ordinal), 1, "'%s' rejected", good[i].spec);
        cr_assert_eq(ordinal, good[i].ordinal, "'%s' parsed to %d", good[i].spec, ordinal);
        /* through the policy it is never the syntax rule: a device, the CPU, or a question about the GPU */
        gw_device_choice c;
        char err[512] = "";
        if (gw_device_resolve(good[i].spec, &c, err, sizeof err) != 0)
            cr_assert(!strstr(err, "must be"), "'%s' got a syntax error: %s", good[i].spec, err);
    }
    int ordinal = 7;
    cr_assert_eq(gw_device_spec_parse(NULL, &ordinal), 0);
    cr_assert_eq(ordinal, -1);
}

Test(device_policy, reads_the_gpu_id_from_ctest_resource_groups)
{
    cr_assert_eq(gw_ctest_gpu_id(), -1);
    setenv("CTEST_RESOURCE_GROUP_0_GPUS", "id:1,slots:1", 1);
    cr_assert_eq(gw_ctest_gpu_id(), 1);
    setenv("CTEST_RESOURCE_GROUP_0_GPUS", "id:12", 1);
    cr_assert_eq(gw_ctest_gpu_id(), 12);
    setenv("CTEST_RESOURCE_GROUP_0_GPUS", "id:x,slots:1", 1);
    cr_assert_eq(gw_ctest_gpu_id(), -1);
    setenv("CTEST_RESOURCE_GROUP_0_GPUS", "slots:1", 1);
    cr_assert_eq(gw_ctest_gpu_id(), -1);
}
