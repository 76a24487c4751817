/*
 * cfi_fixture.S with its call frame information in .debug_frame only, as
 * `gcc -g -fno-asynchronous-unwind-tables` or a hand-written assembler
 * file can leave it: test_cfi reads the same rows from it.
 */
	.cfi_sections .debug_frame
#include "cfi_fixture.S"
