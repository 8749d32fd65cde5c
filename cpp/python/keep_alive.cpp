#include "python/keep_alive.hpp"

#include <array>
#include <utility>
#include <vector>

namespace zehal::py {
namespace {

// See make_keep_alive().
class OperandKeepAlive {
public:
    OperandKeepAlive(Operands&& operands, std::span<Buffer* const> users, const std::shared_ptr<aml::Dma>& engine) {
        for (Buffer* b : users) {
            if (!b) continue;
            if (inline_count_ < inline_.size())
                inline_[inline_count_++] = b;
            else
                more_.push_back(b);
            b->note_engine(engine);
        }
        // Nothing below throws: the uses and references are taken only now.
        for_each_user([](Buffer* b) { b->add_use(); });
        objects_ = {operands.dst.release().ptr(), operands.src.release().ptr()};
    }
    ~OperandKeepAlive() {
        // The uses first: the references keep the Buffers alive until they are dropped.
        for_each_user([](Buffer* b) { b->drop_use(); });
        defer_release(objects_);
    }
    OperandKeepAlive(const OperandKeepAlive&) = delete;
    OperandKeepAlive& operator=(const OperandKeepAlive&) = delete;

private:
    template <typename F>
    void for_each_user(F f) const {
        for (size_t i = 0; i < inline_count_; ++i) f(inline_[i]);
        for (Buffer* b : more_) f(b);
    }

    std::array<PyObject*, 2> objects_{};  // owned references to the operands
    // The Buffers the command uses: a copy's two inline, a launch's others beside.
    std::array<Buffer*, 2> inline_{};
    size_t inline_count_ = 0;
    std::vector<Buffer*> more_;
};

}  // namespace

aml::Request::KeepAlive make_keep_alive(Operands&& operands, std::span<Buffer* const> users,
                                        const std::shared_ptr<aml::Dma>& engine) {
    return std::make_shared<OperandKeepAlive>(std::move(operands), users, engine);
}

}  // namespace zehal::py
