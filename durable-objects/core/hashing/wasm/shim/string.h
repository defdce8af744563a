/* Freestanding build: bulk-memory instructions stand in for the C library's routines. */
#include <stddef.h>
#define memcpy(d, s, n) __builtin_memcpy((d), (s), (n))
#define memset(d, c, n) __builtin_memset((d), (c), (n))
#define memcmp(a, b, n) __builtin_memcmp((a), (b), (n))
