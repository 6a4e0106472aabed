/*
 * Oracle for launch::occupancy: runs NVIDIA's own calculator, cuda_occupancy.h (CUDA 12.9,
 * nvidia-cuda-runtime-cu12 wheel), over a grid of inputs and prints one line per point:
 *
 *     <kind> <inputs...> | <outputs...>
 *
 * tests/occupancy_oracle.rs recomputes every <outputs> part from <inputs> with the Rust port and
 * compares the text. Kinds:
 *
 *   hdr                                                  | __CUDA_OCC_MAJOR__ __CUDA_OCC_MINOR__
 *   dev   CC                                             | device values and the header's per-arch constants
 *   occ   CC FUNC dyn carveout block                     | OCC ; MTPB ; POT
 *   pot   CC FUNC dyn carveout                           | MTPB ; POT
 *   mtpb  CC regs maxntid                                | MTPB
 *   avail CC FUNC numBlocks block carveout               | ok bytes | err code
 *   rfb   CC block blocks static dyn                     | registers | -
 *   end   rows (all lines before this one)                 | done
 *
 *   FUNC = regs static barriers maxdyn(def = 49152 - static) shmemcfg(0 DEFAULT, 1 OPTIN)
 *          gc(0 OFF, 1 ON, 2 ON_STRICT) maxntid(- = none)
 *   OCC  = ok blocks warps 0xFACTORS Lregs Lsmem Lwarps Lblocks Lbarriers(- = INT_MAX)
 *             allocRegs allocSmem gc          | err code
 *   MTPB = the largest block size <= min(1024, maxntid) whose register limit (the header's
 *          cudaOccMaxBlocksPerSMRegsLimit: hardware + software + per-thread checks, on the
 *          arch's own sub-partition count) is non-zero; 0 if none
 *   POT  = ok minGridSize blockSize (cudaOccMaxPotentialOccupancyBlockSize with
 *          attributes.maxThreadsPerBlock = MTPB, 132 SMs) | err code
 *   rfb  = the largest register count <= 255 for which cudaOccMaxActiveBlocksPerMultiprocessor
 *          gives >= blocks (1 barrier, OPTIN, maxdyn = max(dyn, 49152 - static), carveout -1)
 *
 * The device values mirror launch/src/occupancy/limits.rs (occupancy.md §5). 11.0 is unknown
 * to the 12.9 header and is run as 10.1, whose limits it shares. In C the structs have no
 * constructors: every struct is zeroed and every field set (occupancy.md §8).
 *
 * Build: cc -std=c99 -O2 -I<wheel>/nvidia/cuda_runtime/include occupancy_oracle.c
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cuda_occupancy.h"

typedef struct {
    const char *label; /* compute capability as the Rust table has it */
    int major, minor;  /* compute capability given to the header */
    int threadsPerSM;
    int regsPerBlock;
    size_t smemPerSM;
    size_t smemOptin;
    size_t smemReserved;
} Arch;

/* maxThreadsPerBlock 1024, regsPerMultiprocessor 65536, warpSize 32 and sharedMemPerBlock
 * 49152 on every row. */
