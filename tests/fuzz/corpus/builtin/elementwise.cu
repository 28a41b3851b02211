// cutegen-space: CG_P_THREADS=128,256,512 CG_P_UNROLL=1,2,4 CG_P_WAVES=0,1
// cutegen-start: CG_P_THREADS=256 CG_P_UNROLL=1 CG_P_WAVES=0
// cutegen-stages: tile=CG_P_UNROLL,CG_P_THREADS grid=CG_P_WAVES
