// WEFT_FAST_TLS: the initial-exec TLS model, for the few pointer-sized thread_locals every call reads.
//
// In a shared library the default model makes each access a call to __tls_get_addr (about ten instructions
// and a look at the thread's TLS table); initial-exec is one load relative to the thread pointer. A library
// loaded with dlopen (Python's ctypes, a framework's extension) gets such variables from the static TLS
// space glibc keeps spare for exactly this (rtld.optional_static_tls, 512 bytes by default): the variables
// marked here take a few pointers of it. Larger thread_locals keep the default model.
#pragma once

#define WEFT_FAST_TLS __attribute__((tls_model("initial-exec")))