static const Arch ARCHES[] = {
    {"5.0", 5, 0, 2048, 65536, 65536, 49152, 0},
    {"5.2", 5, 2, 2048, 65536, 98304, 49152, 0},
    {"5.3", 5, 3, 2048, 32768, 65536, 49152, 0},
    {"6.0", 6, 0, 2048, 65536, 65536, 49152, 0},
    {"6.1", 6, 1, 2048, 65536, 98304, 49152, 0},
    {"6.2", 6, 2, 2048, 32768, 65536, 49152, 0},
    {"7.0", 7, 0, 2048, 65536, 98304, 98304, 0},
    {"7.2", 7, 2, 2048, 65536, 98304, 98304, 0},
    {"7.5", 7, 5, 1024, 65536, 65536, 65536, 0},
    {"8.0", 8, 0, 2048, 65536, 167936, 166912, 1024},
    {"8.6", 8, 6, 1536, 65536, 102400, 101376, 1024},
    {"8.7", 8, 7, 1536, 65536, 167936, 166912, 1024},
    {"8.9", 8, 9, 1536, 65536, 102400, 101376, 1024},
    {"9.0", 9, 0, 2048, 65536, 233472, 232448, 1024},
    {"10.0", 10, 0, 2048, 65536, 233472, 232448, 1024},
    {"10.1", 10, 1, 1536, 65536, 233472, 232448, 1024},
    {"10.3", 10, 3, 2048, 65536, 233472, 232448, 1024},
    {"11.0", 10, 1, 1536, 65536, 233472, 232448, 1024},
    {"12.0", 12, 0, 1536, 65536, 102400, 101376, 1024},
    {"12.1", 12, 1, 1536, 65536, 102400, 101376, 1024},
};
#define NUM_ARCHES ((int)(sizeof ARCHES / sizeof ARCHES[0]))
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define NUM_SMS 132

typedef struct {
    int regs;
    size_t smem;     /* static */
    int barriers;
    long maxdyn;     /* -1: driver default 49152 - static */
    int shmemConfig; /* 0 DEFAULT, 1 OPTIN */
    int gc;          /* 0 OFF, 1 ON, 2 ON_STRICT */
    int maxntid;     /* -1: none */
} Func;

static long rows = 0;

static cudaOccDeviceProp make_prop(const Arch *a)
{
    cudaOccDeviceProp p;
    memset(&p, 0, sizeof p);
    p.computeMajor = a->major;
    p.computeMinor = a->minor;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsPerMultiprocessor = a->threadsPerSM;
    p.regsPerBlock = a->regsPerBlock;
    p.regsPerMultiprocessor = 65536;
    p.warpSize = 32;
    p.sharedMemPerBlock = 49152;
    p.sharedMemPerMultiprocessor = a->smemPerSM;
    p.numSms = NUM_SMS;
    p.sharedMemPerBlockOptin = a->smemOptin;
    p.reservedSharedMemPerBlock = a->smemReserved;
    return p;
}

static cudaOccFuncAttributes make_attr(const Func *f, int maxThreadsPerBlock)
{
    cudaOccFuncAttributes a;
    memset(&a, 0, sizeof a);
    a.maxThreadsPerBlock = maxThreadsPerBlock;
    a.numRegs = f->regs;
    a.sharedSizeBytes = f->smem;
    a.partitionedGCConfig = (cudaOccPartitionedGCConfig)f->gc;
    a.shmemLimitConfig = f->shmemConfig ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
    if (f->maxdyn >= 0) {
        a.maxDynamicSharedSizeBytes = (size_t)f->maxdyn;
    } else {
        a.maxDynamicSharedSizeBytes = f->smem < 49152 ? 49152 - f->smem : 0;
    }
    a.numBlockBarriers = f->barriers;
    return a;
}

static cudaOccDeviceState make_state(int carveout)
{
    cudaOccDeviceState s;
    memset(&s, 0, sizeof s);
    s.cacheConfig = CACHE_PREFER_NONE;
    s.carveoutConfig = carveout;
    return s;
}

/* The occupancy queries take the launch bounds, or the device's 1024, as the function's
 * maxThreadsPerBlock: the header only checks it is positive. */
static int occ_max_threads(const Func *f)
{
    return f->maxntid >= 0 ? f->maxntid : 1024;
}

static void print_func(const Func *f)
{
    printf(" %d %zu %d ", f->regs, f->smem, f->barriers);
    if (f->maxdyn >= 0) {
        printf("%ld", f->maxdyn);
    } else {
        printf("def");
    }
    printf(" %d %d ", f->shmemConfig, f->gc);
    if (f->maxntid >= 0) {
        printf("%d", f->maxntid);
    } else {
        printf("-");
    }
}

/* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, derived from the header's own register check. */
static int max_threads(const cudaOccDeviceProp *p, int regs, int maxntid)
{
    int limit = p->maxThreadsPerBlock;
    int b;
    cudaOccFuncAttributes a;
    if (maxntid >= 0 && maxntid < limit) {
        limit = maxntid;
    }
    memset(&a, 0, sizeof a);
    a.maxThreadsPerBlock = 1;
    a.numRegs = regs;
    for (b = limit; b > 0; b--) {
        int l = 0;
        cudaOccPartitionedGCConfig gc = PARTITIONED_GC_OFF;
        cudaOccResult r;
        memset(&r, 0, sizeof r);
        if (cudaOccMaxBlocksPerSMRegsLimit(&l, &gc, &r, p, &a, b) != CUDA_OCC_SUCCESS) {
            return -1;
        }
        if (l > 0) {
            return b;
        }
    }
    return 0;
}

/* " MTPB ; POT" */
static void print_potential(const cudaOccDeviceProp *p, const Func *f, size_t dyn, int carveout)
{
    int mt = max_threads(p, f->regs, f->maxntid);
    cudaOccFuncAttributes a = make_attr(f, mt);
    cudaOccDeviceState s = make_state(carveout);
    int minGrid = 0, blockSize = 0;
    cudaOccError st = cudaOccMaxPotentialOccupancyBlockSize(&minGrid, &blockSize, p, &a, &s, NULL, dyn);
    printf(" %d ;", mt);
    if (st == CUDA_OCC_SUCCESS) {
        printf(" ok %d %d", minGrid, blockSize);
    } else {
        printf(" err %d", (int)st);
    }
}

static void occ_line(const Arch *arch, const Func *f, size_t dyn, int carveout, int block)
{
    cudaOccDeviceProp p = make_prop(arch);
    cudaOccFuncAttributes a = make_attr(f, occ_max_threads(f));
    cudaOccDeviceState s = make_state(carveout);
    cudaOccResult r;
    cudaOccError st;
    memset(&r, 0, sizeof r);
    st = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, block, dyn);

    printf("occ %s", arch->label);
    print_func(f);
    printf(" %zu %d %d |", dyn, carveout, block);
    if (st == CUDA_OCC_SUCCESS) {
        printf(" ok %d %d 0x%02x %d %d %d %d ", r.activeBlocksPerMultiprocessor,
               r.activeBlocksPerMultiprocessor * ((block + 31) / 32), r.limitingFactors,
               r.blockLimitRegs, r.blockLimitSharedMem, r.blockLimitWarps, r.blockLimitBlocks);
        if (r.blockLimitBarriers == INT_MAX) {
            printf("-");
        } else {
            printf("%d", r.blockLimitBarriers);
        }
        printf(" %d %zu %d", r.allocatedRegistersPerBlock, r.allocatedSharedMemPerBlock,
               (int)r.partitionedGCConfig);
    } else {
        printf(" err %d", (int)st);
    }
    printf(" ;");
    print_potential(&p, f, dyn, carveout);
    printf("\n");
    rows++;
}

static void pot_line(const Arch *arch, const Func *f, size_t dyn, int carveout)
{
    cudaOccDeviceProp p = make_prop(arch);
    printf("pot %s", arch->label);
    print_func(f);
    printf(" %zu %d |", dyn, carveout);
    print_potential(&p, f, dyn, carveout);
    printf("\n");
    rows++;
}

static void mtpb_line(const Arch *arch, int regs, int maxntid)
{
    cudaOccDeviceProp p = make_prop(arch);
    printf("mtpb %s %d ", arch->label, regs);
    if (maxntid >= 0) {
        printf("%d", maxntid);
    } else {
        printf("-");
    }
    printf(" | %d\n", max_threads(&p, regs, maxntid));
    rows++;
}

