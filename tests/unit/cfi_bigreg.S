/*
 * A function whose call frame information names register 100000, which
 * no x86-64 code has: libdw would size its register array by it. test_cfi
 * checks that the object is refused before libdw runs the program.
 */
	.text
	.globl	big_register
	.type	big_register, @function
big_register:
	.cfi_startproc
	push	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset 100000, -16
	pop	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	big_register, .-big_register
	.section .note.GNU-stack,"",@progbits
