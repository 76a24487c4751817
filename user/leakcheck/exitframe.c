// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * exit()'s entry by libdwfl's unwinder, which recovers every register
 * the CFI saves (the rows of unwind/ keep only the frame pointer and
 * the return address, and exit()'s caller may hold a pointer in rbx);
 * the callee-saved registers a frame's rules say nothing of are carried
 * from the frame before here, by the psABI's list (unwind/cfi_arch.h),
 * as libdwfl 0.188 does not for x86-64's rbx. The Dwfl holds only the objects the walk meets, each
 * reported when a walk first stops at a frame in it (from _exit to exit()'s caller, libc alone; a
 * static program, itself), its CFA programs vetted first, as every reader of a target's CFI here
 * does (unwind/cfi.h). exit() is known by the object's own symbols (.dynsym is enough): no debug
 * file is looked for. Registers and memory are the snapshot's.
 */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "leakcheck/exitframe.h"
#include "proc/mapfile.h"
#include "symbolize/objfile.h"
#include "unwind/cfi.h"
#include "unwind/cfi_arch.h"

/* Frames walked at most looking for exit(), and objects reported at most. */
#define MAX_FRAMES  64
#define MAX_OBJECTS 8
/* The thread's number to libdwfl: its walks are asked for by it, never listed. */
#define WALKED_TID 1

struct exit_walk {
	pid_t pid;
	const struct proc_maps *maps;
	const struct leak_memory *mem;
	Dwfl *dwfl;
	bool attached;
	unsigned int objects;
	const struct cfi_arch *arch; /* the first object's machine */
	/* The walk under way: its thread, its frames, what it found. */
	const struct arch_regs *regs;
	struct exit_entry *out;
	unsigned int frames;
	bool in_exit;	     /* the last frame was exit()'s: this one is its caller */
	uint64_t stopped_at; /* a frame in no object reported yet, or 0 */
	/* The last frame: its object and the address its rules are looked up at */
	Dwfl_Module *last_mod;
	Dwarf_Addr last_pc;
	/* and its callee-saved registers, those known a bit each */
	uint64_t saved[ARCH_DWARF_REGS];
	uint64_t known;
};

static int no_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		  char **file_name, Elf **elfp)
{
	return -1;
}

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	return -1;
}

/* Every object is reported with its descriptor: none is looked for. */
static const Dwfl_Callbacks dwfl_callbacks = {
    .find_elf = no_elf,
    .find_debuginfo = no_debuginfo,
};

static pid_t no_next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	*thread_arg = arg;
	return tid == WALKED_TID;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct exit_walk *w = arg;

	return !w->mem->read(w->mem->ctx, addr, result, sizeof(*result));
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct exit_walk *w = arg;
	uint64_t regs[ARCH_DWARF_REGS];
	unsigned int n = arch_regs_dwarf(w->regs, regs);

	if (!dwfl_thread_state_registers(thread, 0, n, regs))
		return false;
	dwfl_thread_state_register_pc(thread, arch_regs_pc(w->regs));
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = no_next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

/* Only CFA programs this project understands are run (cfi_check.c). */
static int vet(Elf *elf)
{
	int eh = cfi_for_each_fde(elf, ".eh_frame", NULL, NULL);
	int debug = cfi_for_each_fde(elf, ".debug_frame", NULL, NULL);

	return (eh == -ENOENT ? 0 : eh) ?: (debug == -ENOENT ? 0 : debug);
}

/* The walk's architecture, the first object's; every other must be of it. */
static int machine(struct exit_walk *w, Elf *elf)
{
	const struct cfi_arch *arch;
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	arch = cfi_arch_of(eh.e_machine);
	if (!arch || (w->arch && arch != w->arch))
		return -ENOTSUP;
	w->arch = arch;
	return 0;
}

/* The object mapped at @pc, in the Dwfl at its bias, reported now if not yet. 0 or -errno. */
static int report_object(struct exit_walk *w, uint64_t pc)
{
	const struct mapping *m = proc_maps__find(w->maps, pc);
	Dwfl_Module *mod = NULL;
	uint64_t bias = 0;
	Elf *elf;
	int fd, err;

	if (dwfl_addrmodule(w->dwfl, pc))
		return 0;
	if (!m || !m->path || !m->exec || w->objects >= MAX_OBJECTS)
		return -ENOENT;
	fd = mapping__open(w->pid, m);
	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	err = elf ? elf__load_bias(elf, m, &bias) ?: vet(elf) ?: machine(w, elf) : -ENOEXEC;
	elf_end(elf);
	if (!err) {
		dwfl_report_begin_add(w->dwfl);
		/* The descriptor is the Dwfl's once the module is. */
		mod = dwfl_report_elf(w->dwfl, m->path, m->path, fd, bias, true);
		dwfl_report_end(w->dwfl, NULL, NULL);
		err = mod ? 0 : -ENOEXEC;
	}
	if (!mod)
		close(fd);
	w->objects += !err;
	return err;
}

