// hlsgen_stream.h: a C-simulation model of hls::stream for plain C++14 compilers without vendor headers
// (hlsgen's own code). Simulation support only, never synthesized: like the vendor model it queues
// values in a std::deque, unbounded, and a read from an empty stream is an error (it aborts, naming the
// stream, where hardware would stall forever).
#ifndef HLSGEN_STREAM_H
#define HLSGEN_STREAM_H

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <deque>

namespace hls {

template <typename T>
class stream {
  public:
    stream() : name_("(unnamed)") {}
    explicit stream(const char* name) : name_(name) {}
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;

    void write(const T& value) { queue_.push_back(value); }
    T read() {
        if (queue_.empty()) {
            std::fprintf(stderr, "hlsgen_stream: read from empty stream '%s'\n", name_);
            std::abort();
        }
        T value = queue_.front();
        queue_.pop_front();
        return value;
    }
    void read(T& value) { value = read(); }
    bool empty() const { return queue_.empty(); }
    bool full() const { return false; }
    std::size_t size() const { return queue_.size(); }

  private:
    std::deque<T> queue_;
    const char* name_;
};

}  // namespace hls

#endif  // HLSGEN_STREAM_H
