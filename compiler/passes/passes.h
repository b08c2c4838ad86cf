/* passes.h - the IR-to-IR passes of the host pipeline (HOST-DESIGN.md) and
 * the IR rewriting helpers they share (ir/ir_clone.h).
 *
 *   sema -> lower-refs -> split-loops -> tile-host -> llvm-host
 *
 * A pass returns false when it reported an error (error_at with a source
 * location); the driver verifies the module after every pass. */
#ifndef PKC_PASSES_H
#define PKC_PASSES_H

#include "ir.h"
#include "ir_clone.h" /* the rewriting helpers the passes share */

/* ---- passes ------------------------------------------------------------ */

/* lower-refs (lower_refs.c): body args become whole-array Refs, index
 * maps are inlined as element offsets, every access addresses the whole
 * array (masked on dynamic dims), scratch becomes ALLOCs.  Sets
 * k->refs_lowered. */
bool pass_lower_refs(Compiler *cc, IrModule *m);

/* split-loops (split_loops.c): a `for` whose body selects with an iota
 * comparison that is true for every element on a prefix or suffix of the
 * iterations (causal attention's mask) becomes two loops, the select
 * dropped in the uniform one. */
bool pass_split_loops(Compiler *cc, IrModule *m);

/* tile-host (tile_host.c): every tensor value becomes a SPACE_LOCAL
 * ALLOC filled by loop nests of scalar code (or is fused into its single
 * consumer's loop nest).  Requires refs_lowered; sets k->tiled. */
bool pass_tile_host(Compiler *cc, IrModule *m);

#endif
