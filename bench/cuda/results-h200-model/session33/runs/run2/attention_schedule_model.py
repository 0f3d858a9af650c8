# A model, not a measurement: from run 2's stamped base step (its raw stamps, unzipped to /tmp/st_base.txt, are not committed),
# each SM's two CTA slots keep their measured time per unit, and units go to whichever slot is free first.
import heapq, statistics as st
R=[]
for line in open('/tmp/st_base.txt'):
    if line.startswith('#') or not line.strip(): continue
    f=[int(x) for x in line.split()]
    B,s,kind,a,b,c,bx,by,smid,te,tw,tm,tx=f
    if s!=2 or kind!=2: continue
    R.append((bx,smid,te,tw,tx))
R.sort(key=lambda r:r[2])
L=[R[i:i+256] for i in range(0,len(R),256)]
res=[]
for ch in L:
    w0=min(r[3] for r in ch)
    # per-CTA time for its 2 units measured from wait (CTAs preloaded before): dur = exit - w0
    rates={}  # slot -> time per unit
    slots=[]
    bysm={}
    for bx,sm,te,tw,tx in ch:
        d=(tx-w0)/1e3
        bysm.setdefault(sm,[]).append(d/2.0)
    for sm,v in bysm.items():
        if len(v)==1: v=v+[v[0]]
        slots+=v[:2]
    # pad to 264 slots (132 SMs x 2)
    while len(slots)<264: slots.append(st.mean(slots))
    static=max((tx-w0)/1e3 for bx,sm,te,tw,tx in ch)
    def dyn(nunits, unit_scale):
        h=[(0.0,i) for i in range(len(slots))]
        heapq.heapify(h); end=0
        for u in range(nunits):
            t,i=heapq.heappop(h); t2=t+slots[i]*unit_scale; end=max(end,t2); heapq.heappush(h,(t2,i))
        return end
    res.append((static, dyn(512,1.0), dyn(1024,0.5), dyn(2048,0.25)))
for i,n in enumerate(["static (measured last exit)","dynamic, 512 units","dynamic, 1024 half units","dynamic, 2048 quarter units"]):
    print("%-32s mean over layers %.2f us"%(n, st.mean(r[i] for r in res)))
