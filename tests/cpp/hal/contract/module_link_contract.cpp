// Linking and module queries (hal::link_modules, Module::global_pointer, has_imports):
// modules with SPIR-V imports (tests/kernels/link_*.cl) linked with the module exporting
// them. A device that cannot link answers UNSUPPORTED_FEATURE to a module with imports, and
// those tests skip with its reason.
#include <algorithm>

#include "contract_fixture.hpp"

namespace zehal::test::contract {
namespace {

#define ZEHAL_SKIP_WITHOUT_MODULES()                             \
    do {                                                         \
        if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_; \
    } while (0)

TEST_P(KernelContract, ImportsAreLinkedFromTheExportingModule) {
    auto importer = module("link_importer");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto exporter = module("link_exporter");
    ASSERT_TRUE(importer && exporter);
    EXPECT_TRUE(importer->has_imports());
    EXPECT_FALSE(exporter->has_imports());
    hal::KernelRef k;
    EXPECT_EQ(importer->create_kernel("offset_all", &k), ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED);
    EXPECT_FALSE(k);
    std::string log;
    const hal::ModuleRef list[] = {importer, exporter};
    ASSERT_EQ(hal::link_modules(list, &log), ZE_RESULT_SUCCESS) << log;
    k = kernel(importer, "offset_all");
    ASSERT_TRUE(k);

    constexpr uint32_t kItems = 64;
    Allocation host(device_, hal::MemoryKind::host, kItems * 4);
    Allocation data(device_, hal::MemoryKind::device, kItems * 4);
    for (uint32_t i = 0; i < kItems; ++i) host.as<int>()[i] = static_cast<int>(3 * i);
    void* p = data.ptr();
    ASSERT_EQ(k->set_argument(0, sizeof p, &p), ZE_RESULT_SUCCESS);
    ASSERT_EQ(k->set_group_size(16, 1, 1), ZE_RESULT_SUCCESS);
    auto q = queue(hal::kComputeOrdinal);
    EventSet ev(device_, 1);
    ASSERT_EQ(q->append_copy(data.ptr(), host.ptr(), kItems * 4, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_launch(*k, {kItems / 16, 1, 1}, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(host.ptr(), data.ptr(), kItems * 4, ev.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    for (uint32_t i = 0; i < kItems; ++i) EXPECT_EQ(host.as<int>()[i], static_cast<int>(3 * i + 1000 + i)) << i;
}

TEST_P(KernelContract, AnImportNoModuleExportsFailsTheLink) {
    auto importer = module("link_unresolved");
    ZEHAL_SKIP_WITHOUT_MODULES();
    auto exporter = module("link_exporter");
    ASSERT_TRUE(importer && exporter);
    std::string log;
    const hal::ModuleRef list[] = {importer, exporter};
    EXPECT_EQ(hal::link_modules(list, &log), ZE_RESULT_ERROR_MODULE_LINK_FAILURE);
    EXPECT_NE(log.find("not_exported_anywhere"), std::string::npos) << log;
    hal::KernelRef k;
    EXPECT_EQ(importer->create_kernel("calls_missing", &k), ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED);
    const hal::ModuleRef with_null[] = {importer, nullptr};
    EXPECT_EQ(hal::link_modules(with_null, &log), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(hal::link_modules({}, nullptr), ZE_RESULT_SUCCESS);
}

// Program-scope variables on every backend that builds modules: their storage, size and
// initial value; a name the module does not export is refused.
TEST_P(KernelContract, GlobalPointersAreTheModulesVariables) {
    auto m = module("globals");
    ZEHAL_SKIP_WITHOUT_MODULES();
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->has_imports());
    size_t size = 0;
    void* counter = nullptr;
    ASSERT_EQ(m->global_pointer("counter", &size, &counter), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, sizeof(int32_t));
    ASSERT_NE(counter, nullptr);
    int32_t value = 0;
    const std::vector<uint8_t> bytes = read_back(*queue(hal::kComputeOrdinal), counter, sizeof value);
    ASSERT_EQ(bytes.size(), sizeof value);
    std::copy(bytes.begin(), bytes.end(), reinterpret_cast<uint8_t*>(&value));
    EXPECT_EQ(value, 5);
    EXPECT_EQ(m->global_pointer("no_such_variable", &size, &counter), ZE_RESULT_ERROR_INVALID_GLOBAL_NAME);
}

}  // namespace
}  // namespace zehal::test::contract
