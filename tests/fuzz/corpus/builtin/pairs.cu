// cutegen-space: CG_P_TILE=128x128,64x64 CG_P_MODE=0,1 CG_P_CLUSTER=1,2,4
// cutegen-start: CG_P_MODE=1
// cutegen-stages: a=CG_P_MODE,CG_P_CLUSTER b=CG_P_TILE
