// The level_zero backend in the registry, device properties, and its status when
// the loader or the driver is missing.
#include <gtest/gtest.h>
#include <dlfcn.h>
#include <link.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/backend_devices.hpp"

extern char** environ;

namespace zehal::test {
namespace {

TEST(LevelZeroBackend, RegistryListsItFirstWithAReasonWhenUnavailable) {
    const std::vector<hal::BackendStatus>& all = hal::backends();
    ASSERT_GE(all.size(), 3u);
    EXPECT_EQ(all[0].name, "level_zero");
    EXPECT_EQ(all[1].name, "cuda");
    EXPECT_EQ(all[2].name, "sim");
    const hal::BackendStatus& b = all[0];
    if (b.available) {
        EXPECT_TRUE(b.reason.empty());
        ASSERT_NE(b.backend, nullptr);
        EXPECT_EQ(b.backend->name(), "level_zero");
        for (const hal::DeviceRef& d : b.backend->devices()) EXPECT_EQ(d->backend_name(), "level_zero");
    } else {
        EXPECT_FALSE(b.reason.empty());
        EXPECT_EQ(b.backend, nullptr);
        std::shared_ptr<hal::Backend> none;
        EXPECT_EQ(hal::find_backend("level_zero", &none), ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
    }
}

TEST(LevelZeroBackend, PropertiesComeFromTheDriver) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    const hal::DeviceProperties& p = dev->properties();
    EXPECT_EQ(dev->backend_name(), "level_zero");
    EXPECT_FALSE(p.name.empty());
    EXPECT_GT(p.memory_bytes, 0u);
    EXPECT_GT(p.max_allocation_bytes, 0u);
    EXPECT_GT(p.timer_hz, 0u);
    EXPECT_GT(p.kernel_timestamp_valid_bits, 0u);
    EXPECT_GT(p.timestamp_valid_bits, 0u);
    EXPECT_GE(p.compute_engines, 1u);
    EXPECT_GE(p.memory_ordinals, 1u);
    EXPECT_TRUE(p.timestamp_flags & hal::kTimestampKernel);
    EXPECT_EQ(dev->trace_source(), nullptr);
    EXPECT_FALSE(p.tracer);
    // What it lacks is said (zehal info prints it).
    EXPECT_NE(p.limits.find("no tracer"), std::string::npos) << p.limits;
}

TEST(LevelZeroBackend, TheDriverBehindItIsZehalsOwnDevice) {
    // Under CTest the loader is pointed at libze_zehal.so, whose first device is the first
    // cuda or sim device of its own copy of zehal: the properties cross the loader unchanged.
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    if (!level_zero_required()) GTEST_SKIP() << "the loader is not pointed at zehal's driver";
    const hal::DeviceRef twin = driver_twin();
    ASSERT_NE(twin, nullptr);
    const hal::DeviceProperties& mine = dev->properties();
    const hal::DeviceProperties& want = twin->properties();
    EXPECT_EQ(mine.name, want.name);
    EXPECT_EQ(mine.timer_hz, want.timer_hz);
    EXPECT_EQ(mine.kernel_timestamp_valid_bits, want.kernel_timestamp_valid_bits);
    EXPECT_EQ(mine.timestamp_valid_bits, want.timestamp_valid_bits);
    EXPECT_EQ(mine.compute_engines, want.compute_engines);
    EXPECT_EQ(mine.copy_engines, want.copy_engines);
    EXPECT_EQ(mine.memory_bytes, want.memory_bytes);
    EXPECT_EQ(mine.timestamp_flags, want.timestamp_flags);
    EXPECT_EQ(mine.uuid, want.uuid);
    // The floating-point atomics, through zeDeviceGetModuleProperties' chained structure.
    EXPECT_EQ(mine.fp16_atomics, want.fp16_atomics);
    EXPECT_EQ(mine.fp32_atomics, want.fp32_atomics);
    EXPECT_EQ(mine.fp64_atomics, want.fp64_atomics);
}

TEST(LevelZeroBackend, WithoutExtensionsKernelTimestampsRemainAndTheReasonIsSaid) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    const char* v = std::getenv("ZEHAL_LEVEL_ZERO_EXTENSIONS");
    const hal::DeviceProperties& p = dev->properties();
    if (!v || std::string(v) != "0") {
        EXPECT_EQ(p.limits.find("ZEHAL_LEVEL_ZERO_EXTENSIONS"), std::string::npos);
        return;
    }
    EXPECT_EQ(p.timestamp_flags, static_cast<uint32_t>(hal::kTimestampKernel));
    EXPECT_NE(p.limits.find("no synchronized timestamps: zeEventQueryKernelTimestampsExt not resolved"),
              std::string::npos)
        << p.limits;
    std::shared_ptr<hal::EventPool> pool;
    EXPECT_EQ(dev->create_event_pool(1, hal::kPoolHostVisible | hal::kPoolKernelMappedTimestamp, &pool),
              ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST(LevelZeroBackend, MetricGroupsComeFromTheDriverWithDeviceWideIds) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    const std::vector<hal::MetricGroupInfo>& groups = dev->metric_groups();
    uint32_t next = 0;
    for (const hal::MetricGroupInfo& g : groups) {
        EXPECT_FALSE(g.name.empty());
        EXPECT_EQ(g.first_metric_id, next);
        EXPECT_FALSE(g.metrics.empty()) << g.name;
        next += static_cast<uint32_t>(g.metrics.size());
    }
    if (!level_zero_required()) return;
    // Behind the loader is zehal's driver over its own device: the same groups and metrics.
    const hal::DeviceRef twin = driver_twin();
    ASSERT_NE(twin, nullptr);
    const std::vector<hal::MetricGroupInfo>& want = twin->metric_groups();
    ASSERT_EQ(groups.size(), want.size());
    for (size_t i = 0; i < groups.size(); ++i) {
        EXPECT_EQ(groups[i].name, want[i].name);
        EXPECT_EQ(groups[i].description, want[i].description);
        EXPECT_EQ(groups[i].sampling_types, want[i].sampling_types);
        EXPECT_EQ(groups[i].type_flags, want[i].type_flags);
        EXPECT_EQ(groups[i].domain, want[i].domain);
        EXPECT_EQ(groups[i].first_metric_id, want[i].first_metric_id);
        ASSERT_EQ(groups[i].metrics.size(), want[i].metrics.size());
        for (size_t m = 0; m < groups[i].metrics.size(); ++m) {
            EXPECT_EQ(groups[i].metrics[m].name, want[i].metrics[m].name);
            EXPECT_EQ(groups[i].metrics[m].metric_type, want[i].metrics[m].metric_type);
            EXPECT_EQ(groups[i].metrics[m].result_type, want[i].metrics[m].result_type);
            EXPECT_EQ(groups[i].metrics[m].units, want[i].metrics[m].units);
        }
    }
    // The tracer is not mapped: no trace source, whatever the groups say.
    EXPECT_FALSE(dev->properties().tracer);
    EXPECT_EQ(dev->trace_source(), nullptr);
}

TEST(LevelZeroBackend, ExportMemoryIsTheGroupsFdAndImportsBack) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    int fd = -1;
    size_t size = 0;
    const std::vector<hal::MetricGroupInfo>& groups = dev->metric_groups();
    bool exported = false;
    for (uint32_t i = 0; i < groups.size(); ++i) {
        if (!(groups[i].type_flags & hal::kGroupExportDmaBuf)) {
            EXPECT_EQ(dev->export_dma_buf(i, &fd, &size), ZE_RESULT_ERROR_INVALID_ARGUMENT);
            continue;
        }
        ASSERT_EQ(dev->export_dma_buf(i, &fd, &size), ZE_RESULT_SUCCESS);
        EXPECT_GE(fd, 0);
        EXPECT_GT(size, 0u);
        int again = -1;
        size_t again_size = 0;
        ASSERT_EQ(dev->export_dma_buf(i, &again, &again_size), ZE_RESULT_SUCCESS);
        EXPECT_EQ(again, fd);  // the group's fd, not a new one
        EXPECT_EQ(again_size, size);
        void* p = nullptr;
        ASSERT_EQ(dev->import_dma_buf(fd, size, &p), ZE_RESULT_SUCCESS);
        EXPECT_EQ(dev->free(p), ZE_RESULT_SUCCESS);
        exported = true;
    }
    EXPECT_EQ(exported, dev->properties().dma_buf_export);
}

// The path of the Level Zero loader as the dynamic linker finds it for this process (the
// one the backend opened), or its soname when there is none.
std::string loader_path() {
    std::string path = "libze_loader.so.1";
    void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!h) h = dlopen(path.c_str(), RTLD_LAZY);
    link_map* map = nullptr;
    if (h && dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) path = map->l_name;
    if (h) dlclose(h);
    return path;
}

