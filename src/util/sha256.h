/* SHA-256 (FIPS 180-4), for content hashes: compile-cache keys, stored sources and logs. */
#ifndef CUTEGEN_SHA256_H
#define CUTEGEN_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t nbytes;
	unsigned char block[64];
	size_t fill;
};

void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
void sha256_final(struct sha256 *c, unsigned char out[32]);
/* Finishes and writes 64 lowercase hex digits and a NUL into hex[65]. */
void sha256_final_hex(struct sha256 *c, char hex[65]);
/* One-shot hex digest of a buffer. */
void sha256_hex(const void *data, size_t len, char hex[65]);

#endif
