/* Input of test/errors/diagnostics-tested.test: clause-tagged formats. */
#define MZ_TARGET "--target=gadget"
void widget(void)
{
	error_at(cc, loc, "the widget '%s' is frobnicated %d times [§9.1]", name, n);
	fail(s, loc, "a gadget of %lld bytes is not supported by " MZ_TARGET
	     " (%s) [§9.2]", size, why);
	error_at(cc, loc, "never happens [§9.3]"); /* "a comment [§9.4]" is no format */
	error_at(cc, loc, "no clause here");
}
