/*
 * Oracle for launch::occupancy: runs NVIDIA's own calculator, cuda_occupancy.h (CUDA 12.9,
 * nvidia-cuda-runtime-cu12 wheel), over a grid of inputs and prints one line per point:
 *
 *     <kind> <inputs...> | <outputs...>
 *
 * launch/tests/occupancy_oracle.rs recomputes every <outputs> part from <inputs> with the Rust port and
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
 *
 * `occupancy_oracle points SEED` instead writes the million-point comparison as binary records
 * (see "Points mode" below): occupancy only, inputs and outputs in every record, so the Rust side
 * needs no copy of the grid and a failure names its inputs.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/*
 * Points mode. One record per point, 22 little-endian int32:
 *
 *   0 part (0 sm_90 exhaustive, 1 every arch exhaustive, 2 random; -1 ends the stream)
 *   1 compute capability as 10 * major + minor of the Rust table's row (110 = 11.0)
 *   2 regs  3 static  4 barriers  5 maxdyn (-1 = 49152 - static)  6 shmemcfg  7 gc
 *   8 dyn  9 carveout  10 block
 *   11 status  12 blocks  13 limiting factors  14 Lregs  15 Lsmem  16 Lwarps  17 Lblocks
 *   18 Lbarriers  19 allocated registers  20 allocated shared memory  21 effective gc
 *
 * The end record carries the number of point records in field 1.
 */
#define POINT_FIELDS 22

static long points = 0;

/* 10 * major + minor of the Rust table's row (the label: 11.0 is run as 10.1). */
static int label_cc(const Arch *arch)
{
    int major = 0, minor = 0;
    sscanf(arch->label, "%d.%d", &major, &minor);
    return major * 10 + minor;
}

static void point_record(int part, int cc, const Arch *arch, const Func *f, size_t dyn, int carveout, int block)
{
    cudaOccDeviceProp p = make_prop(arch);
    cudaOccFuncAttributes a = make_attr(f, occ_max_threads(f));
    cudaOccDeviceState s = make_state(carveout);
    cudaOccResult r;
    int32_t rec[POINT_FIELDS];
    cudaOccError st;
    memset(&r, 0, sizeof r);
    memset(rec, 0, sizeof rec);
    st = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, block, dyn);
    rec[0] = part;
    rec[1] = cc;
    rec[2] = f->regs;
    rec[3] = (int32_t)f->smem;
    rec[4] = f->barriers;
    rec[5] = (int32_t)f->maxdyn;
    rec[6] = f->shmemConfig;
    rec[7] = f->gc;
    rec[8] = (int32_t)dyn;
    rec[9] = carveout;
    rec[10] = block;
    rec[11] = (int32_t)st;
    if (st == CUDA_OCC_SUCCESS) {
        rec[12] = r.activeBlocksPerMultiprocessor;
        rec[13] = (int32_t)r.limitingFactors;
        rec[14] = r.blockLimitRegs;
        rec[15] = r.blockLimitSharedMem;
        rec[16] = r.blockLimitWarps;
        rec[17] = r.blockLimitBlocks;
        rec[18] = r.blockLimitBarriers;
        rec[19] = r.allocatedRegistersPerBlock;
        rec[20] = (int32_t)r.allocatedSharedMemPerBlock;
        rec[21] = (int32_t)r.partitionedGCConfig;
    }
    /* The test only runs on little-endian hosts (x86-64, aarch64), so the array is the format. */
    fwrite(rec, sizeof rec, 1, stdout);
    points++;
}

/* The (static shared memory, barriers, dynamic shared memory, carveout, opt-in) settings the
 * exhaustive parts cycle through: a plain kernel (__syncthreads only), 4 KB static, no barrier,
 * large static, dynamic memory with barriers that bind on 9.0+, 16 barriers at a 50 % carveout,
 * dynamic memory above the 48 KB default with the opt-in, and static memory near 48 KB at 25 %. */
static const struct {
    size_t smem;
    int barriers;
    size_t dyn;
    int carveout;
    int optin;
} SETTINGS[] = {
    {0, 1, 0, -1, 0},        {4096, 1, 0, -1, 0},    {0, 0, 0, -1, 0},         {40000, 2, 0, -1, 0},
    {1024, 6, 8192, -1, 0},  {0, 16, 20000, 50, 0},  {12288, 3, 60000, -1, 1}, {48000, 1, 0, 25, 0},
};
#define NUM_SETTINGS COUNT(SETTINGS)

