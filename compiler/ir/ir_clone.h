/* ir_clone.h - IR rewriting helpers (ir_clone.c): a value map, insertion
 * points, cloning of instructions and region bodies, use replacement. */
#ifndef PKC_IR_CLONE_H
#define PKC_IR_CLONE_H

#include "ir.h"

/* A map from values of the old IR to values of the new one (open
 * addressing on the pointer).  Lives in an arena. */
typedef struct ValueMap ValueMap;

ValueMap *vmap_new(Arena *a);
void vmap_set(ValueMap *m, const Value *from, Value *to);
Value *vmap_get(const ValueMap *m, const Value *from);    /* NULL when unmapped */
Value *vmap_lookup(const ValueMap *m, Value *from);       /* the mapped value, or `from` itself */

/* Where new instructions go: before `before` in its region, or appended to
 * `region` when `before` is NULL. */
typedef struct InsertPoint {
	Region *region; /* the region receiving the instructions */
	Inst *before;   /* insert before this one (NULL: append) */
} InsertPoint;

void ir_insert_at(InsertPoint at, Inst *i);

/* Clones one instruction (with its regions, recursively) to `at`.
 * Operands are mapped through m (unmapped ones stay); results and region
 * arguments of the copy are recorded in m.  Attributes are copied. */
Inst *ir_clone_inst(Arena *a, IrKernel *k, const Inst *src, ValueMap *m, InsertPoint at);

/* Clones the instructions of `src`, except its final YIELD, to `at`; src's
 * arguments must already be mapped in m.  Returns the mapped operands of
 * src's YIELD (an arena array of *nyield values). */
Value **ir_clone_region_body(Arena *a, IrKernel *k, const Region *src, ValueMap *m, InsertPoint at, int *nyield);

/* Rewrites every operand of every instruction in r (recursively) through m. */
void ir_remap_uses(Region *r, const ValueMap *m);

/* Replaces every use of `from` in the kernel body by `to`. */
void ir_replace_all_uses(IrKernel *k, Value *from, Value *to);

#endif
