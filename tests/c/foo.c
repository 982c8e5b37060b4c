/* A user library with a global counter (libfoo.so of the libfoo test). */
int foo_counter = 0;
int foo_bump(void) { return ++foo_counter; }
