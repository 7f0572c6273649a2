import random, math
INT_MAX = 2**31-1
def merge_path_search(d, ro, rows, nnz):
    lo = d - nnz if d > nnz else 0
    hi = d if d < rows else rows
    while lo < hi:
        p = lo + (hi-lo)//2
        if ro[p+1] <= d - p - 1: lo = p+1
        else: hi = p
    return lo, d - lo
def seg_start(s, items, slack, ro, rows, nnz):
    total = rows + nnz
    d = min(s*items, total)
    r, j = merge_path_search(d, ro, rows, nnz)
    if r < rows and j - ro[r] <= slack: j = ro[r]
    return r, j
def plan(brow, bnz, bstart, rows):
    S = len(brow)-1
    head=[-1]*S; tail=[-1]*S; split=[]; first=[0]; nxt=0
    for s in range(S):
        rb,jb,re,je = brow[s],bnz[s],brow[s+1],bnz[s+1]
        h = rb < rows and jb > bstart[s]
        if h:
            assert split and split[-1]==rb
            head[s]=nxt; nxt+=1; first[-1]=nxt
        middle = h and re == rb
        if not middle and re < rows and je > bstart[s+1]:
            split.append(re); tail[s]=nxt; nxt+=1; first.append(nxt)
    return head, tail, split, first
def run(ro, ci, val, x, items, alpha=1.0, beta=0.0, c0=None):
    rows = len(ro)-1; nnz = ro[-1]
    S = (rows+nnz+items-1)//items
    b = [seg_start(s, items, items//2, ro, rows, nnz) for s in range(S+1)]
    brow=[t[0] for t in b]; bnz=[t[1] for t in b]; bstart=[ro[r] if r<rows else nnz for r in brow]
    head, tail, split, first = plan(brow, bnz, bstart, rows)
    C = list(c0) if c0 else [float('nan')]*rows
    carry = [None]*(first[-1] if first else 0)
    for seg in range(S):
        rb,re,jb,je = brow[seg],brow[seg+1],bnz[seg],bnz[seg+1]
        hd,tl = head[seg],tail[seg]
        last = re if (tl>=0 or (hd>=0 and re==rb)) else re-1
        def finish(row, s):
            if row==rb and hd>=0: carry[hd]=s
            elif row==re and tl>=0: carry[tl]=s
            else: C[row] = alpha*s if beta==0 else alpha*s + beta*C[row]
        for row in range(rb, last+1):
            if max(ro[row], jb) >= min(ro[row+1], je): finish(row, 0.0)
        first_row=rb; run_row=-1; run_sum=0.0
        base=jb
        while base < je:
            end_l=[ro[first_row+l+1] if first_row+l<=last else INT_MAX for l in range(32)]
            keys=[];vs=[];rowend=[];jj=[]
            for lane in range(32):
                j=base+lane; valid=j<je
                pos=0
                for step in (16,8,4,2,1):
                    if end_l[pos+step-1] <= j: pos+=step
                if pos==31 and end_l[31]<=j: pos=32
                if pos<32: row=first_row+pos; re_=end_l[pos]
                else:
                    lo=first_row+32; hi=last
                    while lo<hi:
                        mid=lo+(hi-lo)//2
                        if ro[mid+1]<=j: lo=mid+1
                        else: hi=mid
                    row=lo; re_=ro[row+1] if row<=last else INT_MAX
                v = val[j]*x[ci[j]] if valid else 0.0
                keys.append(row if valid else INT_MAX); vs.append(v); rowend.append(re_); jj.append(j)
            d=1
            while d<32:
                nv=list(vs)
                for l in range(32):
                    if l>=d and keys[l-d]==keys[l]: nv[l]=vs[l]+vs[l-d]
                vs=nv; d*=2
            for l in range(32):
                if jj[l]<je and keys[l]==run_row: vs[l]+=run_sum
            done=[False]*32
            for l in range(32):
                valid=jj[l]<je
                lastrow = valid and (l==31 or keys[l+1]!=keys[l])
                done[l] = jj[l]==rowend[l]-1 or jj[l]==je-1
                if lastrow and done[l]: finish(keys[l], vs[l])
            row31=keys[31]; run_sum=vs[31]; run_row = -1 if done[31] else row31
            first_row = first_row if row31==INT_MAX else row31
            base+=32
    # fixup
    for k,r in enumerate(split):
        s=sum(carry[first[k]:first[k+1]])
        C[r] = alpha*s if beta==0 else alpha*s+beta*C[r]
    return C
def ref(ro,ci,val,x,alpha=1.0,beta=0.0,c0=None):
    rows=len(ro)-1
    return [alpha*sum(val[j]*x[ci[j]] for j in range(ro[r],ro[r+1])) + (beta*c0[r] if beta else 0) for r in range(rows)]
random.seed(1)
def mat(lengths, cols):
    ro=[0]
    for L in lengths: ro.append(ro[-1]+L)
    ci=[random.randrange(cols) for _ in range(ro[-1])]; val=[random.uniform(-1,1) for _ in range(ro[-1])]
    return ro,ci,val
tests = {
 'irregular': [0 if i%10==0 else random.randint(0,40) for i in range(777)],
 'alone': [100000],
 'among': [100000 if i==2500 else random.randint(0,8) for i in range(5000)],
 'sparse': [100000 if i==10000 else (random.randint(1,40) if i%97==0 else 0) for i in range(20000)],
}
for name, L in tests.items():
    ro,ci,val=mat(L, 555)
    x=[random.uniform(-1,1) for _ in range(555)]
    for items in (512, 64):
        got=run(ro,ci,val,x,items); want=ref(ro,ci,val,x)
        bad=[r for r in range(len(want)) if not (abs(got[r]-want[r])<=1e-9*(1+abs(want[r])))]
        print(name, items, 'bad rows', len(bad), bad[:5], [(got[r],want[r]) for r in bad[:2]])
