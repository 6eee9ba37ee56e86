// One entry of a stream's queue: a move-only callable kept inline, so that queueing work on a stream (a plan's
// launch) allocates nothing. Every callable a stream takes must fit kInlineBytes: that is checked when the
// code compiles, not when it runs.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace weft {

class StreamTask {
 public:
  static constexpr size_t kInlineBytes = 64;  // a batch of operations and its tickets (two vectors) fit

  StreamTask() = default;
  // Constrained never to take a StreamTask, so the move constructor is never hidden.
  template <typename F>  // NOLINTNEXTLINE(bugprone-forwarding-reference-overload)
  requires(!std::is_same_v<std::decay_t<F>, StreamTask>) explicit StreamTask(F&& f) {
    using Fn = std::decay_t<F>;
    static_assert(sizeof(Fn) <= kInlineBytes, "the stream's work does not fit StreamTask::kInlineBytes");
    static_assert(alignof(Fn) <= alignof(std::max_align_t), "the stream's work is over-aligned");
    static_assert(std::is_nothrow_move_constructible_v<Fn>, "the stream's work must move without throwing");
    new (storage_) Fn(std::forward<F>(f));
    ops_ = &kOps<Fn>;
  }
  StreamTask(StreamTask&& other) noexcept { take(other); }
  StreamTask& operator=(StreamTask&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  StreamTask(const StreamTask&) = delete;
  StreamTask& operator=(const StreamTask&) = delete;
  ~StreamTask() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() { ops_->invoke(storage_); }
  void reset() {
    if (ops_ != nullptr) ops_->destroy(storage_);
    ops_ = nullptr;
  }

 private:
  struct Ops {
    void (*invoke)(void*);
    void (*destroy)(void*);
    void (*moveTo)(void* from, void* to);  // move-constructs at `to`, then destroys `from`
  };
  template <typename Fn>
  static constexpr Ops kOps = {
      [](void* p) { (*static_cast<Fn*>(p))(); },
      [](void* p) { static_cast<Fn*>(p)->~Fn(); },
      [](void* from, void* to) {
        new (to) Fn(std::move(*static_cast<Fn*>(from)));
        static_cast<Fn*>(from)->~Fn();
      },
  };

  void take(StreamTask& other) noexcept {
    ops_ = other.ops_;
    if (ops_ != nullptr) ops_->moveTo(other.storage_, storage_);
    other.ops_ = nullptr;
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes]{};
  const Ops* ops_ = nullptr;
};

}  // namespace weft
