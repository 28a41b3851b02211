/* libFuzzer target for the config file parser (config_parse_llm in src/llm/llm_config.c), then the
 * resolution of what it set. `make fuzz-run`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm_config.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size ? size : 1);
	memcpy(text, data, size);
	struct llm_config cfg;
	llm_config_init(&cfg);
	char *err = NULL;
	if (config_parse_llm(&cfg, text, size, "fuzz.json", &err)) {
		if (!err)
			BUG("config_parse_llm failed without a message");
	} else {
		(void)llm_config_price(&cfg, cfg.model ? cfg.model : "gpt-5");
		struct llm_config copy;
		llm_config_init(&copy);
		llm_config_copy(&copy, &cfg);
		if (llm_config_resolve(&copy, &err) != LLM_OK && !err)
			BUG("llm_config_resolve failed without a message");
		llm_config_release(&copy);
	}
	free(err);
	llm_config_release(&cfg);
	free(text);
	return 0;
}
