#!/bin/sh
# The device machine's side of make gpu: what a session runs there, in one
# call of the device tool, the moment a GPU is lent (docs/hardware.md,
# "make gpu"). Here, first: make gpu-carry (stripped, gzipped binaries in
# out/carry: the device tool carries at most 64 MiB). Then, with carry
# ["out/carry"] and a time limit of about 540 s:
#
#   sh tools/measure/gpu/device.sh
#
# It unpacks bin/placer and bin/placer-cuda, points placer-cuda at the
# image's cuBLAS (the pip wheel's libcublas.so.13: PLACER_CUBLAS), records
# the machine (nvidia-smi, torch, CPU), and runs tools/measure/gpu/run.sh into
# /tmp/gpu, packing everything into $OUT/gpu.tgz after every step (the
# device tool returns a handful of files only, and what a stopped run
# measured is kept). Unpack it here into measurements/DATE-GPU/.
set -u
OUT=${OUT:-/tmp/gpu-out}
D=${GPU_DIR:-/tmp/gpu}
mkdir -p bin "$OUT"
rm -rf "$D"
mkdir -p "$D"
for b in placer placer-cuda; do
	if [ -f "out/carry/$b.gz" ]; then
		gunzip -c "out/carry/$b.gz" > "bin/$b" && chmod +x "bin/$b"
	fi
done
L=$(find /opt/torch/.venv /usr/local/cuda* /usr/lib/x86_64-linux-gnu -name 'libcublas.so.1[0-9]' 2>/dev/null | head -1)
[ -n "$L" ] && export PLACER_CUBLAS="$L"
{
	nvidia-smi
	${TORCH_PY:-python3} -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.cuda.get_device_name())"
	nproc
	lscpu | grep -i 'model name'
	echo "cublas=${L:-}"
} > "$D/machine.txt" 2>&1
GPU_TAR="$OUT/gpu.tgz" PYTHONUNBUFFERED=1 sh tools/measure/gpu/run.sh "$D"
