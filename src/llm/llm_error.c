/*
 * The llm errors: their stable names (--json, transcripts) and the kind of each (a result code
 * of util/err.h, which the commands turn into exit statuses).
 * Not for: making the messages (each backend and llm_http_call does).
 */
#include "llm/llm.h"
#include "util/err.h"
#include "util/xalloc.h"

#include <string.h>

static const struct {
	int err;
	const char *name;
	int code; /* its kind: a result code of util/err.h */
} errors[] = {
	{ LLM_OK, "ok", CG_OK },
	{ LLM_ERR_CONFIG, "config", CG_USAGE },
	{ LLM_ERR_NO_KEY, "no_key", CG_ENV },
	{ LLM_ERR_AUTH, "auth", CG_ENV },
	{ LLM_ERR_BAD_REQUEST, "bad_request", CG_EXTERNAL },
	{ LLM_ERR_NOT_FOUND, "not_found", CG_EXTERNAL },
	{ LLM_ERR_RATE_LIMIT, "rate_limited", CG_EXTERNAL },
	{ LLM_ERR_SERVER, "server", CG_EXTERNAL },
	{ LLM_ERR_NETWORK, "network", CG_EXTERNAL },
	{ LLM_ERR_TIMEOUT, "timeout", CG_EXTERNAL },
	{ LLM_ERR_MALFORMED, "malformed", CG_EXTERNAL },
	{ LLM_ERR_TRUNCATED, "truncated", CG_EXTERNAL },
	{ LLM_ERR_TOO_BIG, "too_big", CG_EXTERNAL },
	{ LLM_ERR_COMMAND, "command", CG_EXTERNAL },
	{ LLM_ERR_REPLAY_END, "replay_end", CG_INPUT },
	{ LLM_ERR_INPUT, "input", CG_INPUT },
	{ LLM_ERR_IO, "io", CG_IO },
};

const char *llm_error_name(int err)
{
	for (size_t i = 0; i < ARRAY_SIZE(errors); i++)
		if (errors[i].err == err)
			return errors[i].name;
	return "unknown";
}

int llm_error_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(errors); i++)
		if (!strcmp(errors[i].name, name))
			return errors[i].err;
	return -1;
}

int llm_error_code(int err)
{
	for (size_t i = 0; i < ARRAY_SIZE(errors); i++)
		if (errors[i].err == err)
			return errors[i].code;
	return CG_INTERNAL;
}
