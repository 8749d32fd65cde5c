// HandleTable: every table draws from one numbering, so a handle names at most one object
// of one kind, ever; lookups tell null, destroyed and other kinds' handles from values never
// given out.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "common/handle_table.hpp"

namespace zehal {
namespace {

struct Apple {};
struct Pear {};

TEST(HandleTable, KindsShareOneNumbering) {
    HandleTable<Apple> apples;
    HandleTable<Pear> pears;
    const uintptr_t a = apples.add(std::make_shared<Apple>());
    const uintptr_t p = pears.add(std::make_shared<Pear>());
    EXPECT_NE(a, p);
    std::shared_ptr<Apple> apple;
    std::shared_ptr<Pear> pear;
    EXPECT_EQ(apples.get(reinterpret_cast<void*>(p), &apple), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(pears.get(reinterpret_cast<void*>(a), &pear), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(pears.remove(reinterpret_cast<void*>(a)), nullptr);  // removes nothing
    ASSERT_EQ(apples.get(reinterpret_cast<void*>(a), &apple), ZE_RESULT_SUCCESS);
    ASSERT_EQ(pears.get(reinterpret_cast<void*>(p), &pear), ZE_RESULT_SUCCESS);
}

TEST(HandleTable, DestroyedNullAndNeverGivenOut) {
    HandleTable<Apple> lenient;  // the C API's answer for values never given out
    HandleTable<Apple> strict(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    const uintptr_t a = lenient.add(std::make_shared<Apple>());
    std::shared_ptr<Apple> out;
    EXPECT_EQ(lenient.get(nullptr, &out), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_NE(lenient.remove(reinterpret_cast<void*>(a)), nullptr);
    EXPECT_EQ(lenient.get(reinterpret_cast<void*>(a), &out), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    const auto never = reinterpret_cast<void*>(~uintptr_t{0});
    EXPECT_EQ(lenient.get(never, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(strict.get(never, &out), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(out, nullptr);
}

TEST(HandleTable, ValuesAreUniqueAcrossThreadsAndTables) {
    HandleTable<Apple> apples;
    HandleTable<Pear> pears;
    constexpr int kEach = 2000;
    std::vector<uintptr_t> a(kEach), p(kEach);
    std::thread ta([&] {
        for (auto& v : a) v = apples.add(std::make_shared<Apple>());
    });
    std::thread tp([&] {
        for (auto& v : p) v = pears.add(std::make_shared<Pear>());
    });
    ta.join();
    tp.join();
    std::vector<uintptr_t> all(a);
    all.insert(all.end(), p.begin(), p.end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}

}  // namespace
}  // namespace zehal
