// weft CPU kernels — run-time ISA dispatch for weft's own loops.
//
// The plugin is compiled for baseline x86-64 (SSE2) so that one binary runs on any x86-64; the
// hot loops (element-wise, activation, reduction, softmax, pooling, optimizer updates) are also
// compiled for AVX2+FMA and AVX-512 and the variant is chosen when the plugin loads:
//
//   isa::Dispatch([&] { loop... });
//
// instantiates the lambda once per level the build has (three by default; one in a
// WEFT_CPU_ISA_COPIES=host build, see below), inside functions carrying GCC's target attribute for each
// ISA and `flatten`, so that the lambda and everything it calls inline into each variant and are
// vectorised for that ISA. Only those wrappers carry the target attribute: an inline helper
// (vector_math.h, the drivers) keeps its one baseline out-of-line copy, so no AVX instruction can
// leak into code that runs on an older CPU (the trap of compiling whole translation units per ISA).
//
// Choice: the highest level the CPU and OS support (CPUID through __builtin_cpu_supports, which
// also checks that the OS saves the wider registers), limited by WEFT_CPU_ISA = baseline | avx2 |
// avx512 (read from the environment when the plugin loads; a level above the machine's is
// lowered to it, an unknown name is ignored with a warning on stderr). The limit is a ceiling:
// with WEFT_CPU_ISA=avx2 the process behaves as on a machine without AVX-512, the test hook
// included (this is how the test suite runs the AVX2 path on an AVX-512 machine). Results of the variants
// agree to float rounding: FMA contraction (a*b+c rounded once) is the only difference, and only
// where a loop has a multiply feeding an add (sanitizer builds: baseline only, see CMakeLists.txt).
#pragma once

#include <atomic>
#include <string>

// The levels this build compiles loops for: from WEFT_CPU_ISA_MIN_LEVEL up to WEFT_CPU_ISA_MAX_LEVEL,
// every level (0..2, three copies) unless the build asks for fewer. CMake's WEFT_CPU_ISA_COPIES=host
// compiles only the configuring machine's own level (both set to it): one copy instead of two or
// three. Supported() never reports more than the maximum, so a machine above it runs the highest
// copy the build has; a machine below the minimum cannot run the build's loops at all, and
// MachineShortfall() says so and the plugin refuses to load.
#ifndef WEFT_CPU_ISA_MAX_LEVEL
#define WEFT_CPU_ISA_MAX_LEVEL 2
#endif
#ifndef WEFT_CPU_ISA_MIN_LEVEL
#define WEFT_CPU_ISA_MIN_LEVEL 0
#endif
#if WEFT_CPU_ISA_MIN_LEVEL > WEFT_CPU_ISA_MAX_LEVEL || WEFT_CPU_ISA_MIN_LEVEL < 0 || WEFT_CPU_ISA_MAX_LEVEL > 2
#error "WEFT_CPU_ISA_MIN_LEVEL and WEFT_CPU_ISA_MAX_LEVEL must satisfy 0 <= min <= max <= 2"
#endif

namespace weft::cpu::isa {

/// Instruction-set levels of the dispatched loops, in increasing order.
enum class Level : int {
  kBaseline = 0,  // x86-64 (SSE2); also every non-x86 build
  kAvx2 = 1,      // AVX2 + FMA (Haswell, Zen 1 and later)
  kAvx512 = 2,    // AVX-512 F/BW/DQ/VL (Skylake-SP, Ice Lake, Zen 4 and later)
};

/// "baseline", "avx2" or "avx512".
const char* Name(Level level);

/// The highest level this machine supports that the build has loops for (WEFT_CPU_ISA_MAX_LEVEL).
/// Below Minimum() when the machine cannot run this build's loops. Thread-safe.
Level Supported();

/// The lowest level this build has loops for (WEFT_CPU_ISA_MIN_LEVEL): kBaseline unless built
/// with WEFT_CPU_ISA_COPIES=host on a machine with AVX2 or more.
constexpr Level Minimum() { return static_cast<Level>(WEFT_CPU_ISA_MIN_LEVEL); }

/// Empty when this machine runs the build's loops; otherwise a one-line error naming the level
/// the build needs, the machine's, and the fix. The cpu plugin refuses to load on a non-empty
/// answer (MakeKernelTable), before any loop runs. Thread-safe.
std::string MachineShortfall();
/// The same for a machine whose highest level is `machine`.
std::string MachineShortfall(Level machine);

/// The highest level the dispatched loops may use: Supported() lowered to WEFT_CPU_ISA (read
/// once, when first asked), but never below Minimum() (a lower WEFT_CPU_ISA is raised to it, with
/// a warning on stderr). Thread-safe.
Level Ceiling();

/// The level the dispatched loops use now. Thread-safe (one relaxed atomic load).
inline Level Active();

/// Test hook: makes `level` active when it lies in [Minimum(), Ceiling()] and returns true; returns
/// false (changing nothing) outside it. Not for production code: a kernel running concurrently may use
/// either level for its current call.
bool SetActiveForTesting(Level level);

namespace detail {
std::atomic<int>& ActiveSlot();  // initialised from CPUID and WEFT_CPU_ISA at load

template <typename F>
[[gnu::flatten]] void RunBaseline(const F& f) {
  f();
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(WEFT_CPU_ISA_BASELINE_ONLY) && WEFT_CPU_ISA_MAX_LEVEL >= 1
template <typename F>
[[gnu::target("avx2,fma,bmi,bmi2,f16c,lzcnt,movbe,popcnt"), gnu::flatten]] void RunAvx2(const F& f) {
  f();
}
#if WEFT_CPU_ISA_MAX_LEVEL >= 2
// prefer-vector-width=512: GCC's generic tuning would otherwise keep AVX-512 code at 256 bits.
template <typename F>
[[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,avx512cd,avx2,fma,bmi,bmi2,f16c,lzcnt,movbe,popcnt,"
              "prefer-vector-width=512"),
  gnu::flatten]] void
RunAvx512(const F& f) {
  f();
}
#endif
#define WEFT_CPU_ISA_DISPATCH 1
#endif
}  // namespace detail

inline Level Active() { return static_cast<Level>(detail::ActiveSlot().load(std::memory_order_relaxed)); }

/// Runs f() (a callable taking no arguments) in the variant compiled for Active(). Exceptions
/// from f propagate.
template <typename F>
inline void Dispatch(const F& f) {
#if WEFT_CPU_ISA_MIN_LEVEL >= 1 && !defined(WEFT_CPU_ISA_DISPATCH)
#error "WEFT_CPU_ISA_MIN_LEVEL >= 1 needs the x86-64 GCC dispatch (and no WEFT_CPU_ISA_BASELINE_ONLY)"
#endif
  // A build without the lower copies never instantiates them: Active() is never below Minimum().
#if WEFT_CPU_ISA_MIN_LEVEL == 2
  detail::RunAvx512(f);
#elif WEFT_CPU_ISA_MIN_LEVEL == 1
#if WEFT_CPU_ISA_MAX_LEVEL >= 2
  if (Active() == Level::kAvx512) return detail::RunAvx512(f);
#endif
  detail::RunAvx2(f);
#else
#ifdef WEFT_CPU_ISA_DISPATCH
  switch (Active()) {
    case Level::kAvx512:
#if WEFT_CPU_ISA_MAX_LEVEL >= 2
      return detail::RunAvx512(f);
#else
      [[fallthrough]];
#endif
    case Level::kAvx2:
      return detail::RunAvx2(f);
    case Level::kBaseline:
      break;
  }
#endif
  detail::RunBaseline(f);
#endif
}

}  // namespace weft::cpu::isa
