/* Minimal checks for the C tests: CHECK(cond) records a failure with its line and goes on;
 * CHECK_EQ(a, b) prints both values. main() returns check_report(). */
#ifndef AML_C_CHECK_H
#define AML_C_CHECK_H

#include <stdio.h>

static int check_failures = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            ++check_failures;                                                        \
        }                                                                            \
    } while (0)

#define CHECK_EQ(a, b)                                                                                                 \
    do {                                                                                                               \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                                                \
        if (check_a_ != check_b_) {                                                                                    \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__, #a, #b, check_a_, \
                    check_b_);                                                                                         \
            ++check_failures;                                                                                          \
        }                                                                                                              \
    } while (0)

/* 0 when every check passed, else 1 (with a count on stderr). */
static int check_report(const char* name) {
    if (check_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
