// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// arm64 code whose call frame information test_cfi knows line by line:
// what gcc and glibc give aarch64 functions. Assembled by
// aarch64-linux-gnu-as (the Makefile); each instruction is 4 bytes, the
// text starts at 0x1000 (the rows count from there).
	.text
	.p2align 4

// A leaf: the return address stays in x30, the CFA is sp.
	.globl	leaf
	.type	leaf, %function
leaf:
	.cfi_startproc
	nop
	ret
	.cfi_endproc

// -O2 with pac-ret: x30 signed, then saved with x29 as a frame record at
// the bottom of a 48-byte frame; x29 made the CFA's base, and back.
	.p2align 4
	.globl	framed
	.type	framed, %function
framed:
	.cfi_startproc
	hint	#25			// paciasp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, #-48]!
	.cfi_def_cfa_offset 48
	.cfi_offset 29, -48
	.cfi_offset 30, -40
	mov	x29, sp
	.cfi_def_cfa_register 29
	bl	leaf
	ldp	x29, x30, [sp], #48
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa 31, 0
	hint	#29			// autiasp
	.cfi_negate_ra_state
	ret
	.cfi_endproc

// -fomit-frame-pointer: only x30 saved, with another register, no frame
// record; then a frame record too far below the CFA for ra_off's 5 bits.
	.p2align 4
	.globl	lone_lr
	.type	lone_lr, %function
lone_lr:
	.cfi_startproc
	stp	x19, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 19, -16
	.cfi_offset 30, -8
	sub	sp, sp, #512
	.cfi_def_cfa_offset 528
	stp	x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 544
	.cfi_offset 29, -544
	.cfi_offset 30, -536
	bl	leaf
	ldp	x29, x30, [sp], #16
	add	sp, sp, #512
	ldp	x19, x30, [sp], #16
	.cfi_restore 19
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc

// The outermost frame: glibc's _start says the return address is undefined.
	.p2align 4
	.globl	outermost
	.type	outermost, %function
outermost:
	.cfi_startproc
	.cfi_undefined x30
	mov	x29, #0
	bl	framed
	.cfi_endproc

// A sigreturn trampoline, as the vDSO's __kernel_rt_sigreturn.
	.p2align 4
	.globl	sigreturn
	.type	sigreturn, %function
	.cfi_startproc
	.cfi_signal_frame
	.cfi_def_cfa x29, 0
	.cfi_offset x29, 0 * 8
	.cfi_offset x30, 1 * 8
	nop
sigreturn:
	mov	x8, #139
	svc	#0
	.cfi_endproc

// GCC's -fomit-frame-pointer layout: x30 saved at the bottom of a 4 KiB
// frame, 4104 bytes below the CFA but 8 above sp (UNWIND_RA_SP).
	.p2align 4
	.globl	big_frame
	.type	big_frame, %function
big_frame:
	.cfi_startproc
	sub	sp, sp, #4096
	.cfi_def_cfa_offset 4096
	stp	x19, x30, [sp, #-16]!
	.cfi_def_cfa_offset 4112
	.cfi_offset 19, -4112
	.cfi_offset 30, -4104
	bl	leaf
	ldp	x19, x30, [sp], #16
	.cfi_restore 19
	.cfi_restore 30
	.cfi_def_cfa_offset 4096
	add	sp, sp, #4096
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
