// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One function per leak class and per kind of root, each with known
 * blocks and bytes. For the leak-check engine's test only, it prints
 * "block ADDR SIZE FUNCTION" for the blocks a tracer would track, then
 * "pid PID" and "ready", and waits for stdin to close. Blocks it does not print stand
 * for those allocated before a tracer attached. With the argument "exit" it
 * starts no thread and returns from main at once, for a check at exit;
 * with "wait" it reads one byte before it allocates, so that a tracer
 * attached by pid sees every block.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "holdreg.h"

static void **reachable_list;
static char *interior;
static void **holder;
static __thread void *tls_ptr;
static int never[2]; /* a pipe nobody writes: threads block on it */

static void *tracked(size_t size, const char *fn)
{
	void *p = malloc(size);

	memset(p, 0, size);
	printf("block %p %zu %s\n", p, size, fn);
	return p;
}

static void keep_reachable(void)
{
	reachable_list = tracked(100, __func__);
	reachable_list[0] = tracked(100, __func__);
	((void **)reachable_list[0])[0] = tracked(100, __func__);
}

static void leak_definite(void)
{
	void *p = tracked(64, __func__);

	p = tracked(64, __func__);
	p = NULL;
}

static void leak_list(void)
{
	void **head = NULL, **n;
	int i;

	for (i = 0; i < 4; i++) {
		n = tracked(48, __func__);
		n[0] = head;
		head = n;
	}
	head = n = NULL;
}

static void leak_cycle(void)
{
	void **a = tracked(40, __func__), **b = tracked(40, __func__), **c = tracked(40, __func__);

	a[0] = b;
	b[0] = c;
	c[0] = a;
	a = b = c = NULL;
}

static void leak_interior(void)
{
	interior = (char *)tracked(200, __func__) + 40;
}

static void hold_untracked(void)
{
	holder = malloc(24);
	holder[0] = tracked(24, __func__);
}

static void hold_tls(void)
{
	tls_ptr = tracked(56, __func__);
}

/* A freed holder keeps a stale pointer past the tcache's two words. */
static void stale_tcache(void)
{
	void **h = malloc(64);

	h[2] = tracked(120, __func__);
	free(h);
	h = NULL;
}

/* The eighth free of a size goes to a fastbin, the tcache's bin being full. */
static void stale_fastbin(void)
{
	void **h[8];
	int i;

	for (i = 0; i < 8; i++)
		h[i] = malloc(40);
	h[7][2] = tracked(136, __func__);
	for (i = 0; i < 8; i++)
		free(h[i]);
	memset(h, 0, sizeof(h));
}

/*
 * valgrind's default heuristics: blocks held only by a pointer into them,
 * at the place each shape has it, reachable. The shapes are built by
 * hand, as the C++ runtime lays them out.
 */
static char *string_chars;
static char *length_data;
static char *array_elements;
static void **second_base;
static char *header_data;

/* libstdc++'s reference-counted string: length, capacity, refcount, chars and a null. */
static void hold_stdstring(void)
{
	uint64_t *rep = tracked(24 + 15 + 1, __func__);

	rep[0] = 5;
	rep[1] = 15;
	string_chars = memcpy((char *)(rep + 3), "hello", 6);
}

/* The length of the rest before the data (sqlite's allocations). */
static void hold_length64(void)
{
	uint64_t *b = tracked(8 + 48, __func__);

	b[0] = 48;
	length_data = (char *)(b + 1);
}

/* new T[3] of a 24-byte T with a destructor: the count, then the elements. */
static void hold_newarray(void)
{
	uint64_t *b = tracked(8 + 3 * 24, __func__);

	b[0] = 3;
	array_elements = (char *)(b + 1);
}

static void method_a(void)
{
}

static void method_b(void)
{
}

static void (*const vtable_first[])(void) = {method_a, method_b};
static void (*const vtable_second[])(void) = {method_b, method_a};

/* An object of two bases, each with a vtable: held as its second base. */
static void hold_second_base(void)
{
	const void **obj = tracked(32, __func__);

	obj[0] = vtable_first;
	obj[2] = vtable_second;
	second_base = (void **)(obj + 2);
}

/* A header of none of those shapes: a pointer past it is only possibly lost's. */
static void leak_header(void)
{
	header_data = (char *)tracked(40, __func__) + 8;
}

static void *hold_thread_stack(void *arg)
{
	void *volatile p = tracked(88, __func__);
	char c;

	fflush(stdout);
	while (read(never[0], &c, 1) != 0)
		;
	return p;
}

int holding; /* hold_register's count, unused here */

void *alloc_for_register(long fd)
{
	return tracked(72, "hold_register");
}

int main(int argc, char **argv)
{
	pthread_t t1, t2;
	char c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(never))
		return 1;
	if (argc > 1 && !strcmp(argv[1], "wait") && read(0, &c, 1) != 1)
		return 1;
	keep_reachable();
	leak_definite();
	leak_list();
	leak_cycle();
	leak_interior();
	hold_untracked();
	hold_tls();
	hold_stdstring();
	hold_length64();
	hold_newarray();
	hold_second_base();
	leak_header();
	/* Last: their frees and memset overwrite the dead frames of the calls before. */
	stale_tcache();
	stale_fastbin();
	if (argc > 1 && !strcmp(argv[1], "exit"))
		return 0;
	pthread_create(&t1, NULL, hold_thread_stack, NULL);
	pthread_create(&t2, NULL, hold_register, (void *)(long)never[0]);
	/* Both threads have printed their block before "ready". */
	usleep(200000);
	printf("pid %d\nready\n", getpid());
	while (read(0, &c, 1) > 0)
		;
	_exit(0);
}
