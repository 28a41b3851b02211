/*
 * A small unit-test framework: TEST(name) { ... CHECK(...); } registers a test; the runner in
 * test_main.c forks one process per test (a crash fails only that test) and prints
 * "N passed, N failed". `build/unit-tests PATTERN` runs the tests whose names contain PATTERN.
 */
#ifndef CUTEGEN_TEST_H
#define CUTEGEN_TEST_H

#include <stdio.h>
#include <string.h>

void test_register(const char *name, const char *file, void (*fn)(void));
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A fresh empty directory for this test (removed afterwards); static string. */
const char *test_tmpdir(void);
/* Writes text to a file under test_tmpdir(); returns its path (static until the next call). */
const char *test_write_file(const char *name, const char *text);

#define TEST(name)                                                             \
	static void test_##name(void);                                         \
	__attribute__((constructor)) static void test_reg_##name(void)         \
	{                                                                      \
		test_register(#name, __FILE__, test_##name);                   \
	}                                                                      \
	static void test_##name(void)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);     \
			return;                                                \
		}                                                              \
	} while (0)

#define CHECK_INT(a, b)                                                        \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		if (a_ != b_) {                                                \
			test_fail(__FILE__, __LINE__, "%s == %lld, expected %lld", \
				  #a, a_, b_);                                 \
			return;                                                \
		}                                                              \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		if (!a_ || !b_ || strcmp(a_, b_)) {                            \
			test_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"", \
				  #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			return;                                                \
		}                                                              \
	} while (0)

/* hay contains needle */
#define CHECK_HAS(hay, needle)                                                 \
	do {                                                                   \
		const char *h_ = (hay), *n_ = (needle);                        \
		if (!h_ || !strstr(h_, n_)) {                                  \
			test_fail(__FILE__, __LINE__, "%s does not contain \"%s\": \"%.400s\"", \
				  #hay, n_, h_ ? h_ : "(null)");               \
			return;                                                \
		}                                                              \
	} while (0)

#endif
