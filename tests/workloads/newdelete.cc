// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * newdelete: C++ operator new / new[] leaks.
 *
 * libstdc++ has no frame pointers, so the frame walk from malloc's return
 * can skip the function that called operator new. Each named leak function
 * therefore calls a helper that does the new, and the tests look for the
 * named function anywhere in the stack:
 *
 *   new_leak_scalar   11 x new Widget (40 bytes)    =  440 bytes
 *   new_leak_array     3 x new int[250] (1000 bytes) = 3000 bytes
 *   new_delete_churn   1000 new/delete pairs          =    0 bytes
 *
 * int and Widget are trivially destructible: new[] adds no array cookie,
 * so the sizes asked of malloc are exactly the ones above. The named
 * functions have C linkage so their names do not depend on demangling.
 */
#include <cstdlib>

#define NOINLINE __attribute__((noinline))

struct Widget {
	char data[40];
};

static void *kept[64];
static unsigned int nkept;

static void keep(void *p)
{
	if (!p || nkept >= sizeof(kept) / sizeof(kept[0]))
		abort();
	kept[nkept++] = p;
}

NOINLINE static Widget *make_widget()
{
	return new Widget();
}

NOINLINE static int *make_ints(unsigned int n)
{
	return new int[n];
}

extern "C" NOINLINE void new_leak_scalar(void)
{
	for (int i = 0; i < 11; i++)
		keep(make_widget());
}

extern "C" NOINLINE void new_leak_array(void)
{
	for (int i = 0; i < 3; i++)
		keep(make_ints(250));
}

extern "C" NOINLINE void new_delete_churn(void)
{
	for (int i = 0; i < 1000; i++) {
		delete make_widget();
		delete[] make_ints(static_cast<unsigned int>(i % 100) + 1);
	}
}

int main()
{
	static_assert(sizeof(Widget) == 40, "Widget is 40 bytes");
	new_leak_scalar();
	new_leak_array();
	new_delete_churn();
	return 0;
}