static void avail_line(const Arch *arch, const Func *f, int numBlocks, int block, int carveout)
{
    cudaOccDeviceProp p = make_prop(arch);
    cudaOccFuncAttributes a = make_attr(f, occ_max_threads(f));
    cudaOccDeviceState s = make_state(carveout);
    size_t bytes = 0;
    cudaOccError st = cudaOccAvailableDynamicSMemPerBlock(&bytes, &p, &a, &s, numBlocks, block);
    printf("avail %s", arch->label);
    print_func(f);
    printf(" %d %d %d |", numBlocks, block, carveout);
    if (st == CUDA_OCC_SUCCESS) {
        printf(" ok %zu\n", bytes);
    } else {
        printf(" err %d\n", (int)st);
    }
    rows++;
}

static void rfb_line(const Arch *arch, int block, int blocks, size_t smem, size_t dyn)
{
    cudaOccDeviceProp p = make_prop(arch);
    cudaOccDeviceState s = make_state(-1);
    size_t defdyn = smem < 49152 ? 49152 - smem : 0;
    Func f;
    int regs, found = -1;
    f.smem = smem;
    f.barriers = 1;
    f.maxdyn = (long)(dyn > defdyn ? dyn : defdyn);
    f.shmemConfig = 1;
    f.gc = 0;
    f.maxntid = -1;
    for (regs = 255; regs >= 0; regs--) {
        cudaOccFuncAttributes a;
        cudaOccResult r;
        f.regs = regs;
        a = make_attr(&f, 1024);
        memset(&r, 0, sizeof r);
        if (cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, block, dyn) != CUDA_OCC_SUCCESS) {
            break;
        }
        if (r.activeBlocksPerMultiprocessor >= blocks) {
            found = regs;
            break;
        }
    }
    printf("rfb %s %d %d %zu %zu | ", arch->label, block, blocks, smem, dyn);
    if (found >= 0) {
        printf("%d\n", found);
    } else {
        printf("-\n");
    }
    rows++;
}

/* The device values and the header's per-arch switches, to check the Rust table against. */
static void dev_line(const Arch *arch)
{
    cudaOccDeviceProp p = make_prop(arch);
    int maxBlocks = -1, smemGran = -1, regGran = -1, sub = -1, maxRegs = -1, barriers = -1;
    cudaOccPartitionedGCSupport gc;
    cudaOccFuncAttributes a;
    Func f = {0, 0, 1, -1, 1, 0, -1};

    cudaOccMaxBlocksPerMultiprocessor(&maxBlocks, &p);
    cudaOccSMemAllocationGranularity(&smemGran, &p);
    cudaOccRegAllocationGranularity(&regGran, &p);
    cudaOccSubPartitionsPerMultiprocessor(&sub, &p);
    cudaOccRegAllocationMaxPerThread(&maxRegs, &p);
    a = make_attr(&f, 1024);
    cudaOccMaxBlocksPerSMBlockBarrierLimit(&barriers, 1, &p, &a); /* barriers per block slot */
    cudaOccPartitionedGlobalCachingModeSupport(&gc, &p);

    printf("dev %s | %d %d %d %d %d %zu %zu %zu %zu %d %d %d %d %d %d %d ", arch->label,
           p.maxThreadsPerBlock, p.maxThreadsPerMultiprocessor, p.regsPerBlock, p.regsPerMultiprocessor,
           p.warpSize, p.sharedMemPerBlock, p.sharedMemPerMultiprocessor, p.sharedMemPerBlockOptin,
           p.reservedSharedMemPerBlock, maxBlocks, smemGran, regGran, sub, maxRegs, barriers,
           gc == PARTITIONED_GC_SUPPORTED ? 1 : 0);
    /* Carveout steps: every distinct result of the align-up, in bytes. */
    if (p.computeMajor >= 7) {
        size_t size, last = (size_t)-1;
        int first = 1;
        for (size = 0; size <= 512 * 1024; size++) {
            size_t v = size;
            if (cudaOccAlignUpShmemSizeVoltaPlus(&v, &p) != CUDA_OCC_SUCCESS) {
                break;
            }
            if (v != last) {
                printf(first ? "%zu" : ",%zu", v);
                first = 0;
                last = v;
            }
        }
        printf("\n");
    } else {
        printf("-\n");
    }
    rows++;
}

