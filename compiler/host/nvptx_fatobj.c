/* nvptx_fatobj.c - the CUDA part of the host object (GPU-DESIGN.md, "The
 * fat object"), built by the host back end (codegen_llvm_host.c) into its
 * module when --target= names GPU targets:
 *   - every GPU image (cubin, PTX) as read-only data, pk.cubin.<arch> /
 *     pk.ptx.<arch>;
 *   - the table pk.cuda.images (pk_cuda_image[]) and the module
 *     pk.cuda.module (pk_cuda_module, whose cache the runtime fills);
 *   - in each launch function, after the size checks, `requires` and the
 *     grid: if the stream's device is a CUDA device, the CUDA launch
 *     (pk_launch_cuda); otherwise the host variant, or
 *     PK_ERR_NO_KERNEL_FOR_DEVICE when there is none.
 * All of it is internal to the object, so objects of several .pk files
 * link together. */
#include "fatobj.h"
#include "pk_runtime.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The LLVM types below mirror runtime/pk_runtime.h: check them. */
#if defined(__x86_64__) && defined(__linux__)
_Static_assert(offsetof(pk_cuda_image, kind) == 8 && offsetof(pk_cuda_image, data) == 16 &&
               sizeof(pk_cuda_image) == 32, "pk_cuda_image layout changed: update image_type");
_Static_assert(offsetof(pk_cuda_module, nimages) == 8 && offsetof(pk_cuda_module, cache) == 16 &&
               sizeof(pk_cuda_module) == 24, "pk_cuda_module layout changed: update module_type");
_Static_assert(offsetof(pk_cuda_launch, grid) == 16 && offsetof(pk_cuda_launch, block) == 28 &&
               offsetof(pk_cuda_launch, shared_bytes) == 40 && offsetof(pk_cuda_launch, params) == 48 &&
               sizeof(pk_cuda_launch) == 56, "pk_cuda_launch layout changed: update launch_type");
#endif

/* pk_cuda_image {const char *arch; pk_cuda_image_kind kind; const void *data; size_t size} */
static LLVMTypeRef image_type(Cg *g)
{
	LLVMTypeRef f[4] = {g->t_ptr, g->t_i32, g->t_ptr, g->t_i64};
	return LLVMStructTypeInContext(g->ctx, f, 4, 0);
}

/* pk_cuda_module {const pk_cuda_image *images; int nimages; void *cache} */
static LLVMTypeRef module_type(Cg *g)
{
	LLVMTypeRef f[3] = {g->t_ptr, g->t_i32, g->t_ptr};
	return LLVMStructTypeInContext(g->ctx, f, 3, 0);
}

/* pk_cuda_launch {const char *kernel_name; pk_cuda_module *module;
 * uint32_t grid[3], block[3]; uint32_t shared_bytes; void **params} */
static LLVMTypeRef launch_type(Cg *g)
{
	LLVMTypeRef a3 = LLVMArrayType2(g->t_i32, 3);
	LLVMTypeRef f[6] = {g->t_ptr, g->t_ptr, a3, a3, g->t_i32, g->t_ptr};
	return LLVMStructTypeInContext(g->ctx, f, 6, 0);
}

static LLVMValueRef const_global(Cg *g, const char *name, LLVMValueRef init, unsigned align)
{
	LLVMValueRef gv = LLVMAddGlobal(g->mod, LLVMTypeOf(init), name);
	LLVMSetInitializer(gv, init);
	LLVMSetGlobalConstant(gv, 1);
	LLVMSetLinkage(gv, LLVMInternalLinkage);
	LLVMSetAlignment(gv, align);
	return gv;
}

static const char *image_name(Cg *g, const GpuImage *im)
{
	return arena_printf(g->cc->arena, "pk.%s.%s", im->kind == GPU_IMAGE_PTX ? "ptx" : "cubin", im->target->name);
}

/* Image im's bytes: a cubin is an ELF image, aligned for the loader.  A
 * cubin still under way: an empty stand-in.  Each image has a section of
 * its own, so that its size moves nothing in the object but the sections
 * after it (cg_cuda_splice). */
static LLVMValueRef image_data(Cg *g, const GpuImage *im)
{
	LLVMValueRef bytes = im->data ? LLVMConstStringInContext2(g->ctx, im->data, im->size, 1)
	                              : LLVMConstArray2(g->t_i8, NULL, 0);
	LLVMValueRef gv = const_global(g, image_name(g, im), bytes, 16);
	LLVMSetSection(gv, arena_printf(g->cc->arena, ".rodata.%s", image_name(g, im)));
	return gv;
}

