// SPSC byte ring throughput for 32-byte records beside a mutex-protected ring.
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "benchmarks.hpp"
#include "common/spsc_ring.hpp"
#include "hal/trace_record.hpp"

namespace zehal::bench {
namespace {

using Record = hal::TraceRecord;
constexpr size_t kRecord = sizeof(Record);
constexpr size_t kRingBytes = 1u << 20;
constexpr size_t kBatchRecords = 256;

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Record make_record(uint64_t i) {
    return Record{1, static_cast<uint16_t>(kRecord), 0, i, i, 0xFFFFFFFFu, static_cast<uint32_t>(i)};
}

// The classic baseline: a bounded ring under one mutex, one record per lock.
class MutexRing {
public:
    explicit MutexRing(size_t records) : slots_(records) {}
    bool push(const Record& r) {
        std::lock_guard lock(mu_);
        if (count_ == slots_.size()) return false;
        slots_[(head_ + count_) % slots_.size()] = r;
        ++count_;
        return true;
    }
    bool pop(Record* r) {
        std::lock_guard lock(mu_);
        if (count_ == 0) return false;
        *r = slots_[head_];
        head_ = (head_ + 1) % slots_.size();
        --count_;
        return true;
    }

private:
    std::mutex mu_;
    std::vector<Record> slots_;
    size_t head_ = 0;
    size_t count_ = 0;
};

// Records/s moving `n` records through `produce`/`consume` on two threads; the consumer
// checks every sequence number, so a broken ring cannot report a rate.
template <typename Produce, typename Consume>
double run_pair(uint64_t n, Produce produce, Consume consume) {
    const auto t0 = std::chrono::steady_clock::now();
    std::thread producer([&] { produce(n); });
    const bool ok = consume(n);
    producer.join();
    const double s = seconds_since(t0);
    return ok ? static_cast<double>(n) / s : 0.0;
}

double spsc_batched(uint64_t n) {
    SpscByteRing ring(kRingBytes);
    return run_pair(
        n,
        [&](uint64_t total) {
            uint64_t i = 0;
            while (i < total) {
                RingRegions r = ring.reserve(kRecord);
                // Records never straddle the wrap: positions and capacity are multiples of 32.
                size_t fit = std::min<uint64_t>({r.first.size() / kRecord, kBatchRecords, total - i});
                if (fit == 0) {
                    std::this_thread::yield();
                    continue;
                }
                auto* out = reinterpret_cast<Record*>(r.first.data());
                for (size_t k = 0; k < fit; ++k) out[k] = make_record(i + k);
                ring.commit(fit * kRecord);
                i += fit;
            }
        },
        [&](uint64_t total) {
            uint64_t i = 0;
            bool ok = true;
            while (i < total) {
                RingRegions r = ring.peek(kRecord);
                const size_t have = r.first.size() / kRecord;
                if (have == 0) {
                    std::this_thread::yield();
                    continue;
                }
                const auto* in = reinterpret_cast<const Record*>(r.first.data());
                for (size_t k = 0; k < have; ++k) ok &= in[k].ticks == i + k;
                ring.release(have * kRecord);
                i += have;
            }
            return ok;
        });
}

double spsc_single(uint64_t n) {
    SpscByteRing ring(kRingBytes);
    return run_pair(
        n,
        [&](uint64_t total) {
            for (uint64_t i = 0; i < total;) {
                const Record rec = make_record(i);
                if (ring.try_push(&rec, kRecord)) ++i;
            }
        },
        [&](uint64_t total) {
            bool ok = true;
            Record rec;
            for (uint64_t i = 0; i < total;) {
                if (ring.pop(&rec, kRecord, kRecord) == kRecord) ok &= rec.ticks == i++;
            }
            return ok;
        });
}

double mutex_single(uint64_t n) {
    MutexRing ring(kRingBytes / kRecord);
    return run_pair(
        n,
        [&](uint64_t total) {
            for (uint64_t i = 0; i < total;) {
                if (ring.push(make_record(i))) ++i;
            }
        },
        [&](uint64_t total) {
            bool ok = true;
            Record rec;
            for (uint64_t i = 0; i < total;) {
                if (ring.pop(&rec)) ok &= rec.ticks == i++;
            }
            return ok;
        });
}

Row rate_row(const std::string& name, double value, const std::string& unit, double baseline) {
    Row row;
    row.suite = "ring";
    row.name = name;
    row.value = value;
    row.unit = unit;
    row.baseline = baseline;
    row.baseline_name = "mutex ring, 1 record per lock";
    row.ratio = baseline > 0 ? value / baseline : 0;
    return row;
}

}  // namespace

std::vector<Row> ring_throughput(const Options& options) {
    const uint64_t n = options.quick ? 1'000'000 : 40'000'000;
    const uint64_t n_slow = options.quick ? 200'000 : 4'000'000;
    // The best of a few runs of each, interleaved, so a busy moment hurts none of them alone.
    double batched = 0, single = 0, mutexed = 0;
    for (int rep = 0; rep < (options.quick ? 1 : 3); ++rep) {
        batched = std::max(batched, spsc_batched(n));
        single = std::max(single, spsc_single(n_slow));
        mutexed = std::max(mutexed, mutex_single(n_slow));
    }
    std::vector<Row> rows;
    rows.push_back(rate_row("spsc batched, 32 B records", batched / 1e6, "Mrec/s", mutexed / 1e6));
    rows.push_back(rate_row("spsc batched, 32 B records", batched * kRecord / 1e9, "GB/s", mutexed * kRecord / 1e9));
    rows.push_back(rate_row("spsc 1 record per commit, 32 B records", single / 1e6, "Mrec/s", mutexed / 1e6));
    return rows;
}

}  // namespace zehal::bench
