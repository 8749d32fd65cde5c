// zeModuleDynamicLink through the loader (docs/kernels.md, "Linking modules"): modules with
// SPIR-V imports (tests/kernels/link_*.cl) linked with the module exporting them, the
// specification's errors, and module properties. On a device that cannot link (CUDA), a
// module with imports is UNSUPPORTED_FEATURE and the tests that need one skip.
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "spirv_kernels.hpp"
#include "ze_fixture.hpp"

namespace {

// The text of `log`, which is destroyed.
std::string take_log(ze_module_build_log_handle_t log) {
    size_t size = 0;
    EXPECT_EQ(zeModuleBuildLogGetString(log, &size, nullptr), ZE_RESULT_SUCCESS);
    std::string text(size, '\0');
    EXPECT_EQ(zeModuleBuildLogGetString(log, &size, text.data()), ZE_RESULT_SUCCESS);
    text.resize(size > 0 ? size - 1 : 0);
    EXPECT_EQ(zeModuleBuildLogDestroy(log), ZE_RESULT_SUCCESS);
    return text;
}

class ZeModuleLink : public zetest::ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        if (!zetest::builds_spirv(device)) GTEST_SKIP() << "the device builds no SPIR-V";
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
        ZE_OK(zeMemAllocShared(context, &dd, &hd, kBytes, 64, device, &shared));
    }

    void TearDown() override {
        for (ze_kernel_handle_t k : kernels) EXPECT_EQ(zeKernelDestroy(k), ZE_RESULT_SUCCESS);
        for (ze_module_handle_t m : modules) EXPECT_EQ(zeModuleDestroy(m), ZE_RESULT_SUCCESS);
        if (shared) {
            EXPECT_EQ(zeMemFree(context, shared), ZE_RESULT_SUCCESS);
        }
        ZeDriver::TearDown();
    }

    // Module <file>.spv (destroyed by TearDown unless `keep` is false); null, with the reason
    // in *log, when it does not build.
    ze_module_handle_t module(const std::string& file, std::string* log = nullptr, bool keep = true) {
        const std::vector<uint8_t> bytes = zetest::spirv_kernel(file);
        ze_module_desc_t md{
            ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_IL_SPIRV, bytes.size(), bytes.data(), "", nullptr};
        ze_module_handle_t m = nullptr;
        ze_module_build_log_handle_t bl = nullptr;
        last_create = zeModuleCreate(context, device, &md, &m, &bl);
        const std::string text = bl ? take_log(bl) : std::string();
        if (log) *log = text;
        if (last_create == ZE_RESULT_SUCCESS && keep) modules.push_back(m);
        return last_create == ZE_RESULT_SUCCESS ? m : nullptr;
    }

    // The importer of link_importer.cl, or a skip where the device cannot link.
    ze_module_handle_t importer() {
        std::string log;
        ze_module_handle_t m = module("link_importer", &log);
        if (last_create == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) skip_reason = log;
        return m;
    }

    // zeModuleDynamicLink of `list`; the log's text into *log.
    ze_result_t link(std::vector<ze_module_handle_t> list, std::string* log = nullptr) {
        ze_module_build_log_handle_t bl = nullptr;
        const ze_result_t r = zeModuleDynamicLink(static_cast<uint32_t>(list.size()), list.data(), &bl);
        EXPECT_NE(bl, nullptr);
        const std::string text = bl ? take_log(bl) : std::string();
        if (log) *log = text;
        return r;
    }

    ze_kernel_handle_t kernel(ze_module_handle_t m, const char* name) {
        ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
        ze_kernel_handle_t k = nullptr;
        EXPECT_EQ(zeKernelCreate(m, &kd, &k), ZE_RESULT_SUCCESS) << name;
        if (k) kernels.push_back(k);
        return k;
    }

    // Launches `k` over `groups` groups of `group` work-items with `shared` as argument 0.
    void run(ze_kernel_handle_t k, uint32_t groups, uint32_t group) {
        ZE_OK(zeKernelSetArgumentValue(k, 0, sizeof shared, &shared));
        ZE_OK(zeKernelSetGroupSize(k, group, 1, 1));
        const ze_group_count_t count{groups, 1, 1};
        ZE_OK(zeCommandListAppendLaunchKernel(list, k, &count, nullptr, 0, nullptr));
        finish(list);
    }

    int32_t* ints() { return static_cast<int32_t*>(shared); }

    void* shared = nullptr;
    std::vector<ze_module_handle_t> modules;
    std::vector<ze_kernel_handle_t> kernels;
    ze_result_t last_create = ZE_RESULT_SUCCESS;
    std::string skip_reason;
};

