/* c_names.c - which names a C function or parameter cannot have: the host
 * and CUDA back ends both export a C launch function per kernel, and the
 * header declares it with the kernel's parameter names. */
#include "pkc.h"

#include <string.h>

/* Keywords of C (to C23) and C++ (to C++20), and macros of the headers the
 * generated header includes: none can name a function or a parameter. */
static const char *const reserved_words[] = {
	"alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
	"char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "const_cast", "consteval",
	"constexpr", "constinit", "continue", "co_await", "co_return", "co_yield", "decltype", "default",
	"delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float",
	"for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not",
	"not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
	"reinterpret_cast", "requires", "restrict", "return", "short", "signed", "sizeof", "static",
	"static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
	"try", "typedef", "typeid", "typename", "typeof", "typeof_unqual", "union", "unsigned", "using",
	"virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "NULL", "offsetof", "size_t",
	"ptrdiff_t", "max_align_t", "nullptr_t", "SIZE_MAX", "PTRDIFF_MIN", "PTRDIFF_MAX", "SIG_ATOMIC_MIN",
	"SIG_ATOMIC_MAX", "WCHAR_MIN", "WCHAR_MAX", "WINT_MIN", "WINT_MAX",
};

/* C library functions the generated code may call (libm, and what LLVM
 * turns loops and allocations into): a kernel of that name would take
 * their place at link time. */
static const char *const libc_names[] = {
	"memcpy", "memmove", "memset", "memcmp", "bcmp", "malloc", "calloc", "realloc", "free", "aligned_alloc",
	"posix_memalign", "abort", "exit", "main",
};
static const char *const libm_bases[] = {
	"exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "sin", "cos", "tan",
	"sincos", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "erf", "erfc", "pow", "fmod",
	"remainder", "floor", "ceil", "trunc", "round", "rint", "nearbyint", "lround", "llround", "lrint",
	"llrint", "fabs", "fmin", "fmax", "fma", "ldexp", "frexp", "modf", "hypot", "copysign",
};

/* Does s name something the header or the C headers it includes define? */
bool c_name_reserved(const char *s)
{
	for (size_t i = 0; i < sizeof reserved_words / sizeof reserved_words[0]; i++)
		if (strcmp(s, reserved_words[i]) == 0)
			return true;
	size_t n = strlen(s);
	/* int8_t ... uintmax_t of <stdint.h>. */
	if ((starts_with(s, "int") || starts_with(s, "uint")) && n > 2 && strcmp(s + n - 2, "_t") == 0)
		return true;
	/* Its macros INT8_MAX, UINT64_C, INT_LEAST8_MIN, INTPTR_MAX, INTMAX_C... */
	const char *r = s[0] == 'U' ? s + 1 : s;
	if (starts_with(r, "INT")) {
		r += 3;
		if ((*r >= '0' && *r <= '9') || starts_with(r, "_LEAST") || starts_with(r, "_FAST") ||
		    starts_with(r, "PTR_") || starts_with(r, "MAX_"))
			return true;
	}
	/* Reserved identifiers (C11 7.1.3: file scope), and the runtime's names. */
	return s[0] == '_' || starts_with(s, "pk_") || starts_with(s, "PK_");
}

static bool libc_name(const char *s)
{
	for (size_t i = 0; i < sizeof libc_names / sizeof libc_names[0]; i++)
		if (strcmp(s, libc_names[i]) == 0)
			return true;
	for (size_t i = 0; i < sizeof libm_bases / sizeof libm_bases[0]; i++) {
		size_t n = strlen(libm_bases[i]);
		if (strncmp(s, libm_bases[i], n) == 0 &&
		    (s[n] == '\0' || ((s[n] == 'f' || s[n] == 'l') && s[n + 1] == '\0')))
			return true;
	}
	return false;
}

bool check_kernel_name(Compiler *cc, const char *name, Loc loc)
{
	const char *why = NULL;
	if (c_name_reserved(name))
		why = "is reserved in C or C++ (a keyword, a name of <stdint.h> or <stdbool.h>, or a pk_ runtime name)";
	else if (libc_name(name))
		why = "is a C library function the generated code may call";
	if (!why)
		return true;
	error_at(cc, loc, "kernel name '%s' %s; the generated launch function cannot have that name [§5.10]", name,
	         why);
	return false;
}
