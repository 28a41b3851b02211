/* Random bits from the kernel (getrandom), drawn at the moment of use: no generator state in
 * the process that a candidate could read or set. */
#ifndef CUTEGEN_OSRAND_H
#define CUTEGEN_OSRAND_H

#include <stdint.h>

/* Fills *v; 0, or -1 where the kernel gave fewer bits (v is then left as it was). */
int os_random64(uint64_t *v);

#endif