/* The rows of pk.cuda.images: (arch, kind, data, size) per image. */
static LLVMValueRef image_table(Cg *g, const GpuOutput *gpu)
{
	LLVMTypeRef it = image_type(g);
	LLVMValueRef *rows = arena_alloc(g->cc->arena, (size_t)(gpu->nimages + 1) * sizeof *rows);
	for (int i = 0; i < gpu->nimages; i++) {
		const GpuImage *im = &gpu->images[i];
		LLVMValueRef f[4] = {LLVMGetNamedGlobal(g->mod, arena_printf(g->cc->arena, "pk.arch.%s", im->target->name)),
		                     LLVMConstInt(g->t_i32, im->kind == GPU_IMAGE_PTX ? PK_CUDA_PTX : PK_CUDA_SASS, 0),
		                     LLVMGetNamedGlobal(g->mod, image_name(g, im)), LLVMConstInt(g->t_i64, im->size, 0)};
		rows[i] = LLVMConstNamedStruct(it, f, 4);
	}
	return LLVMConstArray2(it, rows, (uint64_t)gpu->nimages);
}

LLVMValueRef cg_cuda_module(Cg *g, const GpuOutput *gpu)
{
	for (int i = 0; i < gpu->nimages; i++) {
		const GpuImage *im = &gpu->images[i];
		image_data(g, im);
		const char *aname = arena_printf(g->cc->arena, "pk.arch.%s", im->target->name);
		if (!LLVMGetNamedGlobal(g->mod, aname)) {
			LLVMValueRef arch = const_global(g, aname, LLVMConstStringInContext2(g->ctx, im->target->name,
			                                                                    strlen(im->target->name), 0), 1);
			LLVMSetUnnamedAddress(arch, LLVMGlobalUnnamedAddr);
		}
	}
	LLVMValueRef table = const_global(g, "pk.cuda.images", image_table(g, gpu), 8);
	LLVMTypeRef mt = module_type(g);
	LLVMValueRef mf[3] = {table, LLVMConstInt(g->t_i32, (unsigned long long)gpu->nimages, 0),
	                      LLVMConstNull(g->t_ptr)};
	/* Written by the runtime (its cache of loaded modules): not constant. */
	LLVMValueRef mod = LLVMAddGlobal(g->mod, mt, "pk.cuda.module");
	LLVMSetInitializer(mod, LLVMConstNamedStruct(mt, mf, 3));
	LLVMSetLinkage(mod, LLVMInternalLinkage);
	LLVMSetAlignment(mod, 8);
	return mod;
}

/* A copy of global gv at the end of the module's list, in its place for
 * every use; gv is deleted. */
static void move_to_end(Cg *g, LLVMValueRef gv)
{
	size_t n;
	const char *name = LLVMGetValueName2(gv, &n);
	char *keep = arena_strndup(g->cc->arena, name, n);
	LLVMSetValueName2(gv, "", 0);
	LLVMValueRef c = LLVMAddGlobalInAddressSpace(g->mod, LLVMGlobalGetValueType(gv), keep,
	                                             LLVMGetPointerAddressSpace(LLVMTypeOf(gv)));
	if (LLVMGetInitializer(gv))
		LLVMSetInitializer(c, LLVMGetInitializer(gv));
	LLVMSetGlobalConstant(c, LLVMIsGlobalConstant(gv));
	LLVMSetLinkage(c, LLVMGetLinkage(gv));
	LLVMSetVisibility(c, LLVMGetVisibility(gv));
	LLVMSetUnnamedAddress(c, LLVMGetUnnamedAddress(gv));
	LLVMSetAlignment(c, LLVMGetAlignment(gv));
	LLVMSetThreadLocal(c, LLVMIsThreadLocal(gv));
	LLVMSetThreadLocalMode(c, LLVMGetThreadLocalMode(gv));
	LLVMSetExternallyInitialized(c, LLVMIsExternallyInitialized(gv));
	LLVMSetDLLStorageClass(c, LLVMGetDLLStorageClass(gv));
	if (LLVMGetSection(gv))
		LLVMSetSection(c, LLVMGetSection(gv));
	LLVMReplaceAllUsesWith(gv, c);
	LLVMDeleteGlobal(gv);
}

/* Whether image im's global is an empty stand-in still.  The table and
 * its images are gone when LLVM's passes found them unused (a module
 * without kernels): then there is nothing to place. */
static bool is_stand_in(Cg *g, const GpuImage *im)
{
	LLVMValueRef gv = LLVMGetNamedGlobal(g->mod, image_name(g, im));
	return gv && LLVMGetArrayLength2(LLVMGlobalGetValueType(gv)) != im->size;
}

