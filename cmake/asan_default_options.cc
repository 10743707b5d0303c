// Linked into every executable of a build with -fsanitize=address (cmake/WeftSanitizers.cmake):
// AddressSanitizer reads these defaults before ASAN_OPTIONS, which still overrides each key.
//
// intercept_tls_get_addr=0: GCC 12's sanitizer runtime (LLVM 14's sanitizer_common) guesses the
// extent of every dynamic TLS block it sees through __tls_get_addr. When a block starts 16 bytes
// past a page boundary it takes the 16 bytes before it for the header of glibc 2.19's
// __signal_safe_memalign and reads start and size from there. Since glibc 2.25 dynamic TLS is
// plain malloc memory, so those bytes are ASan's own chunk header: the guessed range is garbage
// ({0x163b, 0x2400001102} for libdnnl.so.2's 36-byte block, issue 27) and LeakSanitizer's scan
// of it dies with "Tracer caught signal 11". Whether a block lands there depends on the heap
// layout (the environment's size, the ISA paths oneDNN takes), so it failed on some machines and
// under ctest only. LLVM fixed the guess in 2023 (google/sanitizers issue 1409: ask the
// allocator instead); GCC 12 predates that. Without the interception LeakSanitizer still finds
// dynamic TLS blocks: they are heap chunks reachable from each thread's DTV, which glibc keeps in
// the thread control block that LeakSanitizer scans with the static TLS.
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() { return "intercept_tls_get_addr=0"; }