#define ZEHAL_IMPORTER_OR_SKIP(m)                          \
    ze_module_handle_t m = importer();                     \
    if (!skip_reason.empty()) GTEST_SKIP() << skip_reason; \
    ASSERT_NE(m, nullptr)

// Before the link a module with imports says so and makes no kernels; after it, its kernels
// call the exporter's functions (with the caller's work-item functions and barriers) and
// use the exporter's own variable.
TEST_F(ZeModuleLink, ImportsAreResolvedByTheExporter) {
    ZEHAL_IMPORTER_OR_SKIP(imp);
    ze_module_handle_t exp = module("link_exporter");
    ASSERT_NE(exp, nullptr);
    ze_module_properties_t props{ZE_STRUCTURE_TYPE_MODULE_PROPERTIES, nullptr, 0};
    ZE_OK(zeModuleGetProperties(imp, &props));
    EXPECT_EQ(props.flags, ZE_MODULE_PROPERTY_FLAG_IMPORTS);
    ZE_OK(zeModuleGetProperties(exp, &props));
    EXPECT_EQ(props.flags, 0u);
    ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "offset_all"};
    ze_kernel_handle_t k = nullptr;
    EXPECT_EQ(zeKernelCreate(imp, &kd, &k), ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED);
    EXPECT_EQ(k, nullptr);
    // The native binary and kernel names are there before the link.
    size_t size = 0;
    ZE_OK(zeModuleGetNativeBinary(imp, &size, nullptr));
    EXPECT_GT(size, 0u);
    uint32_t count = 0;
    ZE_OK(zeModuleGetKernelNames(imp, &count, nullptr));
    EXPECT_EQ(count, 3u);

    std::string log;
    ASSERT_EQ(link({imp, exp}, &log), ZE_RESULT_SUCCESS) << log;
    ZE_OK(zeModuleGetProperties(imp, &props));
    EXPECT_EQ(props.flags, ZE_MODULE_PROPERTY_FLAG_IMPORTS);  // it still has imports, now resolved

    for (int i = 0; i < 8; ++i) ints()[i] = 2 * i;
    run(kernel(imp, "offset_all"), 2, 4);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(ints()[i], 2 * i + 1000 + i) << i;

    // A barrier inside the imported function: each group sums its work-items' ids.
    ze_kernel_handle_t sums = kernel(imp, "sums");
    ZE_OK(zeKernelSetArgumentValue(sums, 1, 4 * sizeof(int32_t), nullptr));
    run(sums, 2, 4);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(ints()[i], i < 4 ? 0 + 1 + 2 + 3 : 4 + 5 + 6 + 7) << i;

    // The variable is the exporter's: both modules' kernels and its global pointer see one.
    run(kernel(imp, "tickets"), 1, 1);
    EXPECT_EQ(ints()[0], 100);
    EXPECT_EQ(ints()[1], 101);
    EXPECT_EQ(ints()[2], 102);
    run(kernel(exp, "read_counter"), 1, 1);
    EXPECT_EQ(ints()[0], 112);
    void* counter = nullptr;
    ZE_OK(zeModuleGetGlobalPointer(exp, "link_counter", &size, &counter));
    ZE_OK(zeCommandListAppendMemoryCopy(list, shared, counter, sizeof(int32_t), nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(ints()[0], 112);
}

// Imports no module of the list exports: MODULE_LINK_FAILURE naming them in the link log;
// the module stays unlinked, and a later link with everything it needs would still work.
TEST_F(ZeModuleLink, UnresolvedImportsAreNamedInTheLog) {
    ZEHAL_IMPORTER_OR_SKIP(imp);
    std::string log;
    EXPECT_EQ(link({imp}, &log), ZE_RESULT_ERROR_MODULE_LINK_FAILURE);
    for (const char* name : {"add_offset", "take_ticket", "group_sum", "link_counter"})
        EXPECT_NE(log.find(name), std::string::npos) << log;
    ze_module_handle_t missing = module("link_unresolved");
    ASSERT_NE(missing, nullptr);
    ze_module_handle_t exp = module("link_exporter");
    EXPECT_EQ(link({missing, exp}, &log), ZE_RESULT_ERROR_MODULE_LINK_FAILURE);
    EXPECT_NE(log.find("not_exported_anywhere"), std::string::npos) << log;
    EXPECT_NE(log.find("no_such_variable"), std::string::npos) << log;
    // All or nothing: the importer listed beside a failing module is not linked either.
    EXPECT_EQ(link({imp, exp, missing}, &log), ZE_RESULT_ERROR_MODULE_LINK_FAILURE);
    ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "offset_all"};
    ze_kernel_handle_t k = nullptr;
    EXPECT_EQ(zeKernelCreate(imp, &kd, &k), ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED);
    ASSERT_EQ(link({imp, exp}, &log), ZE_RESULT_SUCCESS) << log;
    kernel(imp, "offset_all");
}

