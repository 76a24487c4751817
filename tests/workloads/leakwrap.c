// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocator wrappers with a header of their own, as MariaDB's my_malloc:
 * each returns the block + 16 or + 24, and its callers hold only that
 * pointer. One function per class, with known blocks and bytes; it
 * returns from main at once, for a check at exit. Declared to
 * alloctrace (--leak-check-wrapper wrap16_malloc:16 wrap24_malloc:24),
 * the blocks the callers hold are reachable; not declared, and to
 * valgrind, they are possibly lost.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Headers no valgrind heuristic takes for its shape: a magic word, not a length. */
struct header16 {
	uint64_t size;
	uint64_t magic;
};

struct header24 {
	uint64_t magic;
	uint64_t size;
	uint64_t key;
};

#define MAGIC 0x4d61726961444221ULL

void *wrap16_malloc(size_t size)
{
	struct header16 *h = malloc(sizeof(*h) + size);

	*h = (struct header16){size, MAGIC};
	memset(h + 1, 0, size);
	return h + 1;
}

void *wrap24_malloc(size_t size)
{
	struct header24 *h = malloc(sizeof(*h) + size);

	*h = (struct header24){MAGIC, size, 7};
	memset(h + 1, 0, size);
	return h + 1;
}

void *kept16[3];
void **kept24;
char *inside16;

/* Three blocks of 16 + 100 bytes held through the pointers the wrapper returned. */
static void keep16(void)
{
	for (int i = 0; i < 3; i++)
		kept16[i] = wrap16_malloc(100);
}

/* A block of 24 + 40 held so, holding another one so. */
static void keep24(void)
{
	kept24 = wrap24_malloc(40);
	kept24[0] = wrap24_malloc(40);
}

static void leak16(void)
{
	void *p = wrap16_malloc(48);

	p = wrap16_malloc(48);
	p = NULL;
	(void)p;
}

/* A list of three blocks of 24 + 16, its head forgotten. */
static void leak24(void)
{
	void **head = NULL, **n;

	for (int i = 0; i < 3; i++) {
		n = wrap24_malloc(16);
		n[0] = head;
		head = n;
	}
	head = n = NULL;
}

/* Held 8 bytes past the pointer the wrapper returned: not where a caller holds it. */
static void inside(void)
{
	inside16 = (char *)wrap16_malloc(64) + 8;
}

/*
 * The dead frames of the calls above still hold the blocks' starts, which
 * the exit path's frames do not all overwrite: a stale one there would
 * make a lost block reachable. Zeroed, as valgrind's own malloc leaves them.
 */
static void scrub_stack(void)
{
	char dead[16384];

	explicit_bzero(dead, sizeof(dead));
}

int main(void)
{
	keep16();
	keep24();
	leak16();
	leak24();
	inside();
	scrub_stack();
	return 0;
}
