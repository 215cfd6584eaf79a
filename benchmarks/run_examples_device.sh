#!/bin/bash
# On the device machine: runs every example of the gallery at a size for a big GPU (the same
# code as on lavapipe), each checking itself against numpy. Carry: .gl .whl (with
# .whl/examples: Pillow, matplotlib and their wheels, where the machine lacks them).
# Writes $OUT/examples.log and the pictures under $OUT/pictures.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/pictures"
exec > >(tee "$OUT/examples.log") 2>&1
source benchmarks/device_env.sh
if ! python3 -c "import PIL, matplotlib" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-examples \
        .whl/examples/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site-examples
fi
run() { echo "== $*"; timeout 120 python3 "$@" --out "$OUT/pictures" || echo "!! failed: $*"; }
run examples/mandelbrot.py --size 4096 --iterations 4000
run examples/game_of_life.py --size 1024 --steps 1000
run examples/blur.py --size 4096
run examples/nbody.py --size 8192 --steps 600 --check-steps 5
run examples/tile_binning.py --size 1024
run examples/atomic_append.py --size 4096
run examples/prefix_sum.py --size 33554432
run examples/histogram_equalize.py --size 4096
run examples/particles_sort.py --size 32768
run examples/linked_list.py --size 2048
run examples/work_queue.py --size 1024
