export DGXNGPU=8
