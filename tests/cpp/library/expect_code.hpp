// EXPECT_ZE_ERROR(statement, code): the statement throws zehal::Error carrying `code`.
#pragma once

#include <gtest/gtest.h>

#include <zehal/error.hpp>

#define EXPECT_ZE_ERROR(statement, expected)                                \
    do {                                                                    \
        try {                                                               \
            statement;                                                      \
            ADD_FAILURE() << #statement " did not throw";                   \
        } catch (const zehal::Error& e) {                                   \
            EXPECT_EQ(e.code(), (expected)) << #statement ": " << e.what(); \
        }                                                                   \
    } while (0)
