// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * arm64's unwind rows (unwind/cfi_arch.h). bl leaves the return address
 * in x30, which a prologue saves where its rules say, usually as a frame
 * record with x29 (stp x29, x30); until then the walker takes it from the
 * link register. DW_CFA_AARCH64_negate_ra_state (DW_CFA_GNU_window_save,
 * 0x2d) marks where x30 is signed (pac-ret): the rows do not say it, the
 * walker strips every return address (bpf/arch_arm64.bpf.h). The PLT
 * gets no rows: binutils gives aarch64's .plt no CFI, and it needs no
 * kind of its own as x86-64's does, its entries touch neither sp nor x30
 * (only PLT0, reached while lazy binding resolves, pushes x16 and x30).
 */
#include <elf.h>
#include "unwind/cfi_arch.h"

const struct cfi_arch cfi_arm64 = {
    .sp = 31, /* sp */
    .fp = 29, /* x29 */
    .ra = 30, /* x30, the link register */
    /* x19-x29 */
    .callee_saved = ((1ULL << 30) - 1) & ~((1ULL << 19) - 1),
};
