#!/usr/bin/env bash
# Packs a built gpuprep with every shared library it needs, and the loader that runs it, into one folder,
# so that it runs on a GPU machine whose distribution differs from the build machine's:
#   DIR/run ARGS...   (the bundled loader, the bundled libraries first, then the machine's own for the
#                      NVIDIA driver's libraries, which gpuprep opens at run time)
# Usage: tools/device/bundle.sh BUILD/gpuprep DIR
set -euo pipefail
bin=${1:?usage: bundle.sh GPUPREP DIR}
dir=${2:?usage: bundle.sh GPUPREP DIR}
rm -rf "$dir"
mkdir -p "$dir/lib"
cp "$bin" "$dir/gpuprep"
strip --strip-debug "$dir/gpuprep"  # the working tree that travels is bounded
# What gpuprep links, and what it opens with dlopen (libcurl, libcrypto) with their own needs.
objs=("$bin")
for soname in libcurl.so.4 libcrypto.so.3; do  # libarchive (redistributable archives) is not needed there
  path=$(ldconfig -p | awk -v n="$soname" '$1 == n && /x86-64/ && !p {print $NF; p = 1}')
  [ -n "$path" ] || { echo "bundle.sh: $soname not found" >&2; exit 1; }
  cp -L "$path" "$dir/lib/$soname"
  objs+=("$path")
done
for obj in "${objs[@]}"; do
  ldd "$obj" | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}'
done | sort -u | while read -r lib; do
  cp -L "$lib" "$dir/lib/$(basename "$lib")"
done
cat >"$dir/run" <<'RUN'
#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/lib/ld-linux-x86-64.so.2" --library-path \
  "$here/lib:/usr/local/nvidia/lib64:/usr/local/nvidia/lib:/usr/lib/x86_64-linux-gnu:/usr/lib64" \
  "$here/gpuprep" "$@"
RUN
chmod +x "$dir/run"
du -sh "$dir"
