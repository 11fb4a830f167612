/* Host TSC frequency for tsc_early_khz= from cpuinfo and dmesg text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "vm_tsc.h"

static void test_cpuinfo_with_known_freq(void **state)
{
    (void)state;
    const char *cpuinfo = "processor\t: 0\n"
                          "model name\t: AMD EPYC 7B13\n"
                          "cpu MHz\t\t: 2445.428\n"
                          "flags\t\t: fpu vme tsc msr constant_tsc tsc_known_freq pni\n"
                          "\n"
                          "processor\t: 1\n"
                          "cpu MHz\t\t: 2445.428\n"
                          "flags\t\t: fpu vme tsc msr constant_tsc tsc_known_freq pni\n";
    assert_int_equal(vm_tsc_khz_from_cpuinfo(cpuinfo), 2445428);
    assert_int_equal(vm_tsc_khz_from_cpuinfo("cpu MHz : 3000\nflags : tsc_known_freq\n"),
                     3000000);
    assert_int_equal(vm_tsc_khz_from_cpuinfo("cpu MHz : 2999.9\nflags : tsc_known_freq"),
                     2999900);
}

static void test_cpuinfo_without_known_freq(void **state)
{
    (void)state;
    /* cpu MHz is then the current clock, not the TSC rate. */
    assert_int_equal(vm_tsc_khz_from_cpuinfo("cpu MHz : 2445.428\nflags : fpu tsc\n"), -1);
    assert_int_equal(vm_tsc_khz_from_cpuinfo("cpu MHz : 2445.428\nflags : x_tsc_known_freq\n"),
                     -1);
    assert_int_equal(vm_tsc_khz_from_cpuinfo("flags : tsc_known_freq\n"), -1);
    assert_int_equal(vm_tsc_khz_from_cpuinfo("cpu MHz : fast\nflags : tsc_known_freq\n"), -1);
    assert_int_equal(vm_tsc_khz_from_cpuinfo("cpu MHz : 99999999999999999999\nflags : "
                                             "tsc_known_freq\n"),
                     -1);
    assert_int_equal(vm_tsc_khz_from_cpuinfo(""), -1);
}

static void test_dmesg(void **state)
{
    (void)state;
    const char *dmesg = "[    0.000000] tsc: Fast TSC calibration using PIT\n"
                        "[    0.000000] tsc: Detected 2445.410 MHz processor\n"
                        "[    1.234567] tsc: Refined TSC clocksource calibration: 2445.427 MHz\n";
    assert_int_equal(vm_tsc_khz_from_dmesg(dmesg), 2445427);
    assert_int_equal(vm_tsc_khz_from_dmesg("[0.0] tsc: Detected 1999.999 MHz processor\n"),
                     1999999);
    assert_int_equal(vm_tsc_khz_from_dmesg("nothing here\n"), -1);
    assert_int_equal(vm_tsc_khz_from_dmesg("tsc: Detected  MHz\n"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpuinfo_with_known_freq),
        cmocka_unit_test(test_cpuinfo_without_known_freq),
        cmocka_unit_test(test_dmesg),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
