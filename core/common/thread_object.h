// A per-thread object reached through a plain thread_local pointer, made at the thread's first use and
// freed at its exit.
//
// Why not a thread_local object: one with a constructor or destructor is guarded, and inside a shared
// library every access to a thread_local is a call to __tls_get_addr, so each use of the object cost two
// calls (guard, then object) where a pointer costs one; a small Send/Recv made about 30 of them, a tenth
// of its instructions.
#pragma once

#include <memory>

#include "core/common/fast_tls.h"

namespace weft {

template <typename T>
class ThreadObject {
 public:
  static T& get() {
    T* object = pointer;
    if (object == nullptr) [[unlikely]]
      object = make();
    return *object;
  }
  // Null until this thread's first get().
  static T* ifMade() { return pointer; }

 private:
  struct Owner {
    std::unique_ptr<T> object;
    ~Owner() { pointer = nullptr; }  // a use after the thread's destructors ran makes a new one
  };
  static T* make() {
    owner.object = std::make_unique<T>();
    pointer = owner.object.get();
    return pointer;
  }
  static inline thread_local T* pointer WEFT_FAST_TLS = nullptr;  // constant-initialized: no guard
  static inline thread_local Owner owner;                         // touched only by make()
};

}  // namespace weft
