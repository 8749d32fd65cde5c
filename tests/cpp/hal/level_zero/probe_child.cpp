// Prints the level_zero backend's status as the registry sees it: "available <devices>" or
// "unavailable <reason>". Run by level_zero_backend_test with the loader or the driver
// taken away through the environment.
#include <cstdio>

#include "hal/registry.hpp"

int main() {
    for (const zehal::hal::BackendStatus& b : zehal::hal::backends()) {
        if (b.name != "level_zero") continue;
        if (b.available)
            std::printf("available %zu\n", b.backend->devices().size());
        else
            std::printf("unavailable %s\n", b.reason.c_str());
        return 0;
    }
    std::printf("missing\n");
    return 1;
}
