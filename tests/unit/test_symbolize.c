// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "symbolize/demangle.h"
#include "symbolize/objcache.h"
#include "symbolize/symbolize.h"

#define MAX 8

/* Not inlined, and no clone such as "plain_caller.constprop.0" renames these. */
#ifdef __clang__
#define OPAQUE __attribute__((noinline))
#else
#define OPAQUE __attribute__((noipa))
#endif

/* Where it was called from; @at is the __LINE__ of the call. */
static OPAQUE uint64_t return_address(unsigned int *line, unsigned int at)
{
	*line = at;
	return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

static OPAQUE uint64_t plain_caller(unsigned int *line)
{
	uint64_t ret = return_address(line, __LINE__);

	/* Using the result after the call keeps it from being a tail call. */
	asm volatile("" : "+r"(ret));
	return ret;
}

static inline __attribute__((always_inline)) uint64_t
inlined_callee(unsigned int *inner, unsigned int *outer, unsigned int at)
{
	uint64_t ret = return_address(inner, __LINE__);

	*outer = at;
	asm volatile("" : "+r"(ret));
	return ret;
}

static OPAQUE uint64_t inlining_caller(unsigned int *inner, unsigned int *outer)
{
	uint64_t ret = inlined_callee(inner, outer, __LINE__);

	asm volatile("" : "+r"(ret));
	return ret;
}

static bool ends_with(const char *str, const char *suffix)
{
	size_t len, n = strlen(suffix);

	if (!str)
		return false;
	len = strlen(str);
	return len >= n && !strcmp(str + len - n, suffix);
}

/* addr - start + pgoff, read straight from /proc/self/maps. */
static uint64_t maps_offset(uint64_t addr)
{
	uint64_t start, end, pgoff, off = UINT64_MAX;
	char line[1024];
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64, &start, &end, &pgoff) ==
			3 &&
		    addr >= start && addr < end)
			off = addr - start + pgoff;
	fclose(f);
	return off;
}

static uint64_t libc_symbol(const char *name)
{
	void *libc, *sym;

	/* Not &malloc: under valgrind that is the preloaded replacement. */
	libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(libc);
	sym = dlsym(libc, name);
	assert_non_null(sym);
	dlclose(libc);
	return (uint64_t)(uintptr_t)sym;
}

static int setup(void **state)
{
	*state = symbolizer__new(getpid());
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	symbolizer__free(*state);
	return 0;
}

static void test_own_function(void **state)
{
	struct frame_info f[MAX];
	char exe[PATH_MAX];
	unsigned int line;
	uint64_t addr;
	ssize_t len;

	addr = plain_caller(&line);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = '\0';

	assert_int_equal(symbolizer__resolve(*state, addr, f, MAX), 1);
	assert_int_equal(f[0].addr, addr);
	assert_string_equal(f[0].module, exe);
	assert_int_equal(f[0].offset, maps_offset(addr));
	assert_string_equal(f[0].function, "plain_caller");
	assert_int_equal(f[0].function_offset, addr - (uintptr_t)plain_caller);
	assert_true(ends_with(f[0].file, "/test_symbolize.c"));
	assert_int_equal(f[0].line, line);
	assert_false(f[0].inlined);
}

static void test_inlined(void **state)
{
	unsigned int inner, outer;
	struct frame_info f[MAX];
	uint64_t addr;

	addr = inlining_caller(&inner, &outer);
	assert_int_equal(symbolizer__resolve(*state, addr, f, MAX), 2);

	assert_string_equal(f[0].function, "inlined_callee");
	assert_true(f[0].inlined);
	assert_int_equal(f[0].line, inner);
	assert_true(ends_with(f[0].file, "/test_symbolize.c"));
	assert_int_equal(f[0].function_offset, 0);

	assert_string_equal(f[1].function, "inlining_caller");
	assert_false(f[1].inlined);
	assert_int_equal(f[1].line, outer);
	assert_true(ends_with(f[1].file, "/test_symbolize.c"));
	assert_int_equal(f[1].function_offset, addr - (uintptr_t)inlining_caller);

	assert_int_equal(f[0].addr, addr);
	assert_int_equal(f[1].addr, addr);
	assert_ptr_equal(f[0].module, f[1].module);
	assert_int_equal(f[0].offset, maps_offset(addr));
	assert_int_equal(f[1].offset, f[0].offset);

	/* Too little room keeps the innermost frames. */
	assert_int_equal(symbolizer__resolve(*state, addr, f, 1), 1);
	assert_string_equal(f[0].function, "inlined_callee");
	assert_int_equal(symbolizer__resolve(*state, addr, f, 0), 0);
}