// Two modules exporting the same name: an ambiguous dependency, which the specification
// does not allow.
TEST_F(ZeModuleLink, AnImportExportedTwiceIsAmbiguous) {
    ZEHAL_IMPORTER_OR_SKIP(imp);
    ze_module_handle_t a = module("link_exporter");
    ze_module_handle_t b = module("link_exporter");
    std::string log;
    EXPECT_EQ(link({imp, a, b}, &log), ZE_RESULT_ERROR_MODULE_LINK_FAILURE);
    EXPECT_NE(log.find("several"), std::string::npos) << log;
    EXPECT_NE(log.find("add_offset"), std::string::npos) << log;
}

// A function that uses a static variable of its module cannot be imported (only its module
// reaches the variable): the link fails, naming it.
TEST_F(ZeModuleLink, StaticVariablesStayWithTheirModule) {
    ZEHAL_IMPORTER_OR_SKIP(imp);
    ze_module_handle_t user = module("link_uses_static");
    ze_module_handle_t exp = module("link_exporter");
    std::string log;
    EXPECT_EQ(link({user, exp}, &log), ZE_RESULT_ERROR_MODULE_LINK_FAILURE);
    EXPECT_NE(log.find("hidden_count"), std::string::npos) << log;
}

// A module is linked once: linking it again, alone or with other exporters, keeps its
// imports as they were and succeeds; a list naming a module twice counts it once; modules
// without imports need no link (an empty list, a list of exporters).
TEST_F(ZeModuleLink, LinkingAgainChangesNothing) {
    ZEHAL_IMPORTER_OR_SKIP(imp);
    ze_module_handle_t exp = module("link_exporter");
    std::string log;
    ASSERT_EQ(link({imp, exp, imp, exp}, &log), ZE_RESULT_SUCCESS) << log;
    EXPECT_EQ(link({imp}, &log), ZE_RESULT_SUCCESS) << log;
    ze_module_handle_t other = module("link_exporter");
    EXPECT_EQ(link({imp, other}, &log), ZE_RESULT_SUCCESS) << log;
    EXPECT_EQ(link({exp, other}, &log), ZE_RESULT_SUCCESS) << log;
    EXPECT_EQ(link({}, &log), ZE_RESULT_SUCCESS) << log;
    // Still bound to the first exporter's variable.
    run(kernel(imp, "tickets"), 1, 1);
    run(kernel(exp, "read_counter"), 1, 1);
    EXPECT_EQ(ints()[0], 112);
    run(kernel(other, "read_counter"), 1, 1);
    EXPECT_EQ(ints()[0], 100);
}

// The exporter stays alive while the importer's code uses it: destroying its handle first
// leaves the importer's kernels working on its variable.
TEST_F(ZeModuleLink, TheImporterKeepsItsExporterAlive) {
    ZEHAL_IMPORTER_OR_SKIP(imp);
    ze_module_handle_t exp = module("link_exporter", nullptr, false);
    ASSERT_NE(exp, nullptr);
    std::string log;
    ASSERT_EQ(link({imp, exp}, &log), ZE_RESULT_SUCCESS) << log;
    ZE_OK(zeModuleDestroy(exp));
    ze_module_handle_t list_of_destroyed[] = {imp, exp};
    EXPECT_EQ(zeModuleDynamicLink(2, list_of_destroyed, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    run(kernel(imp, "tickets"), 1, 1);
    EXPECT_EQ(ints()[0], 100);
    run(kernel(imp, "tickets"), 1, 1);
    EXPECT_EQ(ints()[0], 112);
}

// Links of one importer from several threads at once (the specification asks applications
// not to; zehal answers each, never crashes): every one succeeds, and the module ends with
// one link, its variable the exporter's.
TEST_F(ZeModuleLink, ConcurrentLinksOfOneModule) {
    ZEHAL_IMPORTER_OR_SKIP(imp);
    ze_module_handle_t exp = module("link_exporter");
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            ze_module_handle_t list[] = {imp, exp};
            if (zeModuleDynamicLink(2, list, nullptr) != ZE_RESULT_SUCCESS) failures.fetch_add(1);
        });
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    run(kernel(imp, "tickets"), 1, 1);
    run(kernel(exp, "read_counter"), 1, 1);
    EXPECT_EQ(ints()[0], 112);
}

