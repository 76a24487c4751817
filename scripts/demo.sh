#!/bin/sh
# Trace the bundled leaky program from its first instruction for its 4
# seconds: a report every second (by the third, steady leaks are marked
# "growing"), an alert for each allocation of 1 MiB or more, and the final
# report, with the peak, when it exits.
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: alloctrace loads BPF programs; run 'sudo make demo'" >&2
	exit 1
fi
echo "\$ ./alloctrace -i 1 --big 1M -- build/workloads/leaky 4"
exec ./alloctrace -i 1 --big 1M -- build/workloads/leaky 4
