// ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY as the loader's users set them: each case
// runs this program again as a child with the variables set (the driver reads them once,
// at initialization) and reads back the devices it listed.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>

namespace {

// The devices of the first driver, by name, on stdout as "device <name>" lines, or "init
// <code>" when initialization fails. Run only as the child of the tests below.
TEST(AffinityChild, DISABLED_ListDevices) {
    if (ze_result_t r = zeInit(0); r != ZE_RESULT_SUCCESS) {
        std::printf("init %d\n", static_cast<int>(r));
        return;
    }
    uint32_t count = 1;
    ze_driver_handle_t driver = nullptr;
    ASSERT_EQ(zeDriverGet(&count, &driver), ZE_RESULT_SUCCESS);
    count = 0;
    ASSERT_EQ(zeDeviceGet(driver, &count, nullptr), ZE_RESULT_SUCCESS);
    std::vector<ze_device_handle_t> devices(count);
    ASSERT_EQ(zeDeviceGet(driver, &count, devices.data()), ZE_RESULT_SUCCESS);
    for (ze_device_handle_t d : devices) {
        ze_device_properties_t p{};
        p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        ASSERT_EQ(zeDeviceGetProperties(d, &p), ZE_RESULT_SUCCESS);
        std::printf("device %s\n", p.name);
    }
}

// What the child lists under environment `env` ("VAR=value ..."): its "device"/"init" lines.
std::vector<std::string> child_lines(const std::string& env) {
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    const std::string command = "env " + env + " '" + self +
                                "' --gtest_also_run_disabled_tests"
                                " --gtest_filter=AffinityChild.DISABLED_ListDevices 2>&1";
    std::vector<std::string> lines;
    FILE* out = popen(command.c_str(), "r");
    if (!out) return lines;
    char buffer[512];
    while (std::fgets(buffer, sizeof buffer, out)) {
        std::string line(buffer);
        if (!line.empty() && line.back() == '\n') line.pop_back();
        if (line.rfind("device ", 0) == 0 || line.rfind("init ", 0) == 0) lines.push_back(line);
    }
    EXPECT_EQ(pclose(out), 0) << command;
    return lines;
}

TEST(Affinity, TheMaskSelectsDevicesByIndexInListingOrder) {
    const std::vector<std::string> all = child_lines("-u ZE_AFFINITY_MASK");
    ASSERT_FALSE(all.empty());
    ASSERT_EQ(all[0].rfind("device ", 0), 0u) << all[0];
    EXPECT_EQ(child_lines("ZE_AFFINITY_MASK="), all);
    EXPECT_EQ(child_lines("ZE_AFFINITY_MASK=0"), std::vector<std::string>{all[0]});
    EXPECT_EQ(child_lines("ZE_AFFINITY_MASK=0.0"),
              std::vector<std::string>{all[0]});  // a device is its own sub-device 0
    EXPECT_EQ(child_lines("'ZE_AFFINITY_MASK=junk, 0 ,9.x'"), std::vector<std::string>{all[0]});
    const std::string none = std::to_string(all.size());
    const std::vector<std::string> nothing = child_lines("ZE_AFFINITY_MASK=" + none + ",0.1");
    ASSERT_EQ(nothing.size(), 1u);
    EXPECT_EQ(nothing[0].rfind("init ", 0), 0u) << nothing[0];  // no device selected: no driver
    if (all.size() >= 2) {
        EXPECT_EQ(child_lines("ZE_AFFINITY_MASK=1"), std::vector<std::string>{all[1]});
        EXPECT_EQ(child_lines("ZE_AFFINITY_MASK=1,0"), (std::vector<std::string>{all[0], all[1]}));
    }
}

TEST(Affinity, EveryHierarchyModeListsTheSameDevices) {
    const std::vector<std::string> all = child_lines("-u ZE_AFFINITY_MASK");
    ASSERT_FALSE(all.empty());
    for (const char* mode : {"FLAT", "COMPOSITE", "COMBINED"}) {
        EXPECT_EQ(child_lines(std::string("-u ZE_AFFINITY_MASK ZE_FLAT_DEVICE_HIERARCHY=") + mode), all) << mode;
        EXPECT_EQ(child_lines(std::string("ZE_AFFINITY_MASK=0.0 ZE_FLAT_DEVICE_HIERARCHY=") + mode),
                  std::vector<std::string>{all[0]})
            << mode;
    }
}

}  // namespace
