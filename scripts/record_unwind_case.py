# gdb's half of scripts/record_unwind_case.sh (which says what it does).
import os
import subprocess
import time

import gdb

MAX_FRAMES = 127  # MAX_STACK_DEPTH
# gdb's architecture: the case's "arch" and the registers of its "regs" line.
ARCHES = {
    "i386:x86-64": ("x86_64", ("rip", "rsp", "rbp")),
    "aarch64": ("arm64", ("pc", "sp", "x29", "x30")),
}


def stop_at(locations, ignore):
    for i, loc in enumerate(locations):
        bp = gdb.Breakpoint(loc, internal=True)
        if i == len(locations) - 1:
            bp.ignore_count = ignore
        gdb.execute("run" if i == 0 else "continue")
        bp.delete()


def where(pc):
    text = gdb.execute("info symbol %#x" % pc, to_string=True).strip()
    return text.replace(" in section .text", "").replace("No symbol matches", "??")


def frames():
    """(pc, name, type) of each frame on the stack, innermost first: gdb's inline
    frames share their caller's, and its tail-call frames (from DWARF call
    sites) have none."""
    out = []
    f = gdb.newest_frame()
    while f is not None:
        if f.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
            out.append((f.pc(), f.name() or "??", f.type()))
        f = f.older()
    return out


def main():
    stop_at(os.environ["STOPS"].split(","), int(os.environ["IGNORE"]))
    f = gdb.newest_frame()
    arch, names = ARCHES[f.architecture().name()]
    regs = [int(f.read_register(r)) & (2**64 - 1) for r in names]
    found = frames()
    until = os.environ["UNTIL"]
    expect = found
    if until:
        names = [name for _, name, _ in found]
        expect = found[: names.index(until) + 1]
    expect = expect[:MAX_FRAMES]
    lines = [
        "# %s: %s\n" % (os.path.basename(os.environ["OUT"]), os.environ["WHY"]),
        "# recorded %s on %s from: %s (stops %s, passing the last %s times)\n"
        % (time.strftime("%Y-%m-%d"), os.uname().release, os.environ["COMMAND"],
           os.environ["STOPS"], os.environ["IGNORE"]),
        "# gdb's backtrace (%d frames, inline and tail-call ones left out):\n" % len(found),
    ]
    lines += ["#   #%d %#x %s\n" % (i, pc, where(pc)) for i, (pc, _, _) in enumerate(found)]
    if until:
        lines.append("# the walk must stop at %s's frame (the frames below end there)\n" % until)
    lines += ["frame %#x %s\n" % (pc, where(pc)) for pc, _, _ in expect]
    pid = gdb.selected_inferior().pid
    with open(os.environ["OUT"], "w") as out:
        run = subprocess.run([os.environ["RECORDER"], arch, str(pid)] + ["%#x" % r for r in regs],
                             input="".join(lines), stdout=out, text=True)
    if run.returncode:
        os.unlink(os.environ["OUT"])
    gdb.execute("kill")


main()
