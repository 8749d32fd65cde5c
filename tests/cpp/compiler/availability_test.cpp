// The compiler's availability report, in builds with and without LLVM: available() and an
// empty reason go together, and a build without the compiler answers UNSUPPORTED_FEATURE
// with the reason in the log.
#include <gtest/gtest.h>

#include "compiler/program.hpp"

namespace zehal::compiler {
namespace {

TEST(Availability, ReasonMatchesAvailability) {
    EXPECT_EQ(available(), unavailable_reason().empty());
    if (available()) {
        return;
    }
    const uint8_t bytes[20] = {0x03, 0x02, 0x23, 0x07};
    std::shared_ptr<const Program> program;
    std::string log;
    EXPECT_EQ(Program::from_spirv(bytes, "", &program, &log), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_FALSE(program);
    EXPECT_NE(log.find(unavailable_reason()), std::string::npos) << log;
}

}  // namespace
}  // namespace zehal::compiler
