// The AML tests pair fresh sim devices with host areas of the default backend, so they run
// with the sim backend as the default one, also on a machine where another backend exists.
#include <gtest/gtest.h>

#include <cstdlib>

namespace {

class SimBackendEnvironment : public ::testing::Environment {
public:
    void SetUp() override { setenv("ZEHAL_BACKEND", "sim", 1); }
};

// Registered before main() runs the tests.
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new SimBackendEnvironment);

}  // namespace