// The specification's checks: a null list, null and destroyed handles; the log is optional.
TEST_F(ZeModuleLink, BadInputIsRefused) {
    EXPECT_EQ(zeModuleDynamicLink(1, nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ze_module_handle_t none[] = {nullptr};
    EXPECT_EQ(zeModuleDynamicLink(1, none, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeModuleDynamicLink(0, nullptr, nullptr), ZE_RESULT_SUCCESS);
    ze_module_handle_t exp = module("link_exporter", nullptr, false);
    ASSERT_NE(exp, nullptr);
    ze_module_handle_t one[] = {exp};
    EXPECT_EQ(zeModuleDynamicLink(1, one, nullptr), ZE_RESULT_SUCCESS);
    ZE_OK(zeModuleDestroy(exp));
    EXPECT_EQ(zeModuleDynamicLink(1, one, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ze_module_properties_t props{ZE_STRUCTURE_TYPE_MODULE_PROPERTIES, nullptr, 0};
    EXPECT_EQ(zeModuleGetProperties(exp, &props), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

// The variables of a module with imports come with its link: then they are device memory of
// the device, as those of any module.
TEST_F(ZeModuleLink, AnUnlinkedModuleHasNoVariablesYet) {
    ZEHAL_IMPORTER_OR_SKIP(imp);
    void* runs = nullptr;
    size_t size = 0;
    EXPECT_EQ(zeModuleGetGlobalPointer(imp, "tickets_runs", &size, &runs), ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED);
    // A variable it imports is not one of its own.
    EXPECT_EQ(zeModuleGetGlobalPointer(imp, "link_counter", &size, &runs), ZE_RESULT_ERROR_INVALID_GLOBAL_NAME);
    ze_module_handle_t exp = module("link_exporter");
    std::string log;
    ASSERT_EQ(link({imp, exp}, &log), ZE_RESULT_SUCCESS) << log;
    ZE_OK(zeModuleGetGlobalPointer(imp, "tickets_runs", &size, &runs));
    EXPECT_EQ(size, sizeof(int32_t));
    if (zetest::is_sim(device)) {
        ze_memory_allocation_properties_t ap{};
        ap.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
        ze_device_handle_t owner = nullptr;
        ZE_OK(zeMemGetAllocProperties(context, runs, &ap, &owner));
        EXPECT_EQ(ap.type, ZE_MEMORY_TYPE_DEVICE);
        EXPECT_EQ(owner, device);
    }
    run(kernel(imp, "tickets"), 1, 1);
    ZE_OK(zeCommandListAppendMemoryCopy(list, shared, runs, sizeof(int32_t), nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(ints()[0], 1);
}

// ZE_experimental_module_program: one module of several SPIR-V programs, whose imports
// are resolved by each other's exports when it is made; its kernels, variables and
// functions are its programs'.
TEST_F(ZeModuleLink, AModuleOfSeveralProgramsIsLinkedWhenMade) {
    ZEHAL_IMPORTER_OR_SKIP(imp);
    const std::vector<uint8_t> importer = zetest::spirv_kernel("link_importer"),
                               exporter = zetest::spirv_kernel("link_exporter"),
                               unresolved = zetest::spirv_kernel("link_unresolved");
    const uint8_t* inputs[] = {importer.data(), exporter.data()};
    const size_t sizes[] = {importer.size(), exporter.size()};
    const char* flags[] = {"", nullptr};
    ze_module_program_exp_desc_t program{
        ZE_STRUCTURE_TYPE_MODULE_PROGRAM_EXP_DESC, nullptr, 2, sizes, inputs, flags, nullptr};
    ze_module_desc_t md{
        ZE_STRUCTURE_TYPE_MODULE_DESC, &program, ZE_MODULE_FORMAT_IL_SPIRV, 0, nullptr, nullptr, nullptr};
    ze_module_handle_t m = nullptr;
    ze_module_build_log_handle_t bl = nullptr;
    ASSERT_EQ(zeModuleCreate(context, device, &md, &m, &bl), ZE_RESULT_SUCCESS) << take_log(bl);
    take_log(bl);
    modules.push_back(m);
    uint32_t count = 0;
    ZE_OK(zeModuleGetKernelNames(m, &count, nullptr));
    EXPECT_EQ(count, 4u);  // the importer's three, then the exporter's one
    for (int i = 0; i < 8; ++i) ints()[i] = 2 * i;
    run(kernel(m, "offset_all"), 2, 4);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(ints()[i], 2 * i + 1000 + i) << i;
    size_t size = 0;
    void* counter = nullptr;
    ZE_OK(zeModuleGetGlobalPointer(m, "link_counter", &size, &counter));
    EXPECT_EQ(size, sizeof(int32_t));
    void* f = nullptr;
    ZE_OK(zeModuleGetFunctionPointer(m, "add_offset", &f));
    EXPECT_NE(f, nullptr);
    // An import no program exports is a link failure naming it; bad descriptors are refused.
    const uint8_t* lone[] = {unresolved.data()};
    const size_t lone_size[] = {unresolved.size()};
    ze_module_program_exp_desc_t missing{
        ZE_STRUCTURE_TYPE_MODULE_PROGRAM_EXP_DESC, nullptr, 1, lone_size, lone, nullptr, nullptr};
    md.pNext = &missing;
    ze_module_handle_t none = nullptr;
    EXPECT_EQ(zeModuleCreate(context, device, &md, &none, &bl), ZE_RESULT_ERROR_MODULE_LINK_FAILURE);
    EXPECT_NE(take_log(bl).find("not_exported_anywhere"), std::string::npos);
    EXPECT_EQ(none, nullptr);
    missing.count = 0;
    EXPECT_EQ(zeModuleCreate(context, device, &md, &none, nullptr), ZE_RESULT_ERROR_INVALID_SIZE);
    missing.count = 1;
    missing.pInputModules = nullptr;
    EXPECT_EQ(zeModuleCreate(context, device, &md, &none, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    md.pNext = &program;
    md.format = ZE_MODULE_FORMAT_NATIVE;
    EXPECT_EQ(zeModuleCreate(context, device, &md, &none, nullptr), ZE_RESULT_ERROR_INVALID_ENUMERATION);
}

// Function pointers: a name that is no kernel or exported function of the module is
// INVALID_FUNCTION_NAME (a variable's name too); null arguments are refused. The sim device
// gives the address of an exported function, not of a kernel nor of a function that reaches
// a barrier (UNSUPPORTED_FEATURE); CUDA answers UNSUPPORTED_FEATURE to every name.
TEST_F(ZeModuleLink, FunctionPointersAreThoseOfCallableFunctions) {
    ze_module_handle_t exp = module("link_exporter");
    ASSERT_NE(exp, nullptr);
    void* f = reinterpret_cast<void*>(uintptr_t{0x1000});
    EXPECT_EQ(zeModuleGetFunctionPointer(exp, nullptr, &f), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeModuleGetFunctionPointer(exp, "add_offset", nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeModuleGetFunctionPointer(nullptr, "add_offset", &f), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    if (!zetest::is_sim(device)) GTEST_SKIP() << "CUDA modules answer UNSUPPORTED_FEATURE to every name";
    EXPECT_EQ(zeModuleGetFunctionPointer(exp, "no_such_function", &f), ZE_RESULT_ERROR_INVALID_FUNCTION_NAME);
    EXPECT_EQ(zeModuleGetFunctionPointer(exp, "link_counter", &f), ZE_RESULT_ERROR_INVALID_FUNCTION_NAME);
    EXPECT_EQ(f, reinterpret_cast<void*>(uintptr_t{0x1000}));  // untouched
    for (const char* name : {"group_sum", "read_counter"})
        EXPECT_EQ(zeModuleGetFunctionPointer(exp, name, &f), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) << name;
    EXPECT_EQ(f, reinterpret_cast<void*>(uintptr_t{0x1000}));  // untouched
    ZE_OK(zeModuleGetFunctionPointer(exp, "add_offset", &f));
    EXPECT_NE(f, reinterpret_cast<void*>(uintptr_t{0x1000}));
    EXPECT_NE(f, nullptr);
}

}  // namespace
