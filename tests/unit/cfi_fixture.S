/*
 * Functions with known call frame information for test_cfi: every rule the
 * unwinder keeps, one it cannot use, a gap between functions, and a
 * function on a later page. Built into a shared object with .eh_frame_hdr.
 */
	.text
	.globl	sp_frame
	.type	sp_frame, @function
sp_frame:				/* 0x1000 */
	.cfi_startproc
	push	%rbx			/* 1 byte */
	.cfi_def_cfa_offset 16
	sub	$0x10000, %rsp		/* 7 bytes: a frame past 32 KiB */
	.cfi_def_cfa_offset 65552
	add	$0x10000, %rsp
	.cfi_def_cfa_offset 16
	pop	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	sp_frame, .-sp_frame

	.p2align 4
	.globl	fp_frame
	.type	fp_frame, @function
fp_frame:				/* 0x1020 */
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	nop
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	fp_frame, .-fp_frame

	/* 0x102c-0x1030: padding no FDE covers */
	.p2align 4
	.globl	odd_cfa
	.type	odd_cfa, @function
odd_cfa:				/* 0x1030 */
	.cfi_startproc
	nop
	.cfi_def_cfa_offset 12		/* not a multiple of 8: no rule */
	nop
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	odd_cfa, .-odd_cfa

	.p2align 12
	.globl	outermost
	.type	outermost, @function
outermost:				/* 0x2000 */
	.cfi_startproc
	.cfi_undefined %rip
	nop
	hlt
	.cfi_endproc
	.size	outermost, .-outermost
	.section .note.GNU-stack,"",@progbits
