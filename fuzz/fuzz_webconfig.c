// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: --web-config's text -> web_config__parse, the parser of
 * what remains hand-written of --listen (libmicrohttpd parses HTTP).
 * Checks what it promises: on success both TLS files or neither, and every
 * user a name and a 60-character hash; on error no result.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/webconfig.h"

/* Its refusals, a line each, to /dev/null: libFuzzer's reports keep fd 2. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *null = fopen("/dev/null", "w");

	stderr = null ? null : stderr;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct web_config *wc = (void *)1;
	char *text = malloc(size + 1);
	int err;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err = web_config__parse("dir/web.yml", text, &wc);
	free(text);
	if (err && (wc || (err != -EINVAL && err != -ENOMEM)))
		abort();
	if (err)
		return 0;
	if (!wc->cert_file != !wc->key_file)
		abort();
	for (size_t i = 0; i < wc->nr_users; i++) {
		if (strlen(wc->users[i].hash) != 60)
			abort();
	}
	web_config__free(wc);
	return 0;
}