static void assert_libc_malloc(const struct frame_info *f, int nr, uint64_t addr)
{
	const struct frame_info *outer = &f[nr - 1];

	assert_true(nr >= 1);
	assert_true(ends_with(f[0].module, "/libc.so.6"));
	assert_int_equal(f[0].offset, maps_offset(addr));
	assert_false(outer->inlined);
	assert_int_equal(outer->function_offset, 1);
	if (strcmp(outer->function, "malloc"))
		assert_string_equal(outer->function, "__libc_malloc");
}

static void test_libc(void **state)
{
	uint64_t addr = libc_symbol("malloc") + 1;
	struct frame_info f[MAX];

	assert_libc_malloc(f, symbolizer__resolve(*state, addr, f, MAX), addr);
}

/*
 * A versioned function is named by its default version: libc's debug file
 * has dlopen@GLIBC_2.2.5 (arm64: @GLIBC_2.17) and dlopen@@GLIBC_2.34 at
 * one address, both global, and the old one must not win by its place.
 */
static void test_libc_default_version(void **state)
{
	uint64_t addr = libc_symbol("dlopen") + 1;
	struct frame_info f[MAX];
	int nr = symbolizer__resolve(*state, addr, f, MAX);

	assert_true(nr >= 1);
	assert_string_equal(f[nr - 1].function, "dlopen@@GLIBC_2.34");
}

static void test_unmapped(void **state)
{
	struct frame_info f[MAX];

	memset(f, 0xff, sizeof(f));
	assert_int_equal(symbolizer__resolve(*state, 0x10, f, MAX), 1);
	assert_int_equal(f[0].addr, 0x10);
	assert_null(f[0].module);
	assert_int_equal(f[0].offset, 0);
	assert_null(f[0].function);
	assert_int_equal(f[0].function_offset, 0);
	assert_null(f[0].file);
	assert_int_equal(f[0].line, 0);
	assert_false(f[0].inlined);
}

/* The address of the vDSO's clock_gettime, from its dynamic symbols. */
static uint64_t vdso_clock_gettime(uint64_t vdso)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)vdso;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(vdso + eh->e_shoff);
	const Elf64_Sym *sym;
	const char *names;
	int i, j;

	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		sym = (const Elf64_Sym *)(vdso + sh[i].sh_offset);
		names = (const char *)(vdso + sh[sh[i].sh_link].sh_offset);
		for (j = 0; j < (int)(sh[i].sh_size / sizeof(*sym)); j++)
			if (strstr(names + sym[j].st_name, "clock_gettime") && sym[j].st_value)
				return vdso + sym[j].st_value;
	}
	return 0;
}

/* The vDSO is in memory only: named from alloctrace's own copy. */
static void test_vdso(void **state)
{
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR), fn;
	struct frame_info f[MAX];

	if (!vdso)
		skip();
	assert_int_equal(symbolizer__resolve(*state, vdso + 0x10, f, MAX), 1);
	assert_string_equal(f[0].module, "[vdso]");
	assert_int_equal(f[0].offset, 0x10);
	assert_null(f[0].function);
	fn = vdso_clock_gettime(vdso);
	assert_true(fn != 0);
	assert_int_equal(symbolizer__resolve(*state, fn + 1, f, MAX), 1);
	assert_string_equal(f[0].module, "[vdso]");
	assert_int_equal(f[0].offset, fn + 1 - vdso);
	assert_non_null(f[0].function);
	assert_non_null(strstr(f[0].function, "clock_gettime"));
	assert_int_equal(f[0].function_offset, 1);
}

/* Process @pid sleeps: its loader has mapped everything it will. */
static bool sleeping(pid_t pid)
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "State:\tS", 8);
	fclose(f);
	return found;
}

/*
 * The load bias of libc in process @pid, from its code's mapping: not its
 * first page's, which this process also maps whole, where libelf reads it.
 */
static uint64_t libc_bias(pid_t pid)
{
	uint64_t start, pgoff, found = 0;
	char path[64], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%*x r-xp %" SCNx64, &start, &pgoff) == 2 &&
		    strstr(line, "/libc.so.6"))
			found = start - pgoff;
	fclose(f);
	assert_true(found != 0);
	return found;
}

/*
 * Two processes map libc at their own addresses, and share its object:
 * the child's malloc is named exactly as ours.
 */
static void test_shared_between_processes(void **state)
{
	uint64_t addr = libc_symbol("malloc") + 1;
	char *argv[] = {"sleep", "30", NULL};
	struct frame_info here[MAX], there[MAX];
	struct symbolizer *s;
	int nr, i, status;
	pid_t child;

	assert_int_equal(posix_spawn(&child, "/bin/sleep", NULL, NULL, argv, NULL), 0);
	for (i = 0; i < 500 && !sleeping(child); i++)
		usleep(10000);
	s = symbolizer__new(child);
	assert_non_null(s);
	nr = symbolizer__resolve(*state, addr, here, MAX);
	assert_libc_malloc(here, nr, addr);
	assert_int_equal(
	    symbolizer__resolve(s, addr - libc_bias(getpid()) + libc_bias(child), there, MAX), nr);
	for (i = 0; i < nr; i++) {
		assert_string_equal(there[i].function, here[i].function);
		assert_int_equal(there[i].function_offset, here[i].function_offset);
		assert_int_equal(there[i].offset, here[i].offset);
		assert_int_equal(there[i].line, here[i].line);
	}
	symbolizer__free(s);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
}

