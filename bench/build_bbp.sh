#!/usr/bin/env bash
# Build bbpPairings (the FIDE-endorsed Dutch pairing engine, Apache-2.0) from
# source, outside the project tree, for bench/swiss_pairing_agreement.py and
# tests/core/test_swiss_pairing_reference.py. Nothing in livegain needs it.
#
# Usage: bench/build_bbp.sh SOURCE OUTPUT_DIR [REF]
#   SOURCE      a bbpPairings source directory (with its Makefile), or a bare
#               git repository of it (REF is exported: HEAD by default, the
#               2025 Dutch rules; v5.0.1 is the last release of the 2017 rules)
#   OUTPUT_DIR  where the sources are copied and built; the engine ends up
#               as OUTPUT_DIR/bbpPairings.exe
# Example:
#   bench/build_bbp.sh /work/.mirror/BieremaBoyzProgramming+bbpPairings/repo /work/build/bbpPairings
# Then: export LIVEGAIN_BBP=/work/build/bbpPairings/bbpPairings.exe (the
# default path of the bench and the test). Needs g++ (C++20) and make.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 SOURCE OUTPUT_DIR [REF]" >&2
    exit 2
fi
src=$1
out=$2
ref=${3:-HEAD}

case "$(realpath -m "$out")/" in
"$(realpath "$(dirname "$0")/..")"/*)
    echo "$0: build outside the project tree, not in $out" >&2
    exit 2
    ;;
esac

mkdir -p "$out"
if [ -f "$src/Makefile" ]; then
    if [ $# -eq 3 ]; then
        echo "$0: REF applies to a git repository, not to the directory $src" >&2
        exit 2
    fi
    cp -R "$src"/. "$out"/
elif git --git-dir="$src" rev-parse --verify -q "$ref^{commit}" >/dev/null; then
    git --git-dir="$src" archive "$ref" | tar -x -C "$out"
    git --git-dir="$src" rev-parse "$ref^{commit}" >"$out/COMMIT"
else
    echo "$0: $src is neither a bbpPairings source directory nor a git repository with $ref" >&2
    exit 2
fi

# The Makefile's release build: -O3, -flto, the Dutch and Burstein systems.
make -C "$out" -j"$(nproc)" bbpPairings.exe
test -x "$out/bbpPairings.exe"
echo "built $out/bbpPairings.exe"
