// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* C++'s new through libstdc++'s operator new, from a member of a template. */
#include <cstdio>
#include <vector>

template <typename T> struct pile {
	std::vector<T *> items;
	__attribute__((noinline)) void add(T v) { items.push_back(new T(v)); }
};

int main(int argc, char **argv)
{
	pile<long> p;

	for (long i = 0; i < argc + 2; i++)
		p.add(i);
	std::printf("%zu\n", p.items.size());
	return 0;
}