static bool is_exit(Dwfl_Module *mod, Dwarf_Addr pc)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);

	return name && !strcmp(name, "exit") && off < sym.st_size;
}

/* The last frame's rules (free()), or NULL. */
static Dwarf_Frame *last_rules(const struct exit_walk *w)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(w->last_mod, &bias);
	Dwarf_Frame *f;

	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(w->last_mod, &bias);
	return cfi && !dwarf_cfi_addrframe(cfi, w->last_pc - bias, &f) ? f : NULL;
}

/* Do @f's rules leave register @r as it was: same value, or nothing said? */
static bool leaves(Dwarf_Frame *f, int r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	return f && !dwarf_frame_register(f, r, mem, &ops, &nops) && !nops;
}

/*
 * The callee-saved registers of @frame: as libdwfl recovered them, or as
 * the frame before had them where its rules leave them alone.
 */
static void track_saved(struct exit_walk *w, Dwfl_Frame *frame)
{
	Dwarf_Frame *rules = w->frames ? last_rules(w) : NULL;
	uint64_t dwarf[ARCH_DWARF_REGS], known = 0, bit;
	unsigned int n = arch_regs_dwarf(w->regs, dwarf);
	Dwarf_Word v;

	for (unsigned int r = 0; r < ARCH_DWARF_REGS; r++) {
		bit = 1ULL << r;
		if (!(w->arch->callee_saved & bit))
			continue;
		if (!w->frames && r < n) {
			w->saved[r] = dwarf[r];
			known |= bit;
		} else if (!dwfl_frame_reg(frame, r, &v)) {
			w->saved[r] = v;
			known |= bit;
		} else if ((w->known & bit) && leaves(rules, (int)r)) {
			known |= bit;
		}
	}
	free(rules);
	w->known = known;
}

/* exit()'s caller: its callee-saved registers as it called, its stack pointer. */
static int caller_frame(struct exit_walk *w, Dwfl_Frame *frame)
{
	struct exit_entry *e = w->out;
	Dwarf_Word v;

	track_saved(w, frame);
	for (unsigned int r = 0; r < ARCH_DWARF_REGS; r++)
		if (w->known & 1ULL << r)
			e->regs[e->nr++] = w->saved[r];
	if (!dwfl_frame_reg(frame, w->arch->sp, &v))
		e->sp = cfi_arch_entry_sp(w->arch, v);
	return DWARF_CB_ABORT;
}

static int on_frame(Dwfl_Frame *frame, void *arg)
{
	struct exit_walk *w = arg;
	Dwfl_Module *mod;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (w->in_exit)
		return caller_frame(w, frame);
	/* A return address may be the first byte of the next function: look up the call. */
	if (!activation)
		pc--;
	mod = dwfl_addrmodule(w->dwfl, pc);
	if (!mod) {
		w->stopped_at = pc;
		return DWARF_CB_ABORT;
	}
	track_saved(w, frame);
	w->last_mod = mod;
	w->last_pc = pc;
	w->in_exit = is_exit(mod, pc);
	return ++w->frames < MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

struct exit_walk *exit_walk__new(pid_t pid, const struct proc_maps *maps,
				 const struct leak_memory *mem)
{
	struct exit_walk *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	*w = (struct exit_walk){.pid = pid, .maps = maps, .mem = mem};
	w->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!w->dwfl) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	return w;
}

void exit_walk__free(struct exit_walk *w)
{
	if (!w)
		return;
	dwfl_end(w->dwfl);
	free(w);
}

/* libdwfl learns the machine from an object: the state is attached after the first. */
static bool attach(struct exit_walk *w)
{
	if (!w->attached && w->objects)
		w->attached = dwfl_attach_state(w->dwfl, NULL, w->pid, &thread_callbacks, w);
	return w->attached;
}

int exit_walk__find(struct exit_walk *w, const struct arch_regs *r, struct exit_entry *out)
{
	uint64_t next = arch_regs_pc(r);

	w->regs = r;
	w->out = out;
	/* Walked again from the start each time it stops in an object not reported yet. */
	while (!report_object(w, next) && attach(w)) {
		memset(out, 0, sizeof(*out));
		w->frames = 0;
		w->in_exit = false;
		w->stopped_at = 0;
		dwfl_getthread_frames(w->dwfl, WALKED_TID, on_frame, w);
		if (out->sp)
			return 0;
		next = w->stopped_at;
	}
	memset(out, 0, sizeof(*out));
	return -ENOENT;
}
