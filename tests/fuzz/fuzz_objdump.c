/* libFuzzer target for the object check's readers of objdump's output (policy.c): the input
 * is read as `objdump -wtr` output and as `objdump -wd` output, then judged against a small
 * source. `make fuzz`, then scripts/fuzz.sh 20 objdump (seeds: tests/fuzz/corpus/objdump/). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/policy.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char source[] = "extern \"C\" int f(int) __asm__(\"op\" \"en\");\n"
				     "int g() { return f(1); }\n";
	struct obj_info o = OBJ_INFO_INIT;
	policy_parse_objdump((const char *)data, size, &o);
	policy_parse_disasm((const char *)data, size, &o);
	free(o.error); /* judge whatever was read, so the checks see the input too */
	o.error = NULL;
	for (size_t i = 0; i < o.nsyms && i < 4; i++)
		if (!o.syms[i].plain)
			o.syms[i].plain = strdup(o.syms[i].name); /* the demangled path too */
	struct policy_report rep = POLICY_REPORT_INIT;
	policy_check_object(&o, source, sizeof(source) - 1, &rep);
	struct strbuf out = STRBUF_INIT;
	policy_format(&rep, &out);
	strbuf_release(&out);
	policy_report_release(&rep);
	obj_info_release(&o);
	return 0;
}
