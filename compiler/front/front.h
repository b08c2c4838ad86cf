/* front.h - the front end's entry points for the driver: parse_file (the
 * AST, ast.h) and sema_file (the AST -> the typed IR, ir.h). */
#ifndef PKC_FRONT_H
#define PKC_FRONT_H

#include "ast.h"
#include "ir.h"

/* ---- sema (sema.c) ----------------------------------------------------- */
/* Checks the AST and builds the IR.  Returns NULL if errors were reported. */
IrModule *sema_file(Compiler *cc, AstFile *f);

#endif
