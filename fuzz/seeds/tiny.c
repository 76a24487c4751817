// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A tiny object with malloc and free: built by fuzz/fuzz.mk into the seed
 * corpus of fuzz_elf as an object, a shared library and an executable. */
static char heap[256];
static unsigned long used;

void *malloc(unsigned long size)
{
	void *p = size <= sizeof(heap) - used ? heap + used : 0;

	used += p ? size : 0;
	return p;
}

void free(void *p)
{
	if (!p)
		return;
}

int main(void)
{
	free(malloc(8));
	return 0;
}
