/* Run-time paths; see paths.h. */
#include "common/paths.h"
#include "util/fsutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *cutegen_libexec_dir(void)
{
	static char *dir;
	if (!dir) {
		const char *env = getenv("CUTEGEN_LIBEXEC");
		dir = env ? xstrdup(env) : exe_dir();
		if (!dir)
			dir = xstrdup(".");
	}
	return dir;
}

char *paths_runner(void)
{
	const char *env = getenv("CUTEGEN_RUNNER");
	char *p = env && *env ? xstrdup(env) : xasprintf("%s/cutegen-runner", cutegen_libexec_dir());
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	return NULL;
}

char *paths_find_program(const char *name)
{
	const char *path = getenv("PATH");
	struct strbuf dirs = STRBUF_INIT;
	strbuf_addf(&dirs, "%s:/usr/local/cuda/bin", path ? path : "/usr/bin:/bin");
	char *save = NULL, *found = NULL;
	for (char *d = strtok_r(dirs.buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *d ? d : ".", name);
		if (access(p, X_OK) == 0) {
			found = p;
			break;
		}
		free(p);
	}
	strbuf_release(&dirs);
	return found;
}

char *paths_nvcc(void)
{
	const char *env = getenv("NVCC");
	if (env && *env)
		return access(env, X_OK) == 0 ? xstrdup(env) : NULL;
	return paths_find_program("nvcc");
}

char *paths_cutlass_version(const char *include_dir)
{
	struct strbuf sb = STRBUF_INIT;
	char *p = xasprintf("%s/../VERSION", include_dir);
	if (strbuf_read_file(&sb, p, 256) == 0) {
		strbuf_trim(&sb);
		free(p);
		if (sb.len)
			return strbuf_detach(&sb, NULL);
	}
	free(p);
	strbuf_release(&sb);
	p = xasprintf("%s/cutlass/version.h", include_dir);
	int major = -1, minor = -1, patch = -1;
	if (strbuf_read_file(&sb, p, 1 << 20) == 0) {
		const char *s;
		if ((s = strstr(sb.buf, "#define CUTLASS_MAJOR ")))
			major = atoi(s + 22);
		if ((s = strstr(sb.buf, "#define CUTLASS_MINOR ")))
			minor = atoi(s + 22);
		if ((s = strstr(sb.buf, "#define CUTLASS_PATCH ")))
			patch = atoi(s + 22);
	}
	free(p);
	strbuf_release(&sb);
	if (major < 0)
		return xstrdup("unknown");
	return xasprintf("%d.%d.%d", major, minor, patch);
}
