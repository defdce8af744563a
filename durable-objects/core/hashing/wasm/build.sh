#!/bin/sh
# Builds xxh3.wasm from xxHash's xxhash.h (Debian bookworm: libxxhash-dev 0.8.1) with clang 14 and
# wasm-ld 14 (apt-get install clang-14 lld-14 libxxhash-dev). The build is deterministic: the same
# inputs give the same bytes, which `xxh3.wasm.sha256` records. Run it after changing xxh3.c.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
header=${XXHASH_H:-/usr/include/xxhash.h}
grep -q '#define XXH_VERSION_RELEASE  1' "$header" && grep -q '#define XXH_VERSION_MINOR    8' "$header" || {
  echo "build.sh: $header is not xxHash 0.8.1" >&2
  exit 1
}
include=$(mktemp -d)
trap 'rm -rf "$include"' EXIT
cp "$header" "$include/xxhash.h"
clang-14 --target=wasm32 -std=c11 -O3 -DNDEBUG -ffreestanding -nostdlib -mbulk-memory \
  -I"$here/shim" -I"$include" -fuse-ld="$(command -v wasm-ld-14)" \
  -Wl,--no-entry -Wl,--export=__heap_base -Wl,--strip-all \
  -o "$here/xxh3.wasm" "$here/xxh3.c"
(cd "$here" && sha256sum xxh3.wasm > xxh3.wasm.sha256)
