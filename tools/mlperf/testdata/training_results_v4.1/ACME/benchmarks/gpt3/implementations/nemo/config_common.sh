export USE_DIST_OPTIMIZER=True
export FP8_PARAMS=True
