/* fuzz_frontend.c - libFuzzer target for the front end: lexer, parser,
 * sema and the IR verifier on arbitrary bytes.  Built by `make fuzz` with
 * -fsanitize=fuzzer,address,undefined against support/, front/ and ir/.
 * A finding is a crash, a sanitizer report, a leak (everything must be
 * freed by compiler_free), or an exit (internal_error: a bug). */
#include "pkc.h"
#include "front.h"
#include "ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Compiler cc;
	compiler_init(&cc);
	cc.diag.stream = NULL; /* count diagnostics, print nothing */
	Source *src = source_from_memory(&cc, "fuzz.pk", (const char *)data, size);
	AstFile *ast = parse_file(&cc, src);
	if (cc.diag.nerrors == 0) {
		IrModule *m = sema_file(&cc, ast);
		/* An IR that sema accepted must verify: a failure is a bug. */
		if (m && cc.diag.nerrors == 0 && !ir_verify(m, "sema"))
			internal_error("fuzz: IR after sema does not verify");
	}
	compiler_free(&cc);
	return 0;
}
