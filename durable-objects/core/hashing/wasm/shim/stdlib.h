/* Freestanding build: the one-shot XXH3 never allocates; only the streaming API (compiled out) would. */
#include <stddef.h>
void *malloc(size_t size);
void free(void *pointer);