/*
 * A process that also maps libc whole, read-only, below its image (as
 * libelf does when it reads it) keeps its frames' offsets: the bias is
 * the code's, not that mapping's.
 */
static void test_file_mapped_again(void **state)
{
	uint64_t addr = libc_symbol("malloc") + 1;
	struct frame_info f[MAX];
	struct symbolizer *s;
	struct stat st;
	Dl_info info;
	void *whole;
	int fd;

	assert_true(dladdr((void *)(uintptr_t)addr, &info) && info.dli_fname);
	fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	/* Top-down placement puts it below the libraries mapped at start. */
	whole = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(whole != MAP_FAILED);
	assert_true((uintptr_t)whole < libc_bias(getpid()));
	s = symbolizer__new(getpid());
	assert_non_null(s);
	assert_libc_malloc(f, symbolizer__resolve(s, addr, f, MAX), addr);
	symbolizer__free(s);
	munmap(whole, st.st_size);
	close(fd);
}

/* A private copy of our own executable, to change. */
static int copy_exe(char *path)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	out = mkstemp(path);
	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, n), n);
	close(in);
	close(out);
	return 0;
}

/* An object is shared by the same file only, named by the same path under the same root. */
static void test_objcache_identity(void **state)
{
	char copy[] = "/tmp/alloctrace-objcache.XXXXXX";
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), flags = O_RDONLY | O_CLOEXEC;
	struct object *a, *b, *c, *d, *e, *f;
	struct stat before, after;
	int i;

	assert_true(root >= 0);
	copy_exe(copy);
	a = objcache__get(open(copy, flags), "/t/exe", root);
	b = objcache__get(open(copy, flags), "/t/exe", root);
	c = objcache__get(open(copy, flags), "/u/exe", root);
	d = objcache__get(open(copy, flags), "/t/exe", -1);
	assert_non_null(a);
	assert_ptr_equal(a, b);
	assert_true(c && c != a && d && d != a && d != c);
	/* A file changed in place (its change time moves) is another object. */
	assert_int_equal(stat(copy, &before), 0);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(chmod(copy, i & 1 ? 0600 : 0644), 0);
		assert_int_equal(stat(copy, &after), 0);
		if (after.st_ctim.tv_sec != before.st_ctim.tv_sec ||
		    after.st_ctim.tv_nsec != before.st_ctim.tv_nsec)
			break;
		usleep(1000);
	}
	e = objcache__get(open(copy, flags), "/t/exe", root);
	assert_true(e && e != a);
	/* Held twice, let go once: still open. */
	objcache__put(b);
	assert_true(dwfl_module_getsymtab(a->mod) > 0);
	errno = 0;
	f = objcache__get(open("/dev/null", flags), "/dev/null", root);
	assert_null(f);
	assert_int_equal(errno, ENOEXEC);
	objcache__put(a);
	objcache__put(c);
	objcache__put(d);
	objcache__put(e);
	objcache__put(NULL);
	unlink(copy);
	close(root);
}

static void test_anonymous(void **state)
{
	struct symbolizer *s;
	struct frame_info f[MAX];
	char *page;

	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	s = symbolizer__new(getpid());
	assert_non_null(s);
	assert_int_equal(symbolizer__resolve(s, (uintptr_t)page + 0x10, f, MAX), 1);
	assert_null(f[0].module);
	assert_int_equal(f[0].offset, 0x10);
	assert_null(f[0].function);
	symbolizer__free(s);
	munmap(page, 4096);
}

static void test_cached(void **state)
{
	struct frame_info a[MAX], b[MAX];
	unsigned int line;
	uint64_t addr;
	int nr;

	addr = plain_caller(&line);
	nr = symbolizer__resolve(*state, addr, a, MAX);
	assert_int_equal(symbolizer__resolve(*state, addr, b, MAX), nr);
	assert_memory_equal(a, b, nr * sizeof(a[0]));
	assert_string_equal(b[0].function, "plain_caller");
}

