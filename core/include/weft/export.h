// weft — symbol visibility of libweft's public API.
//
// libweft is compiled with hidden visibility (-fvisibility=hidden -fvisibility-inlines-hidden):
// only what a public header marks WEFT_API is in the library's dynamic symbol table, so the
// internal namespaces (weft::exec, weft::graph, weft::kv, *_detail, ...) are not part of the ABI
// and cannot clash with a user's symbols. tests/loader/exports_test.cc keeps it so.
//
//   class WEFT_API NDArray { ... };        // a class: its members, vtable and typeinfo
//   WEFT_API Symbol LoadCheckpoint(...);   // a free function
//
// Static builds of the core modules (used by weft's own tests) see the same attributes; they
// only matter for the shared library.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define WEFT_API __attribute__((visibility("default")))
#define WEFT_HIDDEN __attribute__((visibility("hidden")))
#else
#define WEFT_API
#define WEFT_HIDDEN
#endif
