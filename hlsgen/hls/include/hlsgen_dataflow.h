// hlsgen_dataflow.h: two processes of a dataflow region that hand each other tokens (hlsgen's own code).
// Under synthesis, HLSGEN_PROCESSES(a, b) is the two calls of the region and hlsgen::channel<T, DEPTH> is
// hls::stream<T, DEPTH>. C simulation cannot run the calls one after the other as written: each process
// waits for tokens the other sends later, so the second would never start. There, as Vitis's C simulation
// runs hls::tasks, the two calls run on two threads and a channel is a bounded FIFO whose read blocks while
// it is empty and whose write blocks while it holds DEPTH values. A wait that can never end (every running
// process blocked, or a read with no process left to write) aborts naming the channel, where hardware would
// hang; so does a channel destroyed with tokens in it (a token sent that nobody read).
#ifndef HLSGEN_DATAFLOW_H
#define HLSGEN_DATAFLOW_H

#ifdef __SYNTHESIS__
#include <hls_stream.h>

namespace hlsgen {
template <typename T, int DEPTH>
using channel = hls::stream<T, DEPTH>;
}  // namespace hlsgen

#define HLSGEN_PROCESSES(first, second) \
    first;                              \
    second

#else
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

namespace hlsgen {

// What every channel's wait looks at: how many processes run and how many of them wait. `epoch` counts
// the changes that may end a wait (a value written or read, a process finished); each one wakes every
// waiter, which counts itself blocked again only if its own channel still cannot go on.
struct Processes {
    std::mutex lock;
    std::condition_variable changed;
    int running = 0;
    int blocked = 0;
    unsigned long epoch = 0;

    static Processes& all() {
        static Processes processes;
        return processes;
    }

    void notify() {  // with `lock` held
        epoch++;
        blocked = 0;
        changed.notify_all();
    }
};

template <typename T, int DEPTH>
class channel {
  public:
    explicit channel(const char* name) : name_(name) {}
    channel(const channel&) = delete;
    channel& operator=(const channel&) = delete;
    ~channel() {
        if (!queue_.empty()) {
            std::fprintf(stderr, "hlsgen_dataflow: %zu token(s) left in channel '%s': sent, never read\n",
                         queue_.size(), name_);
            std::abort();
        }
    }

    void write(const T& value) {
        Processes& p = Processes::all();
        std::unique_lock<std::mutex> held(p.lock);
        wait_while(held, [this] { return queue_.size() >= static_cast<std::size_t>(DEPTH); }, "write to full");
        queue_.push_back(value);
        p.notify();
    }

    T read() {
        Processes& p = Processes::all();
        std::unique_lock<std::mutex> held(p.lock);
        wait_while(held, [this] { return queue_.empty(); }, "read from empty");
        T value = queue_.front();
        queue_.pop_front();
        p.notify();
        return value;
    }

  private:
    template <typename Blocked>
    void wait_while(std::unique_lock<std::mutex>& held, Blocked blocked, const char* what) {
        Processes& p = Processes::all();
        while (blocked()) {
            if (p.blocked + 1 >= p.running) {  // every other process waits too (or none is left): no one can end this wait
                std::fprintf(stderr, "hlsgen_dataflow: deadlock: %s channel '%s'\n", what, name_);
                std::abort();
            }
            p.blocked++;
            const unsigned long epoch = p.epoch;
            p.changed.wait(held, [&p, epoch] { return p.epoch != epoch; });
        }
    }

    std::deque<T> queue_;
    const char* name_;
};

// Run `first` on a thread of its own and `second` on this one, both counted as running, until both return.
template <typename First, typename Second>
void run_processes(First first, Second second) {
    Processes& p = Processes::all();
    {
        std::lock_guard<std::mutex> held(p.lock);
        p.running += 2;
    }
    auto finish = [&p] {
        std::lock_guard<std::mutex> held(p.lock);
        p.running--;
        p.notify();
    };
    std::thread thread([&first, &finish] {
        first();
        finish();
    });
    second();
    finish();
    thread.join();
}

}  // namespace hlsgen

#define HLSGEN_PROCESSES(first, second) hlsgen::run_processes([&] { first; }, [&] { second; })

#endif  // __SYNTHESIS__

#endif  // HLSGEN_DATAFLOW_H
