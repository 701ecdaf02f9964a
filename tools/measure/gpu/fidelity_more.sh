#!/bin/sh
# make gpu's fidelity-more step (tools/measure/gpu/run.sh 2b): the models whose
# steps a roofline misses most, one batch each, each a file of its own:
# RegNetY-1.6GF's grouped convolutions, EfficientNet-B0's and MobileNetV3's
# depthwise ones, an LSTM language model (tools/measure/fidelity/models.py).
#
#   tools/measure/gpu/fidelity_more.sh OUT DEVICE QUICK
set -u
OUT=$1
DEVICE=$2
QUICK=$3
PY=${TORCH_PY:-python3}
if [ "$QUICK" = 1 ]; then
	MODELS="regnet_y_1_6gf"
	RUN="--warmup 1 --steps 1 --profile-steps 1"
else
	MODELS="regnet_y_1_6gf torchvision.models:efficientnet_b0 torchvision.models:mobilenet_v3_large tools/measure/fidelity/models.py:lstm_lm"
	RUN="--warmup 3 --steps 10 --profile-steps 3"
fi
rc=0
for m in $MODELS; do
	n=${m##*:}
	case $m in
	*lstm_lm) A="--input-shape 35:int64 --batch 20 --batches 20" ;;
	*:*) A="--input-shape 3,224,224 --batch 32 --batches 32" ;;
	*) A="--batches 32" ;;
	esac
	[ "$QUICK" = 1 ] && A="$(echo "$A" | sed 's/--batches [0-9]*//') --batches 2"
	# shellcheck disable=SC2086
	$PY tools/measure/fidelity/fidelity.py --device "$DEVICE" --model "$m" $A $RUN --placer "$PLACER" --json \
		--work "$OUT/fidelity-work" -o "$OUT/fidelity-$n.json" || { echo "fidelity-more: $m failed" >&2; rc=1; }
done
exit $rc
