/* tile_host.h - private to the tile-host pass (tile_host.c, tile_plan.c):
 * its state, and the planner's answers the lowering asks. */
#ifndef PKC_TILE_HOST_H
#define PKC_TILE_HOST_H

#include "passes.h"

/* ---- data structures ------------------------------------------------------- */

typedef struct AccessPlan AccessPlan;

/* Where the elements of one value of the input IR come from. */
typedef enum TileKind {
	T_NONE,   /* not lowered (yet), or never needed */
	T_VALUE,  /* a value of the new IR used as is: a scalar (rank 0) or a Ref */
	T_SPLAT,  /* a tensor whose every element is the scalar v */
	T_BUFFER, /* a tensor materialised in the SPACE_LOCAL ALLOC v */
	T_LAZY    /* a tensor computed element by element at its use, by inst */
} TileKind;

typedef struct Tile {
	TileKind kind;     /* which form */
	Value *v;          /* T_VALUE, T_SPLAT: the value; T_BUFFER: the ALLOC'd Ref */
	const Inst *inst;  /* T_LAZY: the input instruction computing the element */
	AccessPlan *plan;  /* T_LAZY loads: the access set up at the definition */
} Tile;

/* What the planner knows about one value of the input IR. */
typedef struct UseInfo {
	int nuses;           /* operand slots that use it */
	const Inst *user;    /* the last user seen (the only one when nuses == 1) */
	bool live;           /* used by an instruction that is needed (dead code is not lowered) */
	bool lazy;           /* computed at its use (T_LAZY) rather than materialised */
	int depth;           /* lazy (or a load): 1 + the deepest lazy operand's depth; else 0 */
	const Inst *cover;   /* a lazy masked load: the store whose loop bounds keep it in range */
} UseInfo;

/* A LOAD/STORE/ATOMIC prepared for scalar code: the per-dim index pieces
 * that do not depend on the element, computed once before the loops. */
struct AccessPlan {
	const Inst *inst;    /* the input access */
	Value *ref;          /* the Ref it addresses (new IR) */
	int nidx;            /* Ref rank = number of indexers */
	int rank;            /* rank of the access shape */
	int64_t *shape;      /* the access shape */
	Value **start;       /* per Ref dim: POINT index or SLICE start (SLICE: i64), else NULL */
	int *rdim;           /* per Ref dim: the access dim a FULL/SLICE runs along, else -1 */
	const Value **gather;/* per Ref dim: the GATHER index tensor (input IR), else NULL */
	Value **extent;      /* per Ref dim with a masked indexer: its i64 extent, else NULL */
	Value **lo, **hi;    /* per access dim: valid range of a masked slice (NULL: 0 / the full size) */
	Value *cond;         /* all masked points in bounds (NULL: no masked point) */
	int value_arg;       /* operand index of the stored value (-1: load) */
	int cmp_arg;         /* operand index of the CAS compare value, or -1 */
	int mask_arg;        /* operand index of the user mask, or -1 */
	int other_arg;       /* operand index of `other`, or -1 */
	bool no_result;      /* an atomic whose old value nobody uses */
};

/* One FOR being built. */
typedef struct Loop {
	Inst *inst;      /* the FOR */
	Region *saved;   /* the insertion region to return to */
	Value *iv;       /* its induction variable */
	Value **carried; /* its carried region arguments */
} Loop;

/* A nest of loops over a box, one per dim (none for a dim of one element). */
typedef struct Nest {
	int rank;        /* dims */
	Value **iv;      /* per dim: the index (an induction variable, or const 0) */
	Loop *loops;     /* per dim: the loop (inst NULL when none was opened) */
} Nest;

/* One IF being built. */
typedef struct IfBuild {
	Inst *inst;      /* the IF */
	Region *saved;   /* the insertion region to return to */
} IfBuild;

/* One interned constant of the new IR (all live at the top of the body). */
typedef struct ConstEntry {
	DType dt;        /* its dtype */
	int64_t ival;    /* integer/bool value */
	double fval;     /* float value (compared bitwise) */
	Value *v;        /* the CONST's result */
} ConstEntry;

/* State of the pass over one kernel. */
typedef struct TileHost {
	Compiler *cc;        /* diagnostics */
	Arena *a;            /* where the new IR is allocated */
	IrKernel *k;         /* the kernel */
	Region *cur;         /* where new instructions are appended */
	Loc loc;             /* source location given to new instructions */
	int nold;            /* values of the input IR have ids below this */
	Tile *tiles;         /* per input value id */
	UseInfo *info;       /* per input value id */
	Region *consts;      /* holds the interned constants until they move to the body's top */
	Vec const_list;      /* ConstEntry*, the interned constants */
	Type *scalar[DT_COUNT]; /* scalar type of each dtype */
	const Inst *covering;/* the store whose nest is being emitted (lazy masked loads check it) */
	bool failed;         /* an error was reported */
} TileHost;

/* ---- small accessors ------------------------------------------------------------ */

static inline Tile *tile(TileHost *t, const Value *v)
{
	PKC_ASSERT(v->id >= 0 && v->id < t->nold);
	return &t->tiles[v->id];
}

static inline UseInfo *info(TileHost *t, const Value *v)
{
	PKC_ASSERT(v->id >= 0 && v->id < t->nold);
	return &t->info[v->id];
}

static inline bool is_tensor(const Value *v)
{
	return v->type->kind == TY_VALUE && v->type->rank > 0;
}

static inline bool const_int(const Value *v, int64_t *out)
{
	if (!v->def || v->def->op != IR_CONST || v->type->rank != 0 || dtype_is_float(v->type->dtype))
		return false;
	*out = v->def->ival;
	return true;
}

/* ---- the planner (tile_plan.c) ------------------------------------------------------ */

/* Liveness: whether input instruction i is needed; one sweep marking the
 * operands of needed instructions (true if it marked anything new); the
 * uses of each value by needed instructions. */
bool inst_live(TileHost *t, const Inst *i);
bool mark_live(TileHost *t, const Region *r);
void count_uses(TileHost *t, const Region *r);
/* Broadcast, transpose, reshape: pure index arithmetic over the operand. */
bool is_view(Op op);
/* Computed element by element from the same element of its operands. */
bool is_elementwise(const Inst *i);
/* Whether integer scalar v of the input is provably >= 0. */
bool nonneg(TileHost *t, const Value *v, int depth);
/* Which tensor values are lazy (UseInfo.lazy): elementwise ops and views
 * first, then loads (they need to know where their chain ends). */
void plan_elementwise(TileHost *t, const Region *r);
void plan_loads(TileHost *t, const Region *r);

#endif