static void test_refresh_dlopen(void **state)
{
	struct frame_info f[MAX], own[MAX], own_again[MAX];
	uint64_t addr, own_addr;
	unsigned int line;
	void *lib;
	int nr;

	own_addr = plain_caller(&line);
	assert_int_equal(symbolizer__resolve(*state, own_addr, own, MAX), 1);
	assert_null(dlopen("libcrypt.so.1", RTLD_NOW | RTLD_NOLOAD));
	lib = dlopen("libcrypt.so.1", RTLD_NOW);
	assert_non_null(lib);
	addr = (uint64_t)(uintptr_t)dlsym(lib, "crypt_checksalt") + 1;

	assert_int_equal(symbolizer__resolve(*state, addr, f, MAX), 1);
	assert_null(f[0].module);
	assert_int_equal(symbolizer__refresh(*state), 0);
	nr = symbolizer__resolve(*state, addr, f, MAX);
	assert_true(nr >= 1);
	/* The file is libcrypt.so.1.1.0 or so behind the symlink. */
	assert_non_null(strstr(f[0].module, "/libcrypt.so.1"));
	assert_int_equal(f[0].offset, maps_offset(addr));
	assert_string_equal(f[nr - 1].function, "crypt_checksalt");

	/* Frames from before the refresh stay valid and unchanged. */
	assert_string_equal(own[0].function, "plain_caller");
	assert_int_equal(symbolizer__resolve(*state, own_addr, own_again, MAX), 1);
	assert_memory_equal(own, own_again, sizeof(own[0]));
	dlclose(lib);
}

static void test_refresh_unchanged(void **state)
{
	struct frame_info a[MAX], b[MAX];
	unsigned int line;
	uint64_t addr;

	addr = plain_caller(&line);
	assert_int_equal(symbolizer__resolve(*state, addr, a, MAX), 1);
	assert_int_equal(symbolizer__refresh(*state), 0);
	assert_int_equal(symbolizer__resolve(*state, addr, b, MAX), 1);
	assert_memory_equal(a, b, sizeof(a[0]));
}

/* After the target exits, what was known of it still symbolizes. */
static void test_target_gone(void **state)
{
	uint64_t addr = libc_symbol("malloc") + 1;
	struct frame_info f[MAX];
	struct symbolizer *s;
	int fds[2], status;
	pid_t child;
	char c;

	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		close(fds[1]);
		_exit(read(fds[0], &c, 1) < 0);
	}
	close(fds[0]);
	s = symbolizer__new(child);
	assert_non_null(s);
	close(fds[1]);
	assert_int_equal(waitpid(child, &status, 0), child);

	assert_int_equal(symbolizer__refresh(s), 0);
	assert_libc_malloc(f, symbolizer__resolve(s, addr, f, MAX), addr);
	symbolizer__free(s);
}

static void test_no_such_process(void **state)
{
	errno = 0;
	assert_null(symbolizer__new(4194305));
	assert_int_equal(errno, ENOENT);
}

/*
 * Every byte of a stretch of libc, each resolved once. Only the padding
 * between functions, which no symbol covers, may lack a name.
 */
static void test_many_addresses(void **state)
{
	uint64_t base = libc_symbol("malloc"), offset = maps_offset(base), i;
	struct frame_info f[MAX];
	struct timespec t0, t1;
	int nr, named = 0;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 1; i <= 10000; i++) {
		nr = symbolizer__resolve(*state, base + i, f, MAX);
		assert_true(nr >= 1 && nr <= MAX);
		assert_true(ends_with(f[0].module, "/libc.so.6"));
		assert_int_equal(f[nr - 1].offset, offset + i);
		named += f[nr - 1].function != NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(named > 9000);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("10000 addresses in %.3f s\n", secs);
}

static void test_demangle(void **state)
{
	static const char *const cases[][2] = {
	    {"_ZN3foo3barEi", "foo::bar(int)"},
	    {"_Z3bazv", "baz()"},
	    {"main", "main"},
	    {"Z", "Z"},
	    {"i", "i"},
	    {"_Znotmangled", "_Znotmangled"},
	    {"", ""},
	};
	size_t i;
	char *out;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		out = demangle(cases[i][0]);
		assert_non_null(out);
		assert_string_equal(out, cases[i][1]);
		assert_ptr_not_equal(out, cases[i][0]);
		free(out);
	}
	errno = 0;
	assert_null(demangle(NULL));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_own_function, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_inlined, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_libc, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_libc_default_version, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unmapped, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_vdso, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_shared_between_processes, setup, teardown),
	    cmocka_unit_test(test_objcache_identity),
	    cmocka_unit_test(test_file_mapped_again),
	    cmocka_unit_test(test_anonymous),
	    cmocka_unit_test_setup_teardown(test_cached, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refresh_dlopen, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refresh_unchanged, setup, teardown),
	    cmocka_unit_test(test_target_gone),
	    cmocka_unit_test(test_no_such_process),
	    cmocka_unit_test_setup_teardown(test_many_addresses, setup, teardown),
	    cmocka_unit_test(test_demangle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
