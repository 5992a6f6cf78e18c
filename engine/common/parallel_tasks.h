#pragma once
// Independent tasks over a few threads: each worker takes the next task index until none is left. Results go
// where each task writes them (by its index), so they do not depend on the thread count; the first failure in
// task order is rethrown once every worker has stopped.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

namespace orrery {

inline void run_tasks(size_t count, int threads, const std::function<void(size_t)>& task) {
    std::vector<std::exception_ptr> failed(count);
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i = next++; i < count; i = next++) {
            try {
                task(i);
            } catch (...) {
                failed[i] = std::current_exception();
            }
        }
    };
    std::vector<std::thread> workers;
    const size_t wanted = std::min<size_t>(count, size_t(std::max(1, threads)));
    try {
        for (size_t w = 1; w < wanted; ++w) workers.emplace_back(work);
    } catch (const std::system_error&) {  // a worker that could not start: the others and this thread take its share
    }
    work();
    for (std::thread& t : workers) t.join();
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
}

}  // namespace orrery
