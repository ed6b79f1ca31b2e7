#!/usr/bin/env bash
# Packs the build dependencies a GPU machine without package access lacks (Criterion and cJSON: headers,
# shared libraries, pkg-config files) into a prefix folder, for ci/gpu.sh --prefix DIR.
# Run on a Debian machine that can install packages, from the project root.
#   usage: ci/bundle-deps.sh [DEST]   (default .gpu-deps, git-ignored)
set -euo pipefail
dest=${1:-.gpu-deps}
bundler=../shared/gpu-runner/bundle-criterion.sh
if [ -f "$bundler" ]; then
  bash "$bundler" "$dest"
else
  echo "ci/bundle-deps.sh: $bundler not found; bundling cJSON only" >&2
  mkdir -p "$dest/include" "$dest/lib/pkgconfig"
fi
if ! dpkg -s libcjson-dev >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcjson-dev >/dev/null
fi
hdr=$(dpkg -L libcjson-dev | grep '/cjson/cJSON\.h$' | head -n 1)
mkdir -p "$dest/include/cjson"
cp "$hdr" "$dest/include/cjson/"
lib=$(dpkg -L libcjson-dev | grep -E '/libcjson\.so$' | head -n 1)
cp -P "$(dirname "$(readlink -f "$lib")")"/libcjson.so* "$dest/lib/"
pc=$(dpkg -L libcjson-dev | grep '/libcjson\.pc$' | head -n 1)
# Debian's libcjson.pc has absolute paths and no prefix= line: point both at the bundle.
sed -e "s|^libdir=.*|libdir=\${pcfiledir}/..|" -e "s|^includedir=.*|includedir=\${pcfiledir}/../../include|" \
    "$pc" > "$dest/lib/pkgconfig/libcjson.pc"
du -sh "$dest"
