// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * alloc_tcmalloc: exact leaks in a C++ program linked with
 * -ltcmalloc_minimal. gperftools defines operator new and delete itself
 * (tc_new, tc_delete_sized, ...): they never call malloc, so only probes
 * on them see these blocks.
 *
 *   leak_malloc         25 x malloc(80)                              = 2000 bytes
 *   leak_calloc          5 x calloc(8, 25)                           = 1000
 *   new_leak_scalar     20 x new Widget (40); 8 deleted (sized delete) =  480
 *   new_leak_array       5 x new int[250] (1000); 2 delete[]         = 3000
 *   new_leak_aligned     4 x new Aligned (192, alignas 64); 1 deleted =  576
 *   churn               10,000 malloc/free pairs                     =    0
 *   new_delete_churn     1,000 x (new/delete + new[]/delete[])       =    0
 *   big_malloc           1 x malloc(3 MiB)                           = 3145728
 *   big_new              1 x new Big (2 MiB)                         = 2097152
 *
 * Widget, int and Aligned are trivially destructible: new[] adds no array
 * cookie, so the sizes asked for are exactly the ones above. The named
 * functions call the allocator themselves (frames[0] is theirs) and have
 * C linkage, so their names do not depend on demangling.
 *
 * libstdc++ allocates its exception-handling pool with malloc before main:
 * the process holds that too, under no function of this file.
 */
#include <cstdlib>
#include <new>

#define NOINLINE __attribute__((noinline))

struct Widget {
	char data[40];
};

struct alignas(64) Aligned {
	char data[192];
};

struct Big {
	char data[2 << 20];
};

static void *kept[128];
static unsigned int nkept;

static void keep(void *p)
{
	if (!p || nkept >= sizeof(kept) / sizeof(kept[0]))
		abort();
	kept[nkept++] = p;
}

extern "C" NOINLINE void leak_malloc(void)
{
	for (int i = 0; i < 25; i++)
		keep(malloc(80));
}

extern "C" NOINLINE void leak_calloc(void)
{
	for (int i = 0; i < 5; i++)
		keep(calloc(8, 25));
}

/* delete of a complete type is the sized operator delete(void *, size_t). */
extern "C" NOINLINE void new_leak_scalar(void)
{
	Widget *w[20];

	for (int i = 0; i < 20; i++)
		w[i] = new Widget;
	for (int i = 0; i < 8; i++)
		delete w[i];
	for (int i = 8; i < 20; i++)
		keep(w[i]);
}

extern "C" NOINLINE void new_leak_array(void)
{
	int *a[5];

	for (int i = 0; i < 5; i++)
		a[i] = new int[250];
	delete[] a[0];
	delete[] a[1];
	for (int i = 2; i < 5; i++)
		keep(a[i]);
}

/* C++17 over-aligned new and delete: operator new(size_t, align_val_t). */
extern "C" NOINLINE void new_leak_aligned(void)
{
	Aligned *a[4];

	for (int i = 0; i < 4; i++)
		a[i] = new Aligned;
	delete a[0];
	for (int i = 1; i < 4; i++)
		keep(a[i]);
}

extern "C" NOINLINE void churn(void)
{
	void *window[8] = {nullptr};

	for (int i = 0; i < 10000; i++) {
		int slot = i % 8;

		free(window[slot]);
		window[slot] = malloc(static_cast<size_t>(i * 37) % 4000 + 1);
	}
	for (int i = 0; i < 8; i++)
		free(window[i]);
}

extern "C" NOINLINE void new_delete_churn(void)
{
	for (int i = 0; i < 1000; i++) {
		delete new Widget;
		delete[] new int[i % 100 + 1];
	}
}

/* Above --big 1M: the alert names the entry point that was called. */
extern "C" NOINLINE void big_malloc(void)
{
	keep(malloc(3 << 20));
}

extern "C" NOINLINE void big_new(void)
{
	keep(new Big);
}

int main()
{
	static_assert(sizeof(Widget) == 40, "Widget is 40 bytes");
	static_assert(sizeof(Aligned) == 192, "Aligned is 192 bytes");
	leak_malloc();
	leak_calloc();
	new_leak_scalar();
	new_leak_array();
	new_leak_aligned();
	churn();
	new_delete_churn();
	big_malloc();
	big_new();
	return 0;
}
