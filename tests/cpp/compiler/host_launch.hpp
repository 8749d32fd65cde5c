// Launching a kernel of a HostModule from a test: arguments by value, buffers as
// pointers, __local sizes.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "spirv_files.hpp"

namespace zehal::compiler::testing {

// The arguments of one launch; keeps their bytes alive.
class Args {
public:
    // A value argument (scalar or struct), or a buffer's address (pass the pointer).
    template <typename T>
    Args& value(const T& v) {
        auto bytes = std::make_shared<std::vector<uint8_t>>(sizeof(T));
        std::memcpy(bytes->data(), &v, sizeof(T));
        storage_.push_back(bytes);
        values_.push_back(bytes->data());
        local_.push_back(0);
        return *this;
    }
    // A __local argument of `bytes`.
    Args& local(size_t bytes) {
        values_.push_back(nullptr);
        local_.push_back(bytes);
        return *this;
    }
    LaunchArgs launch() const { return {values_, local_}; }

private:
    std::vector<std::shared_ptr<std::vector<uint8_t>>> storage_;
    std::vector<const void*> values_;
    std::vector<size_t> local_;
};

// A built host module of tests/kernels/<name>.cl.
struct Built {
    std::shared_ptr<const Program> program;
    std::shared_ptr<const HostModule> module;
    uint32_t index(const std::string& kernel) const { return static_cast<uint32_t>(program->find(kernel)); }
};

inline Built build_host(const std::string& name) {
    Built built;
    built.program = load_program(name);
    if (!built.program) {
        return built;
    }
    std::string log;
    EXPECT_EQ(HostModule::build(built.program, &built.module, &log), ZE_RESULT_SUCCESS) << log;
    return built;
}

inline LaunchGrid grid_1d(uint32_t groups, uint32_t size) {
    LaunchGrid grid;
    grid.group_count = {groups, 1, 1};
    grid.group_size = {size, 1, 1};
    return grid;
}

}  // namespace zehal::compiler::testing
