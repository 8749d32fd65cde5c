// The linkage of programs (Program::imports, exports) and HostModule::link over the
// tests/kernels/link_*.cl kernels: what a link takes from its sources, in which order
// sources with variables must be built, and its failures.
#include <gtest/gtest.h>

#include <algorithm>

#include "spirv_files.hpp"

namespace zehal::compiler {
namespace {

using testing::load_program;

bool has(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(ProgramLinkage, ImportsAndExportsComeFromTheSpirv) {
    ZEHAL_REQUIRE_COMPILER();
    auto importer = load_program("link_importer");
    auto exporter = load_program("link_exporter");
    ASSERT_TRUE(importer && exporter);
    EXPECT_EQ(importer->imports(),
              (std::vector<std::string>{"link_counter", "add_offset", "take_ticket", "group_sum"}));
    for (const char* name : {"offset_all", "tickets", "sums", "tickets_runs"})
        EXPECT_TRUE(has(importer->exports(), name));
    EXPECT_TRUE(exporter->imports().empty());  // the translator's built-in variables are no imports
    for (const char* name : {"link_counter", "add_offset", "take_ticket", "group_sum", "bump_hidden", "read_counter"})
        EXPECT_TRUE(has(exporter->exports(), name)) << name;
    EXPECT_FALSE(has(exporter->exports(), "hidden_count"));  // static
    EXPECT_TRUE(load_program("buffers")->imports().empty());
}

// A source whose variables the linked code uses must have host code: NOT_READY before, and
// once it has, the link binds them and names that source as used.
TEST(ProgramLinkage, VariablesNeedTheirSourcesHostCode) {
    ZEHAL_REQUIRE_COMPILER();
    auto importer = load_program("link_importer");
    auto exporter = load_program("link_exporter");
    ASSERT_TRUE(importer && exporter);
    std::shared_ptr<const HostModule> host;
    std::vector<size_t> used;
    std::string log;
    LinkSource sources[] = {{exporter, nullptr}};
    EXPECT_EQ(HostModule::link(importer, sources, &host, &used, &log), ZE_RESULT_NOT_READY);
    EXPECT_FALSE(host);
    ASSERT_EQ(HostModule::build(exporter, &sources[0].host, &log), ZE_RESULT_SUCCESS) << log;
    ASSERT_EQ(HostModule::link(importer, sources, &host, &used, &log), ZE_RESULT_SUCCESS) << log;
    ASSERT_TRUE(host);
    EXPECT_EQ(used, (std::vector<size_t>{0}));
    EXPECT_NE(host->global_address(0), nullptr);  // tickets_runs, its own
    // A program without imports links to itself alone, using nothing.
    ASSERT_EQ(HostModule::link(load_program("buffers"), {}, &host, &used, &log), ZE_RESULT_SUCCESS) << log;
    EXPECT_TRUE(used.empty());
}

TEST(ProgramLinkage, FailuresNameWhatIsMissing) {
    ZEHAL_REQUIRE_COMPILER();
    auto importer = load_program("link_importer");
    ASSERT_TRUE(importer);
    std::shared_ptr<const HostModule> host;
    std::vector<size_t> used;
    std::string log;
    EXPECT_EQ(HostModule::link(importer, {}, &host, &used, &log), ZE_RESULT_ERROR_MODULE_LINK_FAILURE);
    EXPECT_NE(log.find("group_sum"), std::string::npos) << log;
    EXPECT_FALSE(host);
    LinkSource null_program[] = {{nullptr, nullptr}};
    EXPECT_EQ(HostModule::link(importer, null_program, &host, &used, &log), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(HostModule::link(nullptr, {}, &host, &used, &log), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

}  // namespace
}  // namespace zehal::compiler