void cg_cuda_images(Cg *g, const GpuOutput *gpu)
{
	/* The first stand-in (the images come first in the module). */
	LLVMValueRef first = NULL;
	for (int i = 0; i < gpu->nimages && !first; i++)
		if (is_stand_in(g, &gpu->images[i]))
			first = LLVMGetNamedGlobal(g->mod, image_name(g, &gpu->images[i]));
	if (!first)
		return;
	/* From it on, every global is made again at the end, in order: each
	 * stand-in as its image. */
	Vec later = {0};
	for (LLVMValueRef gv = first; gv; gv = LLVMGetNextGlobal(gv))
		vec_push(g->cc->arena, &later, gv);
	for (int j = 0; j < later.len; j++) {
		LLVMValueRef gv = later.items[j];
		const GpuImage *im = NULL;
		for (int i = 0; i < gpu->nimages && !im; i++)
			if (gv == LLVMGetNamedGlobal(g->mod, image_name(g, &gpu->images[i])))
				im = &gpu->images[i];
		if (!im) {
			move_to_end(g, gv);
			continue;
		}
		LLVMSetValueName2(gv, "", 0);
		LLVMValueRef data = image_data(g, im);
		LLVMReplaceAllUsesWith(gv, data);
		LLVMDeleteGlobal(gv);
	}
	/* The table's sizes. */
	LLVMSetInitializer(LLVMGetNamedGlobal(g->mod, "pk.cuda.images"), image_table(g, gpu));
}

/* ---- cubins put into the object after its code generation ---------------------- */

