// Runs a scenario that could crash or hang in a child process: a crash fails the test, not
// the run, and an alarm turns a hang into a failure.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

namespace zehal::test {

// Runs `scenario` in a child process that must exit with 0 (no test failure) within 60 s.
template <typename Scenario>
void in_child(Scenario scenario) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            alarm(60);
            scenario();
            std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
        },
        ::testing::ExitedWithCode(0), "");
}

}  // namespace zehal::test
