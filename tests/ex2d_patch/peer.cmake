# SPDX-License-Identifier: MIT
# peer_specter_ex2d: `gpuwitness synth ex2d --clean` -> `gpuwitness run ex2d` -> bench/peers/specter_ex2d.py,
# our frame against specter's own extraction of the same DESI image (gw_peer_specter.sh). Exit 77 (Skipped)
# first thing when specter is not importable, as in CI; run it locally with PYTHONPATH=/path/to/specter/py.
# The data folder comes from GW_DATA_DIR at test time (Skipped without it).
# Included by tests/ex2d_patch/CMakeLists.txt (with CUDA: it needs the gpuwitness binary).
add_test(NAME peer_specter_ex2d
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gw_peer_specter.sh $<TARGET_FILE:gpuwitness> -
    ${CMAKE_CURRENT_BINARY_DIR}/peer_specter_ex2d)
set_tests_properties(peer_specter_ex2d PROPERTIES LABELS "peer;data" SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT_MODIFICATION "GW_REQUIRE_GPU=unset:;GW_DEVICE=unset:")
