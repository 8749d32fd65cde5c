// The public C++ API after Level Zero's own header (the other order is each header alone,
// then Level Zero's through zehal/ze_result.h when it is on the include path).
#include <level_zero/ze_api.h>

#include <zehal/zehal.hpp>

#include <type_traits>

static_assert(std::is_same_v<decltype(zehal::Error(ZE_RESULT_SUCCESS, "").code()), ze_result_t>);
