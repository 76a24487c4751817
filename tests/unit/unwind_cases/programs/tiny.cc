// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What clang++ compiles while a case stops it deep in libLLVM. */
#include <map>
#include <string>

int count_words(const std::string &s)
{
	std::map<std::string, int> seen;
	std::string word;

	for (char ch : s) {
		if (ch == ' ') {
			seen[word]++;
			word.clear();
		} else {
			word += ch;
		}
	}
	return (int)seen.size();
}
