// The backend registry: order, availability, ZEHAL_BACKEND.
#include "hal/registry.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace zehal::hal {
namespace {

class Registry : public ::testing::Test {
protected:
    void TearDown() override { unsetenv("ZEHAL_BACKEND"); }
};

TEST_F(Registry, OrderAndTheAlwaysAvailableSim) {
    const auto& all = backends();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].name, "level_zero");
    EXPECT_EQ(all[1].name, "cuda");
    EXPECT_EQ(all[2].name, "sim");
    for (const BackendStatus& b : all) {
        EXPECT_EQ(b.available, b.backend != nullptr) << b.name;
        EXPECT_EQ(b.available, b.reason.empty()) << b.name;
        if (b.available) {
            EXPECT_EQ(b.backend->name(), b.name);
        }
    }
    ASSERT_TRUE(all[2].available);
    EXPECT_EQ(all[2].backend->devices().size(), 1u);
    EXPECT_EQ(&backends(), &all);  // probed once
}

TEST_F(Registry, FindBackend) {
    std::shared_ptr<Backend> b;
    EXPECT_EQ(find_backend("sim", nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(find_backend("nope", &b), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(find_backend("", &b), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(find_backend("sim", &b), ZE_RESULT_SUCCESS);
    EXPECT_EQ(b->name(), "sim");
    for (const BackendStatus& s : backends()) {
        if (s.available) continue;
        EXPECT_EQ(find_backend(s.name, &b), ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE) << s.name;
    }
}

TEST_F(Registry, ZehalBackendForcesTheDefault) {
    setenv("ZEHAL_BACKEND", "sim", 1);
    std::shared_ptr<Backend> b;
    ASSERT_EQ(default_backend(&b), ZE_RESULT_SUCCESS);
    EXPECT_EQ(b->name(), "sim");
    DeviceRef d;
    ASSERT_EQ(default_device(&d), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d, backends()[2].backend->devices()[0]);
    EXPECT_EQ(d->backend_name(), "sim");

    setenv("ZEHAL_BACKEND", "nope", 1);
    EXPECT_EQ(default_backend(&b), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(default_device(&d), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    for (const BackendStatus& s : backends()) {
        if (s.available) continue;
        setenv("ZEHAL_BACKEND", s.name.c_str(), 1);
        EXPECT_EQ(default_backend(&b), ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE) << s.name;
    }
    EXPECT_EQ(default_backend(nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(default_device(nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST_F(Registry, DefaultIsTheFirstAvailableBackendWithADevice) {
    std::shared_ptr<Backend> b;
    ASSERT_EQ(default_backend(&b), ZE_RESULT_SUCCESS);
    for (const BackendStatus& s : backends()) {
        if (s.available && !s.backend->devices().empty()) {
            EXPECT_EQ(b->name(), s.name);
            break;
        }
    }
    DeviceRef d;
    ASSERT_EQ(default_device(&d), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d, b->devices().front());
}

}  // namespace
}  // namespace zehal::hal
