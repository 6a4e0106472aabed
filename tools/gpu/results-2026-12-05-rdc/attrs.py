import sys, struct
from cuda.bindings import driver as cu
def ck(r):
    e=r[0] if isinstance(r,tuple) else r
    assert e==cu.CUresult.CUDA_SUCCESS, r
    return r[1:] if isinstance(r,tuple) and len(r)>1 else None
cu.cuInit(0); dev=ck(cu.cuDeviceGet(0))[0]; ctx=ck(cu.cuDevicePrimaryCtxRetain(dev))[0]; ck(cu.cuCtxSetCurrent(ctx))
def sections(b):
    shoff=struct.unpack_from('<Q',b,0x28)[0]; es,n,si=struct.unpack_from('<HHH',b,0x3A)
    secs=[struct.unpack_from('<IIQQQQIIQQ',b,shoff+i*es) for i in range(n)]
    so=secs[si][4]; nm=lambda o: b[so+o:b.index(b'\0',so+o)].decode()
    return [(nm(s[0]),s[5]) for s in secs]
for p in sys.argv[1:]:
    b=open(p,'rb').read()
    secs=sections(b)
    mod=ck(cu.cuModuleLoadData(b))[0]
    for name,_ in secs:
        if name.startswith('.text.'):
            k=name[6:]
            r=cu.cuModuleGetFunction(mod,k.encode())
            if r[0]!=cu.CUresult.CUDA_SUCCESS: continue
            f=r[1]
            a=lambda x: ck(cu.cuFuncGetAttribute(x,f))[0]
            A=cu.CUfunction_attribute
            print(p,k,'regs',a(A.CU_FUNC_ATTRIBUTE_NUM_REGS),'local',a(A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),'shared',a(A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES))
    print('  sections', [(n,s) for n,s in secs if 'shared' in n or 'reserv' in n.lower()])
