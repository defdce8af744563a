/* Freestanding build: assertions off (NDEBUG), as in xxHash's release builds. */
#define assert(condition) ((void)0)
#define static_assert _Static_assert
