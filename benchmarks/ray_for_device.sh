#!/usr/bin/env bash
# Ray for a GPU machine with no network, whose calls carry at most 64 MiB each: its wheels (and
# their dependencies, for the machine's Python) packed here into pieces under
# .third_party/ray-N/, one piece carried per call, gathered and installed there.
#
#   bash benchmarks/ray_for_device.sh pack [PYTHON_VERSION]   # here: .third_party/ray-1, ray-2
#   bash benchmarks/ray_for_device.sh gather                   # there, each call: keeps its piece
#   bash benchmarks/ray_for_device.sh install                  # there, once every piece is kept
#
# A call on the GPU machine carries one folder (carry: [".third_party/ray-1"], then ray-2 on the
# same warm machine) and runs `gather`; the last one runs `install` too. Pieces wait in
# /tmp/kb-ray-pieces, which lasts as long as the machine stays warm.
set -euo pipefail
cd "$(dirname "$0")/.."
version="2.60.0"
pieces=/tmp/kb-ray-pieces
case "${1:-}" in
pack)
    python="${2:-3.12}"
    work=$(mktemp -d)
    python3 -m pip download -q "ray==$version" --python-version "$python" --only-binary=:all: \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux_2_28_x86_64 -d "$work/wheels"
    rm -rf .third_party/ray-[0-9]*
    tar cf - -C "$work" wheels | split -b 45m -d -a 1 - "$work/ray.tar."
    n=0
    for piece in "$work"/ray.tar.*; do
        n=$((n + 1))
        mkdir -p ".third_party/ray-$n"
        mv "$piece" ".third_party/ray-$n/"
    done
    rm -rf "$work"
    du -sh .third_party/ray-[0-9]*
    ;;
gather)
    mkdir -p "$pieces"
    found=0
    for folder in .third_party/ray-[0-9]*; do
        [[ -d "$folder" ]] || continue
        cp "$folder"/ray.tar.* "$pieces/" && found=1
    done
    ((found)) || { echo "no .third_party/ray-N folder was carried"; exit 1; }
    ls -la "$pieces"
    ;;
install)
    work=$(mktemp -d)
    cat "$pieces"/ray.tar.* | tar xf - -C "$work" \
        || { echo "the pieces in $pieces do not make one archive: is one missing?"; exit 1; }
    python3 -m pip install -q --no-index --find-links "$work/wheels" "ray==$version"
    python3 -c 'import ray; print("ray", ray.__version__)'
    ;;
*)
    echo "usage: $0 pack [PYTHON_VERSION] | gather | install" >&2
    exit 2
    ;;
esac
