#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The machine's architecture by the kernel's name, as the Makefile's ARCHES
# spell them (x86 is x86-64): the one place uname -m's names are mapped, for
# the Makefile, scripts/deps.sh, scripts/vmtest.sh and the static checks.
# Another machine's name is printed as uname gives it: ARCHES refuses it.
case $(uname -m) in
x86_64) echo x86 ;;
aarch64) echo arm64 ;;
*) uname -m ;;
esac
