import math,sys,statistics
def load(f):
    d={}
    for l in open(f):
        p=l.split()
        if len(p)>=7 and p[-1]=='OK':
            d[(p[0],p[2],p[3])]=float(p[5])
    return d
cub={}
for l in open('cublas.log'):
    p=l.split()
    if len(p)>=6 and p[0].startswith('cublas_'):
        cub[(p[2],p[3])]=float(p[5])
bs=sys.argv[1].split(','); rounds=int(sys.argv[2])
R={b:[load(f'user-{b}{r}.log') for r in range(1,rounds+1)] for b in bs}
avg={b:{k:sum(R[b][r][k] for r in range(rounds))/rounds for k in R[b][0] if all(k in R[b][r] for r in range(rounds))} for b in bs}
print("%-20s %-16s %-5s "%("kernel","shape","dt")+" ".join("%7s"%b for b in bs)+" "+" ".join("%7s"%(b+"/m") for b in bs[1:])+"  "+" ".join("%6s"%(b+"/c") for b in bs))
gm={b:[] for b in bs}
for k in avg[bs[0]]:
    if any(k not in avg[b] for b in bs): continue
    c=cub.get((k[1],k[2]),float('nan'))
    for b in bs[1:]: gm[b].append(avg[b][k]/avg[bs[0]][k])
    print("%-20s %-16s %-5s "%k+" ".join("%7.1f"%avg[b][k] for b in bs)+" "+" ".join("%7.3f"%(avg[b][k]/avg[bs[0]][k]) for b in bs[1:])+"  "+" ".join("%6.2f"%(avg[b][k]/c) for b in bs))
for b in bs[1:]: print("geomean",b,"/",bs[0],"%.4f"%math.exp(sum(map(math.log,gm[b]))/len(gm[b])), "n=",len(gm[b]))
print("cuBLAS (TFLOP/s):", ", ".join("%s %s %.1f"%(k[0],k[1],v) for k,v in cub.items()))
