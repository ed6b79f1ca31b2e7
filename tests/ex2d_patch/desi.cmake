# SPDX-License-Identifier: MIT
# `gpuwitness run ex2d --psf ... --image ... --out FRAME.fits` and `gpuwitness synth ex2d` on DESI files
# (docs/ex2d_patch.md, "Real DESI files"), included by tests/ex2d_patch/CMakeLists.txt (with CUDA). The FITS
# readers' and writers' own tables are tests/desi/.

gw_cli_test(NAME cli_ex2d_desi_help RC 0
  STDOUT "usage: gpuwitness run ex2d --psf PSF.fits --image IMAGE.fits --fibres F:C --waves W0:W1:DW --out FRAME.fits"
  ARGS run ex2d --psf x --help)
gw_cli_test(NAME cli_ex2d_desi_in_run_help RC 0 STDOUT "gpuwitness run ex2d --psf PSF.fits --image IMAGE.fits"
  ARGS run --help)
gw_cli_test(NAME cli_synth_help RC 0 STDOUT "usage: gpuwitness synth KERNEL.*ex2d_patch +gpuwitness synth ex2d --psf"
  ARGS synth --help)
gw_cli_test(NAME cli_synth_ex2d_help RC 0 STDOUT "usage: gpuwitness synth ex2d --psf PSF.fits.*HDU TRUTH"
  ARGS synth ex2d --help)
gw_cli_test(NAME cli_synth_other_kernel RC 2 STDERR "synth: grid_d4 has no synthetic input writer" ARGS synth grid_d4)
gw_cli_test(NAME cli_synth_unknown_kernel RC 2 STDERR "synth: unknown kernel 'nope'" ARGS synth nope)

# Bad usage: exit 2, the option and the rule named, nothing written (no file needed: the options are checked
# before any file is opened).
foreach(case
    "fibres_form|--fibres '3': must be F:C|--psf;p.fits;--image;i.fits;--fibres;3;--waves;6000:6100:1;--out;f.fits"
    "waves_form|--waves '6000:6100': must be W0:W1:DW|--psf;p.fits;--image;i.fits;--fibres;0:5;--waves;6000:6100;--out;f.fits"
    "waves_order|--waves '6100:6000:1': must be W0:W1:DW in Angstrom, three finite numbers, 0 < W0 < W1 and DW > 0|--psf;p.fits;--image;i.fits;--fibres;0:5;--waves;6100:6000:1;--out;f.fits"
    "waves_too_many|--waves '1:200000:1': 200000 bins, at most 100000|--psf;p.fits;--image;i.fits;--fibres;0:5;--waves;1:200000:1;--out;f.fits"
    "missing_image|missing --image IMAGE.fits|--psf;p.fits;--fibres;0:5;--waves;6000:6100:1;--out;f.fits"
    "missing_out|missing --out FRAME.fits|--psf;p.fits;--image;i.fits;--fibres;0:5;--waves;6000:6100:1"
    "ndecorr|--ndecorr: noise decorrelation .* is not supported|--psf;p.fits;--image;i.fits;--fibres;0:5;--waves;6000:6100:1;--out;f.fits;--ndecorr"
    "regularize|--regularize '-1': must be a number from 0 to 1e150|--psf;p.fits;--image;i.fits;--fibres;0:5;--waves;6000:6100:1;--out;f.fits;--regularize;-1"
    "wavesize|--wavesize '200': must be a whole number from 1 to 88|--psf;p.fits;--image;i.fits;--fibres;0:5;--waves;6000:6100:1;--out;f.fits;--wavesize;200"
    "clean_in_run|unknown option '--clean'|--psf;p.fits;--image;i.fits;--fibres;0:5;--waves;6000:6100:1;--out;f.fits;--clean")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 message)
  list(SUBLIST parts 2 -1 args)
  gw_cli_test(NAME cli_ex2d_desi_usage_${name} RC 2 WORKDIR FILES none STDERR "${message}"
    ARGS run ex2d --device cpu ${args})
endforeach()
gw_cli_test(NAME cli_synth_ex2d_usage_image RC 2 WORKDIR FILES none STDERR "unknown option '--image'"
  ARGS synth ex2d --psf p.fits --image i.fits --fibres 0:5 --waves 6000:6100:1 --out i.fits)
gw_cli_test(NAME cli_synth_ex2d_missing_waves RC 2 WORKDIR FILES none STDERR "missing --waves W0:W1:DW"
  ARGS synth ex2d --psf p.fits --fibres 0:5 --out i.fits)
# A PSF that is not a FITS file: exit 1, the file named, nothing written.
gw_cli_test(NAME cli_synth_ex2d_bad_psf RC 1 WORKDIR FILES none STDERR "--psf: .*CMakeLists.txt"
  ARGS synth ex2d --psf ${CMAKE_CURRENT_SOURCE_DIR}/CMakeLists.txt --fibres 0:5 --waves 6000:6100:1 --out i.fits)

# The real PSF's own rules (its fibres, its wavelength domain, its CCD), then the round trip through the files,
# on the CPU and on the GPU (Skipped without one); both need $GW_DATA_DIR (gw_cli_ex2d_desi.cmake).
add_executable(ex2d_frame_pulls ex2d_frame_pulls.c)
target_link_libraries(ex2d_frame_pulls PRIVATE PkgConfig::CFITSIO gw_warnings m)
add_test(NAME cli_ex2d_desi_round_trip_cpu COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness>
  -DPULLS=$<TARGET_FILE:ex2d_frame_pulls> -DDEVICE=cpu -DWORKDIR=${GW_CLI_WORK}/cli_ex2d_desi_round_trip_cpu
  -P ${CMAKE_CURRENT_SOURCE_DIR}/gw_cli_ex2d_desi.cmake)
set_tests_properties(cli_ex2d_desi_round_trip_cpu PROPERTIES LABELS "host;data" TIMEOUT 600
  SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED" ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:;GW_DEVICE=unset:")
gw_add_gpu_test(NAME cli_gpu_ex2d_desi_round_trip COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness>
  -DPULLS=$<TARGET_FILE:ex2d_frame_pulls> -DDEVICE=cuda -DWORKDIR=${GW_CLI_WORK}/cli_gpu_ex2d_desi_round_trip
  -P ${CMAKE_CURRENT_SOURCE_DIR}/gw_cli_ex2d_desi.cmake TIMEOUT 600)
set_tests_properties(cli_gpu_ex2d_desi_round_trip PROPERTIES SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED")

# The DESI-file path under the Valgrind gate (a 1-patch run, a refused synth, a bad image): no error, no leak.
if(GW_VALGRIND)
  add_test(NAME cli_ex2d_desi.memcheck COMMAND ${CMAKE_COMMAND} -DGW=$<TARGET_FILE:gpuwitness> -DBASH=${GW_BASH}
    -DGATE=${GW_CTEST_DIR}/gw_valgrind_gate.sh -DVALGRIND=${GW_VALGRIND}
    -DWORKDIR=${GW_CLI_WORK}/cli_ex2d_desi.memcheck -P ${CMAKE_CURRENT_SOURCE_DIR}/gw_cli_ex2d_desi_memcheck.cmake)
  set_tests_properties(cli_ex2d_desi.memcheck PROPERTIES LABELS "memcheck;host;data" TIMEOUT 900
    SKIP_REGULAR_EXPRESSION "GW_CLI_SKIPPED" ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:;GW_DEVICE=unset:")
endif()
