# SPDX-License-Identifier: MIT
# Put first on PYTHONPATH by the test bench_html_missing_jinja2 (tests/cli/bench.cmake): hides Debian's jinja2 so
# that `gpuwitness bench --html` must fail before any work, naming the missing module and its Debian package.
raise ImportError("hidden by the test bench_html_missing_jinja2")