/* Little-endian fields of an ELF64 file. */
static uint64_t get(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put(unsigned char *p, int n, uint64_t v)
{
	for (int i = 0; i < n; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

enum { EH_SHOFF = 0x28, EH_SHNUM = 0x3c, EH_SHSTRNDX = 0x3e, SH_SIZE = 64, SYM_SIZE = 24 };
enum { SHT_SYMTAB_ = 2, SHT_NOBITS_ = 8 };

/* Section header i of the object o. */
static unsigned char *shdr(unsigned char *o, int i)
{
	return o + get(o + EH_SHOFF, 8) + (uint64_t)i * SH_SIZE;
}

static uint64_t align_to(uint64_t x, uint64_t a)
{
	return a > 1 ? (x + a - 1) / a * a : x;
}

/* Where LLVM's ELF writer puts the sections of object o (its header, each
 * section in file order at its alignment, the section headers at 8): their
 * offsets into off[] with section `grown` `size` bytes long; the end of
 * the sections (the section headers' offset) is returned.  0: o is not laid
 * out so (then it cannot be spliced). */
static uint64_t layout(unsigned char *o, size_t n, int shnum, const int *order, int grown, uint64_t size,
                       uint64_t *off)
{
	uint64_t cur = 64;
	for (int j = 0; j < shnum - 1; j++) {
		unsigned char *h = shdr(o, order[j]);
		uint64_t len = order[j] == grown ? size : get(h + 32, 8);
		off[order[j]] = align_to(cur, get(h + 48, 8));
		if (get(h + 4, 4) != SHT_NOBITS_)
			cur = off[order[j]] + len;
	}
	cur = align_to(cur, 8);
	return cur <= n ? cur : 0;
}

/* The object o (malloc'd, *n bytes) with image im in its section, which
 * holds the empty stand-in; true if done.  The sections after it move
 * (each at its alignment, as LLVM's writer put them), and the image's
 * size goes into its section header, its symbol and its row of
 * pk.cuda.images (row `row`), so that the object is byte for byte the one
 * LLVM makes with the image in the module. */
static bool splice_image(Cg *g, unsigned char **obj, size_t *n, const GpuImage *im, int row)
{
	unsigned char *o = *obj;
	if (*n < 64 || memcmp(o, "\177ELF\2\1", 6) != 0)
		return false;
	int shnum = (int)get(o + EH_SHNUM, 2), stridx = (int)get(o + EH_SHSTRNDX, 2);
	uint64_t shoff = get(o + EH_SHOFF, 8);
	if (shnum < 2 || stridx >= shnum || shoff + (uint64_t)shnum * SH_SIZE != *n)
		return false;
	const char *want = arena_printf(g->cc->arena, ".rodata.%s", image_name(g, im));
	const char *strs = (const char *)o + get(shdr(o, stridx) + 24, 8);
	int sec = -1, symtab = -1;
	int *order = arena_alloc(g->cc->arena, (size_t)shnum * sizeof *order);
	for (int i = 1; i < shnum; i++) {
		unsigned char *h = shdr(o, i);
		if (strcmp(strs + get(h, 4), want) == 0)
			sec = i;
		if (get(h + 4, 4) == SHT_SYMTAB_)
			symtab = i;
		/* in file order (insertion sort: a few dozen sections) */
		int j = i - 1;
		while (j > 0 && get(shdr(o, order[j - 1]) + 24, 8) > get(h + 24, 8)) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	if (sec < 0 || symtab < 0 || get(shdr(o, sec) + 32, 8) != 0)
		return false;
	/* The layout model must give the object as it is. */
	uint64_t *was = arena_alloc(g->cc->arena, (size_t)shnum * sizeof *was);
	uint64_t *now = arena_alloc(g->cc->arena, (size_t)shnum * sizeof *now);
	if (layout(o, *n, shnum, order, sec, 0, was) != shoff)
		return false;
	for (int i = 1; i < shnum; i++)
		if (was[i] != get(shdr(o, i) + 24, 8))
			return false;
	uint64_t end = layout(o, SIZE_MAX, shnum, order, sec, im->size, now);
	size_t size = end + (size_t)shnum * SH_SIZE;
	unsigned char *out = xmalloc(size);
	memset(out, 0, size);
	memcpy(out, o, 64);
	for (int i = 1; i < shnum; i++) {
		unsigned char *h = shdr(o, i);
		if (i == sec)
			memcpy(out + now[i], im->data, im->size);
		else if (get(h + 4, 4) != SHT_NOBITS_)
			memcpy(out + now[i], o + was[i], get(h + 32, 8));
	}
	memcpy(out + end, o + shoff, (size_t)shnum * SH_SIZE);
	put(out + EH_SHOFF, 8, end);
	for (int i = 1; i < shnum; i++)
		put(shdr(out, i) + 24, 8, now[i]);
	put(shdr(out, sec) + 32, 8, im->size);
	/* The image's symbol and its row of the table (arch, kind, data, size). */
	unsigned char *sh = shdr(out, symtab);
	unsigned char *syms = out + get(sh + 24, 8);
	const char *names = (const char *)out + get(shdr(out, (int)get(sh + 40, 4)) + 24, 8);
	bool sized = false, counted = false;
	for (uint64_t k = 0; k < get(sh + 32, 8) / SYM_SIZE; k++) {
		unsigned char *sym = syms + k * SYM_SIZE;
		const char *name = names + get(sym, 4);
		if (strcmp(name, image_name(g, im)) == 0) {
			put(sym + 16, 8, im->size);
			sized = true;
		} else if (strcmp(name, "pk.cuda.images") == 0) {
			int in = (int)get(sym + 6, 2);
			if (in <= 0 || in >= shnum || get(shdr(out, in) + 4, 4) == SHT_NOBITS_)
				break;
			put(out + now[in] + get(sym + 8, 8) + (uint64_t)row * 32 + 24, 8, im->size);
			counted = true;
		}
	}
	if (!sized || !counted) {
		free(out);
		return false;
	}
	free(o);
	*obj = out;
	*n = size;
	return true;
}

bool cg_cuda_splice(Cg *g, const GpuOutput *gpu, CodegenOutput *out)
{
	for (int i = 0; i < gpu->nimages; i++) {
		const GpuImage *im = &gpu->images[i];
		if (!is_stand_in(g, im))
			continue;
		unsigned char *o = (unsigned char *)out->data;
		size_t n = out->size;
		if (!splice_image(g, &o, &n, im, i))
			return false;
		out->data = (char *)o;
		out->size = n;
	}
	return true;
}

static LLVMValueRef call(Cg *g, const char *name, LLVMTypeRef ret, LLVMTypeRef *pt, int np, LLVMValueRef *args)
{
	return cg_call_extern(g, name, ret, pt, np, false, args, np);
}

/* Position of launch parameter (kind, index) in k->order. */
static int order_pos(const IrKernel *k, KParamKind kind, int index)
{
	for (int j = 0; j < k->norder; j++)
		if (k->order[j] == kind && k->order_index[j] == index)
			return j;
	internal_error("cuda stub: kernel %s: launch parameter %d of kind %d is not in the launch order", k->name, index,
	               (int)kind);
}

/* Extent d of operand o (i64): its constant, or its size symbol's argument. */
static LLVMValueRef operand_extent(Cg *g, const IrKernel *k, LLVMValueRef *param, int o, int d)
{
	const Type *t = k->operands[o]->array;
	if (t->dims[d] >= 0)
		return cg_i64(g, t->dims[d]);
	for (int s = 0; t->syms && t->syms[d] && s < k->nsizes; s++)
		if (strcmp(k->sizes[s], t->syms[d]) == 0)
			return param[order_pos(k, KP_SIZE, s)];
	internal_error("cuda stub: kernel %s: dim %d of operand %d has no size", k->name, d, o);
}

/* Variant v's tensor maps (nvptx_tma.c) into maps, pointed to by the
 * parameter slots from first on; a failure returns its status. */
static void encode_maps(Cg *g, const IrKernel *k, const GpuKernel *v, LLVMValueRef *param, LLVMValueRef maps,
                        LLVMValueRef params, int nslots, int first)
{
	LLVMBuilderRef b = g->b;
	LLVMTypeRef mt = LLVMArrayType2(g->t_i8, PK_CUDA_TENSOR_MAP_BYTES);
	LLVMTypeRef pt[10] = {g->t_ptr, g->t_ptr, g->t_i32, g->t_i32, g->t_ptr,
	                      g->t_i32, g->t_i32, g->t_i32, g->t_i32, g->t_ptr};
	for (int j = 0; j < v->ntma; j++) {
		const GpuTma *t = &v->tma[j];
		LLVMValueRef idx[2] = {cg_i64(g, 0), cg_i64(g, j)};
		LLVMValueRef map = LLVMBuildInBoundsGEP2(b, LLVMArrayType2(mt, (uint64_t)(j + 1)), maps, idx, 2, "");
		LLVMTypeRef dt = LLVMArrayType2(g->t_i64, (uint64_t)t->rank);
		LLVMValueRef dims = LLVMBuildAlloca(b, dt, "tmap.dims");
		for (int d = 0; d < t->rank; d++) {
			LLVMValueRef at[2] = {cg_i64(g, 0), cg_i64(g, d)};
			LLVMBuildStore(b, operand_extent(g, k, param, t->operand, d), LLVMBuildInBoundsGEP2(b, dt, dims, at, 2, ""));
		}
		LLVMValueRef args[10] = {map, param[order_pos(k, KP_OPERAND, t->operand)], cg_i32(g, t->es),
		                         cg_i32(g, t->rank), dims, cg_i32(g, t->row), cg_i32(g, (int32_t)t->box_rows),
		                         cg_i32(g, (int32_t)t->box_cols), cg_i32(g, t->swizzle),
		                         LLVMBuildGlobalString(b, v->name, "")};
		LLVMValueRef st = call(g, "pk_cuda_tensor_map", g->t_i32, pt, 10, args);
		LLVMBasicBlockRef bad = cg_block(g, "tmap.fail"), ok = cg_block(g, "tmap.ok");
		LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, st, cg_i32(g, PK_SUCCESS), ""), bad, ok);
		LLVMPositionBuilderAtEnd(b, bad);
		LLVMBuildRet(b, st);
		LLVMPositionBuilderAtEnd(b, ok);
		LLVMValueRef slot[2] = {cg_i64(g, 0), cg_i64(g, first + j)};
		LLVMBuildStore(b, map, LLVMBuildInBoundsGEP2(b, LLVMArrayType2(g->t_ptr, (uint64_t)nslots), params, slot, 2, ""));
	}
}

/* What every entry's launch of one launch function shares. */
typedef struct Launch {
	LLVMValueRef *param;   /* the launch function's parameters */
	LLVMValueRef module;   /* pk.cuda.module */
	LLVMValueRef stream;   /* the pk_stream */
	LLVMValueRef launch;   /* the pk_cuda_launch it fills (alloca) */
	LLVMValueRef grid3;    /* [3 x i32] CTAs */
	LLVMValueRef maps;     /* the tensor maps (alloca), or NULL when no entry takes any */
	LLVMValueRef params;   /* the kernel parameters' pointers (alloca of nslots) */
	int nslots;            /* their number: np, then the tensor maps' */
	int np;                /* parameters before the tensor maps */
	LLVMValueRef *ext;     /* the grid extents (i32) */
	LLVMValueRef ctas;     /* the programs along the parallel axes (i64), grid3's CTAs */
} Launch;

/* The launch of v's merged variant m when every axis' merge factor
 * divides its extent (nvptx_merge.c) and its CTAs, r times fewer, still
 * fill the GPU: at least 3/4 of its SMs when r >= 4 (blocks of 64 x 64,
 * 128 x 32, 64 x 32 gained at every grid measured from there), at least
 * 3/2 when r = 2.  On the H200 (132 SMs), 64 x 128 and 128 x 64 blocks
 * merged into 128-144 CTAs at K 1024-1536 lost 8-14 % (twice the work a
 * CTA, in the same number of waves), into 256 CTAs (2048^3) gained 16 %
 * (bench/RESULTS.md, twenty-sixth session).  A wide merge (m->merge_waves:
 * 128 x 128 blocks as 128 x 256, a few per cent faster a program) must
 * also take no more waves' work: r ceil(merged CTAs / Rm) <= ceil(CTAs /
 * Rp), R the CTAs of each entry the GPU holds at once (3072^3: 5 waves
 * of 128 x 128 blocks against 3 of twice the work lost 11 %). */
enum { MERGE_FILL_DEN = 4, MERGE_FILL_SMALL = 3, MERGE_FILL_PAIR = 6 };
static void launch_entry(Cg *g, const IrKernel *k, const GpuKernel *v, const Launch *l);
static void fill_launch(Cg *g, const GpuKernel *v, const Launch *l);
static LLVMValueRef waves(Cg *g, const GpuKernel *v, const Launch *l, LLVMValueRef ctas)
{
	fill_launch(g, v, l);
	LLVMValueRef args[2] = {l->stream, l->launch};
	LLVMTypeRef pt[2] = {g->t_ptr, g->t_ptr};
	LLVMValueRef held = LLVMBuildZExt(g->b, call(g, "pk_cuda_resident_ctas", g->t_i32, pt, 2, args), g->t_i64, "");
	LLVMValueRef none = LLVMBuildICmp(g->b, LLVMIntEQ, held, cg_i64(g, 0), "");
	held = LLVMBuildSelect(g->b, none, cg_i64(g, 1), held, "held");
	LLVMValueRef up = LLVMBuildAdd(g->b, ctas, LLVMBuildSub(g->b, held, cg_i64(g, 1), ""), "");
	return LLVMBuildUDiv(g->b, up, held, "waves");
}

static void launch_merged(Cg *g, const IrKernel *k, const GpuKernel *v, const GpuKernel *m, const Launch *l)
{
	LLVMBuilderRef b = g->b;
	LLVMValueRef all = LLVMConstInt(g->t_i1, 1, 0);
	int64_t r = 1;
	for (int d = 0; d < k->ngrid; d++) {
		if (m->merge[d] <= 1)
			continue;
		LLVMValueRef rest = LLVMBuildURem(b, l->ext[d], cg_i32(g, m->merge[d]), "");
		all = LLVMBuildAnd(b, all, LLVMBuildICmp(b, LLVMIntEQ, rest, cg_i32(g, 0), ""), "");
		r *= m->merge[d];
	}
	LLVMValueRef ctas64 = LLVMBuildUDiv(b, l->ctas, cg_i64(g, r), "merged.ctas");
	LLVMValueRef stream = l->stream;
	LLVMValueRef sms = LLVMBuildZExt(b, call(g, "pk_cuda_sm_count", g->t_i32, &g->t_ptr, 1, &stream), g->t_i64, "");
	int64_t fill_num = r >= 4 ? MERGE_FILL_SMALL : MERGE_FILL_PAIR;
	LLVMValueRef fill = LLVMBuildICmp(b, LLVMIntUGE, LLVMBuildMul(b, ctas64, cg_i64(g, MERGE_FILL_DEN), ""),
	                                  LLVMBuildMul(b, sms, cg_i64(g, fill_num), ""), "fills");
	all = LLVMBuildAnd(b, all, fill, "");
	LLVMBasicBlockRef yes = cg_block(g, "launch.merged"), no = cg_block(g, "launch.apart");
	if (m->merge_waves) {
		/* The residency queries load the module: only past the cheap tests. */
		LLVMBasicBlockRef weigh = cg_block(g, "launch.weigh");
		LLVMBuildCondBr(b, all, weigh, no);
		LLVMPositionBuilderAtEnd(b, weigh);
		LLVMValueRef wm = LLVMBuildMul(b, waves(g, m, l, ctas64), cg_i64(g, r), "");
		LLVMValueRef wp = waves(g, v, l, l->ctas);
		all = LLVMBuildICmp(b, LLVMIntULE, wm, wp, "fewer.waves");
	}
	LLVMBuildCondBr(b, all, yes, no);
	LLVMPositionBuilderAtEnd(b, yes);
	Launch lm = *l;
	LLVMValueRef ctas = LLVMBuildTrunc(b, ctas64, g->t_i32, "");
	lm.grid3 = LLVMBuildInsertValue(b, l->grid3, ctas, 0, "");
	launch_entry(g, k, m, &lm);
	LLVMPositionBuilderAtEnd(b, no);
}

/* The fields of l->launch for entry v but its parameters' tensor maps. */
static void fill_launch(Cg *g, const GpuKernel *v, const Launch *l)
{
	LLVMBuilderRef b = g->b;
	LLVMValueRef b3 = LLVMGetUndef(LLVMArrayType2(g->t_i32, 3));
	for (unsigned d = 0; d < 3; d++)
		b3 = LLVMBuildInsertValue(b, b3, cg_i32(g, d ? 1 : v->threads), d, "");
	LLVMValueRef fields[6] = {LLVMBuildGlobalString(b, v->name, ""), l->module, l->grid3, b3,
	                          cg_i32(g, (int32_t)v->dynamic_smem), l->params};
	LLVMTypeRef lt = launch_type(g);
	for (unsigned j = 0; j < 6; j++)
		LLVMBuildStore(b, fields[j], LLVMBuildStructGEP2(b, lt, l->launch, j, ""));
}

/* The launch of entry v (its name, CTA, shared memory and tensor maps),
 * persistent or not, returning its status; where v has a few-trips
 * variant (nvptx_sched.c), that one when the size symbol its loop's trip
 * count follows is at most few_most. */
static void launch_entry(Cg *g, const IrKernel *k, const GpuKernel *v, const Launch *l)
{
	LLVMBuilderRef b = g->b;
	/* A wide merge has no few-trips variant: short loops take the plain one's. */
	bool few_first = v->merged && v->merged->merge_waves;
	if (v->merged && !few_first)
		launch_merged(g, k, v, v->merged, l);
	if (v->few_trips) {
		LLVMValueRef few = LLVMBuildICmp(b, LLVMIntSLE, l->param[order_pos(k, KP_SIZE, v->few_size)],
		                                 cg_i64(g, v->few_most), "few.trips");
		LLVMBasicBlockRef yes = cg_block(g, "launch.few"), no = cg_block(g, "launch.many");
		LLVMBuildCondBr(b, few, yes, no);
		LLVMPositionBuilderAtEnd(b, yes);
		launch_entry(g, k, v->few_trips, l);
		LLVMPositionBuilderAtEnd(b, no);
	}
	if (few_first)
		launch_merged(g, k, v, v->merged, l);
	encode_maps(g, k, v, l->param, l->maps, l->params, l->nslots, l->np);
	fill_launch(g, v, l);
	/* Persistent CTAs loop over the tasks: the runtime launches only as
	 * many as the device holds at once. */
	static const char *const launch_fn[2] = {"pk_launch_cuda", "pk_launch_cuda_persistent"};
	LLVMValueRef cargs[2] = {l->stream, l->launch};
	LLVMTypeRef cparams[2] = {g->t_ptr, g->t_ptr};
	LLVMBuildRet(b, call(g, launch_fn[v->persistent], g->t_i32, cparams, 2, cargs));
}

/* The most tensor maps any entry the stub may launch for gk takes. */
static int most_tensor_maps(const GpuKernel *v)
{
	if (!v)
		return 0;
	int n = v->ntma, vs[3] = {most_tensor_maps(v->aligned), most_tensor_maps(v->few_trips),
	                          most_tensor_maps(v->merged)};
	for (int j = 0; j < 3; j++)
		n = vs[j] > n ? vs[j] : n;
	return n;
}

void cg_cuda_dispatch(Cg *g, const IrKernel *k, const GpuKernel *gk, LLVMValueRef module, LLVMValueRef stream,
                      LLVMValueRef *param, LLVMValueRef grid, bool host_variant)
{
	Arena *a = g->cc->arena;
	LLVMBuilderRef b = g->b;
	LLVMValueRef dev = call(g, "pk_stream_device", g->t_ptr, &g->t_ptr, 1, &stream);
	LLVMValueRef kind = call(g, "pk_device_kind_of", g->t_i32, &g->t_ptr, 1, &dev);
	LLVMBasicBlockRef cuda = cg_block(g, "cuda"), other = cg_block(g, "not.cuda");
	LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, kind, cg_i32(g, PK_DEVICE_CUDA), ""), cuda, other);
	LLVMPositionBuilderAtEnd(b, cuda);

	/* The kernel reads operands with 16-byte vector accesses. */
	for (int o = 0; o < k->noperands; o++) {
		LLVMValueRef p = param[order_pos(k, KP_OPERAND, o)];
		LLVMValueRef low = LLVMBuildAnd(b, LLVMBuildPtrToInt(b, p, g->t_i64, ""), cg_i64(g, 15), "");
		const char *msg = arena_printf(a, "%s: array argument '%s' is not 16-byte aligned (CUDA devices need it)",
		                               k->name, k->operands[o]->name);
		cg_fail_if(g, LLVMBuildICmp(b, LLVMIntNE, low, cg_i64(g, 0), ""), PK_ERR_INVALID_VALUE, msg, NULL, 0);
	}

	/* Grid extents: i32 each; blockIdx.x runs over the parallel ones. */
	int np = k->noperands + k->nscalars + k->nsizes + k->ngrid;
	LLVMValueRef *ext = arena_alloc(a, (size_t)(k->ngrid + 1) * sizeof *ext);
	LLVMValueRef ctas = cg_i64(g, 1), empty = LLVMConstInt(g->t_i1, 0, 0);
	LLVMTypeRef gt = k->ngrid ? LLVMArrayType2(g->t_i64, (uint64_t)k->ngrid) : NULL;
	for (int d = 0; d < k->ngrid; d++) {
		LLVMValueRef idx[2] = {cg_i64(g, 0), cg_i64(g, d)};
		LLVMValueRef e = LLVMBuildLoad2(b, g->t_i64, LLVMBuildInBoundsGEP2(b, gt, grid, idx, 2, ""), "");
		const char *msg = arena_printf(a, "%s: grid extent %%lld of axis %d is out of range [0, 2147483647]",
		                               k->name, d);
		cg_fail_if(g, LLVMBuildICmp(b, LLVMIntUGT, e, cg_i64(g, INT32_MAX), ""), PK_ERR_INVALID_VALUE, msg, &e, 1);
		empty = LLVMBuildOr(b, empty, LLVMBuildICmp(b, LLVMIntEQ, e, cg_i64(g, 0), ""), "");
		ext[d] = LLVMBuildTrunc(b, e, g->t_i32, "");
		if (!(k->semantics && k->semantics[d] == AXIS_ARBITRARY)) {
			/* Both are < 2^31 and the product so far too: no overflow. */
			ctas = LLVMBuildMul(b, ctas, e, "");
			const char *m2 = arena_printf(a, "%s: the grid has %%lld programs along its parallel axes; CUDA allows "
			                              "at most 2147483647", k->name);
			cg_fail_if(g, LLVMBuildICmp(b, LLVMIntUGT, ctas, cg_i64(g, INT32_MAX), ""), PK_ERR_INVALID_VALUE, m2,
			           &ctas, 1);
		}
	}
	/* An empty grid runs nothing. */
	LLVMBasicBlockRef none = cg_block(g, "empty.grid"), go = cg_block(g, "launch");
	LLVMBuildCondBr(b, empty, none, go);
	LLVMPositionBuilderAtEnd(b, none);
	LLVMBuildRet(b, cg_i32(g, PK_SUCCESS));
	LLVMPositionBuilderAtEnd(b, go);

	/* Parameters: operands, scalars (memory form), sizes, grid extents,
	 * then the launched variant's tensor maps. */
	int nt = most_tensor_maps(gk);
	int nslots = np + nt;
	LLVMValueRef params = LLVMBuildAlloca(b, LLVMArrayType2(g->t_ptr, (uint64_t)(nslots > 0 ? nslots : 1)), "params");
	int p = 0;
	for (int j = 0; j < k->noperands + k->nscalars + k->nsizes + k->ngrid; j++) {
		LLVMValueRef v;
		if (j < k->noperands) {
			v = param[order_pos(k, KP_OPERAND, j)];
		} else if (j < k->noperands + k->nscalars) {
			int s = j - k->noperands;
			v = param[order_pos(k, KP_SCALAR, s)];
			if (k->scalars[s]->dtype == DT_BOOL)
				v = LLVMBuildZExt(b, v, g->t_i8, "");
		} else if (j < k->noperands + k->nscalars + k->nsizes) {
			v = param[order_pos(k, KP_SIZE, j - k->noperands - k->nscalars)];
		} else {
			v = ext[j - k->noperands - k->nscalars - k->nsizes];
		}
		LLVMValueRef slot = LLVMBuildAlloca(b, LLVMTypeOf(v), "");
		LLVMBuildStore(b, v, slot);
		LLVMValueRef idx[2] = {cg_i64(g, 0), cg_i64(g, p++)};
		LLVMBuildStore(b, slot, LLVMBuildInBoundsGEP2(b, LLVMArrayType2(g->t_ptr, (uint64_t)nslots), params, idx, 2, ""));
	}

	LLVMValueRef g3[3] = {LLVMBuildTrunc(b, ctas, g->t_i32, ""), cg_i32(g, 1), cg_i32(g, 1)};
	LLVMValueRef grid3 = LLVMGetUndef(LLVMArrayType2(g->t_i32, 3));
	for (unsigned d = 0; d < 3; d++)
		grid3 = LLVMBuildInsertValue(b, grid3, g3[d], d, "");
	Launch l = {param, module, stream, LLVMBuildAlloca(b, launch_type(g), "cuda.launch"), grid3, NULL, params,
	            nslots, np, ext, ctas};
	if (nt) {
		LLVMTypeRef mt = LLVMArrayType2(g->t_i8, PK_CUDA_TENSOR_MAP_BYTES);
		l.maps = LLVMBuildAlloca(b, LLVMArrayType2(mt, (uint64_t)nt), "tmaps");
		LLVMSetAlignment(l.maps, 64);
	}
	/* The aligned variant when the size symbols it assumes are multiples
	 * of GPU_ALIGNED_DIV (its 16-byte row copies then hold). */
	if (gk->aligned) {
		LLVMValueRef bits = cg_i64(g, 0);
		for (int s = 0; s < k->nsizes && s < 64; s++)
			if (gk->aligned_sizes >> s & 1)
				bits = LLVMBuildOr(b, bits, param[order_pos(k, KP_SIZE, s)], "");
		LLVMValueRef al = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, bits, cg_i64(g, GPU_ALIGNED_DIV - 1), ""),
		                                cg_i64(g, 0), "aligned");
		LLVMBasicBlockRef va = cg_block(g, "launch.aligned"), vb = cg_block(g, "launch.plain");
		LLVMBuildCondBr(b, al, va, vb);
		LLVMPositionBuilderAtEnd(b, va);
		launch_entry(g, k, gk->aligned, &l);
		LLVMPositionBuilderAtEnd(b, vb);
	}
	launch_entry(g, k, gk, &l);

	/* Other devices: the host variant (the caller goes on), or none. */
	LLVMPositionBuilderAtEnd(b, other);
	if (!host_variant) {
		LLVMTypeRef pt[2] = {g->t_i32, g->t_ptr};
		LLVMValueRef args[2] = {
			cg_i32(g, PK_ERR_NO_KERNEL_FOR_DEVICE),
			LLVMBuildGlobalString(b, arena_printf(a, "%s: this object has no host variant (compiled with "
			                                      "--target= GPU targets only)", k->name), ""),
		};
		LLVMBuildRet(b, cg_call_extern(g, "pk_set_error", g->t_i32, pt, 2, true, args, 2));
	}
}