int main(void)
{
    /* Register counts spanning 0 ... 255, plus 256 (valid for the header on CC >= 7) and 257. */
    static const int REGS[] = {0,  1,   8,   16,  24,  32,  33,  40,  48,  56,  64,  72,  80,
                               96, 104, 128, 136, 160, 168, 176, 200, 232, 248, 255, 256, 257};
    static const size_t SMEM[] = {0, 4096, 40000};
    static const int BARRIERS[] = {1, 4};
    static const size_t DYN[] = {0, 20000};
    static const int BLOCKS[] = {1, 32, 33, 64, 96, 128, 256, 544, 768, 1024, 1056};
    static const int CARVEOUTS[] = {-2, -1, 0, 1, 5, 10, 25, 33, 50, 66, 75, 99, 100, 101};
    int ai, i, j, k, l, m, n;

    printf("hdr | %d %d\n", __CUDA_OCC_MAJOR__, __CUDA_OCC_MINOR__);
    rows++;
    for (ai = 0; ai < NUM_ARCHES; ai++) {
        dev_line(&ARCHES[ai]);
    }

    for (ai = 0; ai < NUM_ARCHES; ai++) {
        const Arch *arch = &ARCHES[ai];

        /* The main grid (occupancy.md §8): driver defaults, carveout -1. */
        for (i = 0; i < COUNT(REGS); i++)
            for (j = 0; j < COUNT(SMEM); j++)
                for (k = 0; k < COUNT(BARRIERS); k++)
                    for (l = 0; l < COUNT(DYN); l++)
                        for (m = 0; m < COUNT(BLOCKS); m++) {
                            Func f = {REGS[i], SMEM[j], BARRIERS[k], -1, 1, 0, -1};
                            occ_line(arch, &f, DYN[l], -1, BLOCKS[m]);
                        }

        /* Carveout values x limit configuration x opt-in. */
        {
            static const int CREGS[] = {0, 64, 255};
            static const size_t CSMEM[] = {0, 4096};
            static const size_t CDYN[] = {0, 8192, 30000, 45056, 49152, 100000};
            static const int CBLOCKS[] = {32, 1024};
            for (i = 0; i < COUNT(CARVEOUTS); i++)
                for (j = 0; j < COUNT(CREGS); j++)
                    for (k = 0; k < COUNT(CSMEM); k++)
                        for (l = 0; l < COUNT(CDYN); l++)
                            for (m = 0; m < COUNT(CBLOCKS); m++)
                                for (n = 0; n < 3; n++) {
                                    Func f = {CREGS[j], CSMEM[k], 1, -1, 1, 0, -1};
                                    if (n == 1) {
                                        f.maxdyn = (long)(arch->smemOptin - CSMEM[k]);
                                    } else if (n == 2) {
                                        f.shmemConfig = 0;
                                    }
                                    occ_line(arch, &f, CDYN[l], CARVEOUTS[i], CBLOCKS[m]);
                                }
        }

        /* Every carveout percentage, and the edges of the per-block limits. */
        {
            static const size_t ESMEM[] = {0, 4096};
            static const int EBLOCKS[] = {32, 256};
            int c;
            for (c = -2; c <= 101; c++)
                for (j = 0; j < COUNT(ESMEM); j++)
                    for (m = 0; m < COUNT(EBLOCKS); m++) {
                        Func f = {32, ESMEM[j], 1, -1, 1, 0, -1};
                        occ_line(arch, &f, 0, c, EBLOCKS[m]);
                        occ_line(arch, &f, 30000, c, EBLOCKS[m]);
                    }
            for (j = 0; j < COUNT(ESMEM); j++) {
                size_t optin = arch->smemOptin - ESMEM[j], def = 49152 - ESMEM[j];
                size_t edges[8];
                edges[0] = optin - 1024;
                edges[1] = optin - 1;
                edges[2] = optin;
                edges[3] = optin + 1;
                edges[4] = def - 1024;
                edges[5] = def - 1023;
                edges[6] = def;
                edges[7] = def + 1;
                for (k = 0; k < COUNT(edges); k++)
                    for (m = 0; m < COUNT(EBLOCKS); m++)
                        for (n = 0; n < 3; n++) {
                            Func f = {32, ESMEM[j], 1, -1, 1, 0, -1};
                            if (n == 1) {
                                f.maxdyn = (long)optin;
                            } else if (n == 2) {
                                f.shmemConfig = 0;
                            }
                            occ_line(arch, &f, edges[k], -1, EBLOCKS[m]);
                        }
            }
        }

        /* Partitioned global caching ON and ON_STRICT. */
        {
            static const size_t GSMEM[] = {0, 40000};
            for (n = 1; n <= 2; n++)
                for (i = 0; i < COUNT(REGS); i++)
                    for (j = 0; j < COUNT(GSMEM); j++)
                        for (m = 0; m < COUNT(BLOCKS); m++) {
                            Func f = {REGS[i], GSMEM[j], 1, -1, 1, n, -1};
                            occ_line(arch, &f, 0, -1, BLOCKS[m]);
                        }
        }

        /* Potential block size under launch bounds. */
        {
            static const int NTID[] = {0, 1, 31, 100, 256, 500, 1000};
            static const size_t PSMEM[] = {0, 4096};
            for (i = 0; i < COUNT(REGS); i++)
                for (j = 0; j < COUNT(NTID); j++)
                    for (k = 0; k < COUNT(PSMEM); k++)
                        for (l = 0; l < COUNT(DYN); l++) {
                            Func f = {REGS[i], PSMEM[k], 1, -1, 1, 0, NTID[j]};
                            pot_line(arch, &f, DYN[l], -1);
                        }
        }

        /* Max threads per block, every register count. */
        {
            static const int NTID[] = {-1, 1, 31, 100, 256, 1000, 1024, 4096};
            for (i = 0; i <= 260; i++)
                for (j = 0; j < COUNT(NTID); j++) {
                    mtpb_line(arch, i, NTID[j]);
                }
        }

        /* Available dynamic shared memory per block. */
        {
            static const int AREGS[] = {0, 32, 64, 128, 255};
            static const int ANUM[] = {0, 1, 2, 3, 7, 32};
            static const int ABLOCKS[] = {32, 1024};
            static const int ACARVE[] = {-1, 0, 10, 50};
            for (i = 0; i < COUNT(AREGS); i++)
                for (j = 0; j < COUNT(SMEM); j++)
                    for (k = 0; k < COUNT(ANUM); k++)
                        for (l = 0; l < COUNT(ABLOCKS); l++)
                            for (m = 0; m < COUNT(ACARVE); m++)
                                for (n = 0; n < 3; n++) {
                                    Func f = {AREGS[i], SMEM[j], 1, -1, 1, 0, -1};
                                    if (n == 1) {
                                        f.maxdyn = (long)(arch->smemOptin - SMEM[j]);
                                    } else if (n == 2) {
                                        f.shmemConfig = 0;
                                    }
                                    avail_line(arch, &f, ANUM[k], ABLOCKS[l], ACARVE[m]);
                                }
        }

        /* Registers so that N blocks fit. */
        {
            static const int RBLOCK[] = {1, 32, 64, 96, 128, 256, 384, 512, 768, 1024, 1056};
            static const int RN[] = {0, 1, 2, 3, 4, 8, 16, 24, 32};
            static const size_t RDYN[] = {0, 20000, 100000};
            for (i = 0; i < COUNT(RBLOCK); i++)
                for (j = 0; j < COUNT(RN); j++)
                    for (k = 0; k < COUNT(SMEM); k++)
                        for (l = 0; l < COUNT(RDYN); l++) {
                            rfb_line(arch, RBLOCK[i], RN[j], SMEM[k], RDYN[l]);
                        }
        }
    }

    printf("end %ld | done\n", rows);
    return 0;
}
