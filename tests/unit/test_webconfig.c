// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --web-config's parser: the exporter toolkit's subset taken, the rest refused. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "lib/webconfig.h"

#define UNUSED __attribute__((unused))
#define HASH_A "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"
#define HASH_B "$2b$12$hLqFl9jSjoAAy95Z/zw8Ye8wkdMBM8c5Bn1ptYqP/AXyV0.oy0S8m"

static void test_subset(void **state UNUSED)
{
	struct web_config *wc;

	assert_int_equal(web_config__parse("/etc/at/web.yml",
					   "---\n# TLS\ntls_server_config:\n"
					   "  cert_file: server.crt  # relative\n"
					   "  key_file: '/keys/server.key'\n\n"
					   "basic_auth_users:\n"
					   "    alice: " HASH_A "\r\n"
					   "    \"bob\": \"" HASH_B "\"\n",
					   &wc),
			 0);
	assert_string_equal(wc->cert_file, "/etc/at/server.crt");
	assert_string_equal(wc->key_file, "/keys/server.key");
	assert_int_equal(wc->nr_users, 2);
	assert_string_equal(wc->users[0].name, "alice");
	assert_string_equal(wc->users[0].hash, HASH_A);
	assert_string_equal(wc->users[1].name, "bob");
	assert_string_equal(wc->users[1].hash, HASH_B);
	assert_null(wc->cert_pem);
	web_config__free(wc);

	/* Empty: plain HTTP, no users, as the toolkit's. */
	assert_int_equal(web_config__parse("w.yml", "# nothing\n", &wc), 0);
	assert_null(wc->cert_file);
	assert_int_equal(wc->nr_users, 0);
	web_config__free(wc);
}

static void test_refused(void **state UNUSED)
{
	static const char *const bad[] = {
	    "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n",
	    "tls_server_config:\n  cert_file: a\n",
	    "tls_server_config:\n  cert_file: a\n  cert_file: b\n  key_file: c\n",
	    "tls_server_config:\n  cert_file:\n  key_file: c\n",
	    "tls_server_config: {cert_file: a}\n",
	    "tls_server_config:\n  cert_file: a\n    key_file: b\n",
	    "tls_server_config:\n\tcert_file: a\n",
	    "http_server_config:\n  http2: false\n",
	    "rate_limit:\n  burst: 20\n",
	    "basic_auth_users:\n  alice: hunter2\n",
	    "basic_auth_users:\n  alice: " HASH_A "x\n",
	    "basic_auth_users:\n  alice: $1$" HASH_A "\n",
	    "basic_auth_users:\n  alice: " HASH_A "\n  alice: " HASH_B "\n",
	    "basic_auth_users:\n  alice: \"" HASH_A "\n",
	    "basic_auth_users:\n  alice: \"\\" HASH_A "\"\n",
	    "basic_auth_users:\nbasic_auth_users:\n",
	    "  alice: " HASH_A "\n",
	    "users:\n",
	    "just text\n",
	};
	struct web_config *wc;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wc = (void *)1;
		assert_int_equal(web_config__parse("w.yml", bad[i], &wc), -EINVAL);
		assert_null(wc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_subset),
	    cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
