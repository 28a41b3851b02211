/* getrandom, retried over signals; see osrand.h. */
#include "osrand.h"

#include <errno.h>
#include <sys/random.h>
#include <sys/types.h>

int os_random64(uint64_t *v)
{
	uint64_t got;
	ssize_t n;
	while ((n = getrandom(&got, sizeof(got), 0)) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(got))
		return -1;
	*v = got;
	return 0;
}
