import re,sys
# Flags a register-A HGMMA operand written inside the loop that reads it without a
# re-definition before the read (loop-invariant A clobbered).
lines=[l for l in open(sys.argv[1]) if re.search(r'/\*[0-9a-f]{4}\*/',l)]
ins=[]
for l in lines:
    m=re.search(r'/\*([0-9a-f]{4})\*/\s+(.*?);',l)
    if m: ins.append((int(m.group(1),16),m.group(2).strip()))
# find backward branches (loops)
bad=0
for idx,(pc,txt) in enumerate(ins):
    m=re.search(r'BRA\s+0x([0-9a-f]+)',txt)
    if not m: continue
    tgt=int(m.group(1),16)
    if tgt>=pc: continue
    body=[(p,t) for p,t in ins if tgt<=p<=pc]
    aregs=set()
    for p,t in body:
        mm=re.search(r'HGMMA\.\S+\s+R\d+,\s+R(\d+),\s+gdesc',t)
        if mm:
            b=int(mm.group(1)); aregs|={b,b+1,b+2,b+3}
    # registers read as A before being written in the body (live-in)
    written=set(); livein=set()
    for p,t in body:
        mm=re.search(r'HGMMA\.\S+\s+R\d+,\s+R(\d+),\s+gdesc',t)
        if mm:
            b=int(mm.group(1))
            for r in range(b,b+4):
                if r not in written: livein.add(r)
        w=re.match(r'(?:@!?U?P\w+\s+)?[A-Z0-9_.]+\s+R(\d+)',t)
        if w and not t.startswith('HGMMA') and not t.startswith('ST'):
            written.add(int(w.group(1)))
    clob=sorted(livein & written)
    if clob:
        bad+=1
        print('loop 0x%x-0x%x: live-in A registers written in the loop: %s'%(tgt,pc,clob))
print('clobbers:',bad)