/* Every register count 0..255 x every block size 1..1024 on `arch`, register count `regs` under
 * setting `setting`. */
static void exhaustive_row(int part, const Arch *arch, int regs, int setting)
{
    Func f = {regs, SETTINGS[setting].smem, SETTINGS[setting].barriers, -1, 1, 0, -1};
    int block, cc = label_cc(arch);
    if (SETTINGS[setting].optin) {
        f.maxdyn = (long)(arch->smemOptin - f.smem);
    }
    for (block = 1; block <= 1024; block++) {
        point_record(part, cc, arch, &f, SETTINGS[setting].dyn, SETTINGS[setting].carveout, block);
    }
}

/* splitmix64: small, good enough, and the same sequence on every platform. */
static unsigned long long rng_state;

static long uniform(long lo, long hi)
{
    unsigned long long z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return lo + (long)(z % (unsigned long long)(hi - lo + 1));
}

/* Random inputs spread over every input of the calculator, edges included: register counts the
 * header rejects (256, 257), blocks above 1024, static memory above the per-block limits,
 * dynamic memory above the function's maximum, every limit configuration and caching mode, and
 * carveouts outside -1..100. */
static void random_point(void)
{
    const Arch *arch = &ARCHES[uniform(0, NUM_ARCHES - 1)];
    long optin = (long)arch->smemOptin;
    Func f;
    size_t dyn;
    int block, carveout;
    long r;
    f.regs = (int)uniform(0, 257);
    block = (int)(uniform(0, 9) == 0 ? uniform(1, 2048) : uniform(1, 1024));
    r = uniform(0, 3);
    f.smem = (size_t)(r == 0 ? 0 : r == 1 ? uniform(0, 49152) : r == 2 ? uniform(0, optin + 2048) : 1024 * uniform(0, 48));
    f.barriers = (int)uniform(0, 16);
    r = uniform(0, 3);
    f.maxdyn = r <= 1 ? -1 : r == 2 ? ((long)f.smem <= optin ? optin - (long)f.smem : 0) : uniform(0, optin);
    f.shmemConfig = uniform(0, 4) != 0;
    r = uniform(0, 5);
    f.gc = r <= 3 ? 0 : (int)(r - 3);
    f.maxntid = -1;
    r = uniform(0, 2);
    dyn = (size_t)(r == 0 ? 0 : r == 1 ? uniform(0, 49152) : uniform(0, optin + 1024));
    carveout = uniform(0, 1) ? -1 : (int)uniform(-2, 101);
    point_record(2, label_cc(arch), arch, &f, dyn, carveout, block);
}

static int points_main(unsigned long long seed, long random_points)
{
    int ai, regs, setting;
    long i;
    int32_t end[POINT_FIELDS];
    static char buffer[1 << 20];
    const Arch *sm90 = NULL;
    setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
    for (ai = 0; ai < NUM_ARCHES; ai++) {
        if (strcmp(ARCHES[ai].label, "9.0") == 0) {
            sm90 = &ARCHES[ai];
        }
    }
    /* Part 0: sm_90, the first four settings, each in full. */
    for (setting = 0; setting < 4; setting++)
        for (regs = 0; regs <= 255; regs++) {
            exhaustive_row(0, sm90, regs, setting);
        }
    /* Part 1: every architecture in full, the settings striped over the register counts so each
     * arch sees all of them and each setting every register count modulo 8. */
    for (ai = 0; ai < NUM_ARCHES; ai++)
        for (regs = 0; regs <= 255; regs++) {
            exhaustive_row(1, &ARCHES[ai], regs, (ai + regs) % NUM_SETTINGS);
        }
    /* Part 2: random points. */
    rng_state = seed;
    for (i = 0; i < random_points; i++) {
        random_point();
    }
    memset(end, 0, sizeof end);
    end[0] = -1;
    end[1] = (int32_t)points;
    fwrite(end, sizeof end, 1, stdout);
    return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
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

    if (argc == 4 && strcmp(argv[1], "points") == 0) {
        return points_main(strtoull(argv[2], NULL, 10), strtol(argv[3], NULL, 10));
    }
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
