import gzip, sys
from collections import defaultdict
path=sys.argv[1]
R=[]
for line in gzip.open(path,'rt'):
    if line.startswith('#') or not line.strip(): continue
    f=[int(x) for x in line.split()]
    B,s,kind,a,b,c,bx,by,smid,te,tw,tm,tx=f
    if s!=2: continue
    R.append((kind,a,b,bx,smid,te,tw,tm,tx))
t0=min(r[5] for r in R)
R=[(k,a,b,bx,sm,(te-t0)/1e3,(tw-t0)/1e3 if tw else None,(tm-t0)/1e3 if tm else None,(tx-t0)/1e3) for k,a,b,bx,sm,te,tw,tm,tx in R]
att=sorted([r for r in R if r[0]==2], key=lambda r:r[5])
n=256
qkv=sorted([r for r in R if r[0] in (1, 12) and r[1]==6144], key=lambda r:r[5])  # tile GEMM or wide kernel
nq=len(qkv)//36
# per layer
import statistics
early=[];firstexit=[]
for L in range(36):
    A=att[L*n:(L+1)*n]; Q=qkv[L*nq:(L+1)*nq]
    qend=max(r[8] for r in Q); qwait=min(r[6] for r in Q if r[6] is not None)
    ent=[r[5]-qend for r in A]
    early.append(sum(1 for e in ent if e < -1.0))
    # first stage? tm mark
    ex=[r[8]-qend for r in A]
    if L==18:
        print("layer 18: qkv wait->end %.2f us"%(qend-qwait))
        hist=defaultdict(int)
        for e in ent: hist[int((e)//2)*2]+=1
        print("attention CTA entries rel. to qkv end (2us bins):", sorted(hist.items()))
        print("exits rel qkv end: p10 %.1f p50 %.1f p90 %.1f max %.1f"%tuple(sorted(ex)[int(q*(n-1))] for q in (0.1,0.5,0.9,1.0)))
        # early CTAs' exit vs late ones
        e1=[r[8]-qend for r in A if r[5]-qend< -1.0]; e2=[r[8]-qend for r in A if r[5]-qend>=-1.0]
        if e1: print("early CTAs: %d, exit median %.1f; late: %d, exit median %.1f"%(len(e1),statistics.median(e1),len(e2),statistics.median(e2)))
sys.stdout.flush(); print("attention CTAs entering >1us before qkv's last exit, per layer:", early)
