export DGXNGPU=8
export FP8=True
export FP8_AMAX_HISTORY=32
: "${ACG:=full}"
export ACL=${ACL:-21}
export MBS=1
export LORA_A2A=1