// Runs probe_child with `env` added to this process's environment; its stdout.
std::string run_child(const std::vector<std::string>& env) {
    std::vector<std::string> strings;
    for (char** e = environ; *e; ++e) {
        const std::string s = *e;
        bool replaced = false;
        for (const std::string& add : env) replaced |= s.substr(0, s.find('=')) == add.substr(0, add.find('='));
        if (!replaced) strings.push_back(s);
    }
    strings.insert(strings.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (std::string& s : strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    int fds[2];
    if (pipe(fds) != 0) return "pipe failed";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    char path[] = ZEHAL_PROBE_CHILD;
    char* argv[] = {path, nullptr};
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, path, &actions, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    std::string out;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    if (spawned != 0) return "spawn failed";
    int status = 0;
    waitpid(pid, &status, 0);
    return out;
}

TEST(LevelZeroBackend, NoLoaderMeansUnavailableWithTheReason) {
    const std::string out = run_child({"ZEHAL_LEVEL_ZERO_LOADER=/nonexistent/libze_loader.so.1"});
    EXPECT_EQ(out.rfind("unavailable cannot open the Level Zero loader", 0), 0u) << out;
    EXPECT_NE(out.find("/nonexistent/libze_loader.so.1"), std::string::npos) << out;
}

TEST(LevelZeroBackend, NoDriverMeansUnavailableWithTheReason) {
    // The loader this process uses, named outright: the child's library path finds no
    // driver, and so neither would it find a loader unpacked beside the system's.
    const std::string out = run_child({"ZE_ENABLE_ALT_DRIVERS=/nonexistent/libze_none.so",
                                       "LD_LIBRARY_PATH=/nonexistent", "ZEHAL_LEVEL_ZERO_LOADER=" + loader_path()});
    EXPECT_EQ(out.rfind("unavailable ", 0), 0u) << out;
    EXPECT_NE(out.find("driver"), std::string::npos) << out;
}

TEST(LevelZeroBackend, TheChildSeesTheDriverWhereThisProcessDoes) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    const std::string out = run_child({});
    EXPECT_EQ(out.rfind("available ", 0), 0u) << out;
}

}  // namespace
}  // namespace zehal::test
