// AML error codes: the ze_result_t table, messages, aml_perror and the thread-local errno.
#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

#include "aml.h"

namespace {

TEST(AmlErrors, CodesHaveTheirValues) {
    EXPECT_EQ(AML_SUCCESS, 0);
    EXPECT_EQ(AML_FAILURE, 1);
    EXPECT_EQ(AML_ENOMEM, 2);
    EXPECT_EQ(AML_EINVAL, 3);
    EXPECT_EQ(AML_EDOM, 4);
    EXPECT_EQ(AML_ENOTSUP, 5);
    EXPECT_EQ(AML_EBUSY, 6);
    EXPECT_EQ(AML_EPERM, 7);
    EXPECT_EQ(AML_ERROR_MAX, 8);
}

TEST(AmlErrors, StrerrorAnswersByName) {
    EXPECT_STREQ(aml_strerror(AML_SUCCESS), "Success");
    EXPECT_STREQ(aml_strerror(AML_FAILURE), "Generic error");
    EXPECT_STREQ(aml_strerror(AML_ENOMEM), "Not enough memory");
    EXPECT_STREQ(aml_strerror(AML_EINVAL), "Invalid argument");
    EXPECT_STREQ(aml_strerror(AML_EDOM), "Value out of bound");
    EXPECT_STREQ(aml_strerror(AML_ENOTSUP), "Operation not supported");
    EXPECT_STREQ(aml_strerror(AML_EBUSY), "Underlying resource is not available for operation");
    EXPECT_STREQ(aml_strerror(AML_EPERM), "Insufficient permissions");
    EXPECT_STREQ(aml_strerror(AML_ERROR_MAX), "Unknown error");
    EXPECT_STREQ(aml_strerror(-AML_EINVAL), "Unknown error");
    EXPECT_STREQ(aml_strerror(1000), "Unknown error");
}

TEST(AmlErrors, TranslationTableIsComplete) {
    const std::vector<std::pair<ze_result_t, int>> table = {
        {ZE_RESULT_SUCCESS, AML_SUCCESS},
        {ZE_RESULT_ERROR_UNINITIALIZED, AML_FAILURE},
        {ZE_RESULT_ERROR_DEVICE_LOST, AML_FAILURE},
        {ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, AML_FAILURE},
        {ZE_RESULT_ERROR_MODULE_LINK_FAILURE, AML_FAILURE},
        {ZE_RESULT_ERROR_UNKNOWN, AML_FAILURE},
        {ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, AML_ENOMEM},
        {ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, AML_ENOMEM},
        {ZE_RESULT_ERROR_INVALID_NULL_HANDLE, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_NULL_POINTER, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_ENUMERATION, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_ARGUMENT, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_SIZE, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_GLOBAL_NAME, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_KERNEL_NAME, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED, AML_EINVAL},
        {ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE, AML_EINVAL},
        {ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, AML_EINVAL},
        {ZE_RESULT_ERROR_OVERLAPPING_REGIONS, AML_EDOM},
        {ZE_RESULT_ERROR_UNSUPPORTED_VERSION, AML_ENOTSUP},
        {ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, AML_ENOTSUP},
        {ZE_RESULT_ERROR_UNSUPPORTED_SIZE, AML_ENOTSUP},
        {ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, AML_ENOTSUP},
        {ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION, AML_ENOTSUP},
        {ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT, AML_ENOTSUP},
        {ZE_RESULT_NOT_READY, AML_EBUSY},
        {ZE_RESULT_ERROR_NOT_AVAILABLE, AML_EBUSY},
        {ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, AML_EBUSY},
        {ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS, AML_EPERM},
        // Anything else is a generic failure.
        {ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET, AML_FAILURE},
        {ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE, AML_FAILURE},
        {ZE_RESULT_WARNING_DROPPED_DATA, AML_FAILURE},
        {static_cast<ze_result_t>(0x12345678), AML_FAILURE},
    };
    for (const auto& [result, aml] : table)
        EXPECT_EQ(aml_errno_from_ze_result(result), aml) << std::hex << static_cast<unsigned>(result);
}

TEST(AmlErrors, PerrorPrintsMessageColonStrerror) {
    aml_errno = AML_ENOMEM;
    testing::internal::CaptureStderr();
    aml_perror("mapping");
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "mapping:Not enough memory\n");
    testing::internal::CaptureStderr();
    aml_perror(nullptr);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "Not enough memory\n");
    aml_errno = AML_SUCCESS;
}

TEST(AmlErrors, ErrnoIsThreadLocal) {
    aml_errno = AML_EDOM;
    int seen_in_thread = -1;
    std::thread t([&] {
        seen_in_thread = aml_errno;
        aml_errno = AML_EPERM;
    });
    t.join();
    EXPECT_EQ(seen_in_thread, AML_SUCCESS);
    EXPECT_EQ(aml_errno, AML_EDOM);
    EXPECT_EQ(*aml_errno_location(), AML_EDOM);
    aml_errno = AML_SUCCESS;
}

}  // namespace
