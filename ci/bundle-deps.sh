#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packs the Debian build dependencies that a GPU machine without package access lacks (Criterion, cJSON,
# libtiff, cfitsio, zlib) into one prefix folder: their headers, shared libraries with every library those need but the C
# library itself, and pkg-config files that point into the folder. ci/gpu.sh --prefix DIR uses it.
# Run from the project root on a Debian machine that can install packages (missing -dev packages are
# installed first).
#   usage: ci/bundle-deps.sh [DEST]   (default .gpu-deps, git-ignored)
# On the GPU machine: ci/gpu.sh --prefix .gpu-deps (which sets CMAKE_PREFIX_PATH and PKG_CONFIG_PATH for
# the build, links with -rpath-link into the folder, and sets LD_LIBRARY_PATH only for the programs under
# test: the folder carries libraries such as libz that must not shadow the machine's own tools).
set -euo pipefail
dest=${1:-.gpu-deps}
packages=(libcriterion-dev libcjson-dev libtiff-dev libcfitsio-dev zlib1g-dev)

missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

rm -rf "$dest"
mkdir -p "$dest/include" "$dest/lib/pkgconfig"

# The C library and the compiler's runtime, which every machine with a compiler has: never bundled (the GPU
# machine's own are newer).
is_system_lib() {
  case "$(basename "$1")" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | ld-linux*) return 0 ;;
    libstdc++.so.* | libgcc_s.so.*) return 0 ;; # the compiler's runtime: an older copy would shadow it
  esac
  return 1
}

for p in "${packages[@]}"; do
  while read -r f; do
    case "$f" in
      /usr/include/*)
        [ -f "$f" ] || continue
        rel=${f#/usr/include/}
        rel=${rel#"$(gcc -dumpmachine)"/} # multiarch headers (tiffconf.h) go to the top like the others
        mkdir -p "$dest/include/$(dirname "$rel")"
        cp "$f" "$dest/include/$rel"
        ;;
      *.so)
        real=$(readlink -f "$f")
        base=$(basename "$f")
        cp -P "$(dirname "$real")/$base"* "$dest/lib/" # the .so link, the soname link and the file
        ldd "$real" | awk '/=> \// {print $3}' | while read -r dep; do
          is_system_lib "$dep" || [ -e "$dest/lib/${dep##*/}" ] || cp -L "$dep" "$dest/lib/"
        done
        ;;
      */pkgconfig/*.pc)
        # Paths relative to the .pc file; no private requirements (their .pc files are not bundled, and
        # pkg-config would demand them even for --cflags).
        sed -e 's|^prefix=.*|prefix=${pcfiledir}/../..|' \
            -e 's|^exec_prefix=.*|exec_prefix=${prefix}|' \
            -e 's|^libdir=.*|libdir=${pcfiledir}/..|' \
            -e 's|^includedir=.*|includedir=${pcfiledir}/../../include|' \
            -e '/^Requires.private:/d' -e '/^Libs.private:/d' "$f" > "$dest/lib/pkgconfig/$(basename "$f")"
        ;;
    esac
  done < <(dpkg -L "$p")
done

# Every bundled pkg-config module must resolve from the folder alone, to folders that exist in it.
for pc in "$dest"/lib/pkgconfig/*.pc; do
  module=$(basename "$pc" .pc)
  flags=$(PKG_CONFIG_LIBDIR="$dest/lib/pkgconfig" pkg-config --cflags --libs "$module") ||
    { echo "ci/bundle-deps.sh: $module does not resolve from $dest" >&2; exit 1; }
  for flag in $flags; do
    case "$flag" in
      -I* | -L*) [ -d "${flag:2}" ] && case "$(cd "${flag:2}" && pwd)" in "$(cd "$dest" && pwd)"*) true ;; *) false ;; esac ||
        { echo "ci/bundle-deps.sh: $module points outside $dest: $flag" >&2; exit 1; } ;;
    esac
  done
done
du -sh "$dest"
