/* weft SDK — version of the plugin C ABI.
 *
 * The SDK version is independent of the core (libweft) version. Rules:
 *   MAJOR changes break binary compatibility: a host and a plugin with different majors never load
 *         each other.
 *   MINOR changes are append-only: new fields go at the end of structs (found through struct_size),
 *         new function pointers go at the end of tables. A plugin built against 2.x loads in every
 *         host 2.y; fields newer than the plugin are absent and read as NULL / unsupported.
 *   PATCH changes only documentation or fix header mistakes that do not change the layout.
 * Negotiation is two-sided (see plugin.h): never an exact-version match.
 *
 * History:
 *   1.0  first release (synchronous-first device model, host-memory C++ helpers).
 *   2.0  device-neutral asynchronous model: stream-ordered kernels completed by events, stream
 *        and event creation with flags, native handles for operator plugins (host.h
 *        native_handle), error objects plugins can read and release, kernel_data instead of
 *        per-object globals, strided tensors, device kind / PCI bus id / allocation limits in
 *        the properties, a transport ABI fit for NCCL and Gloo (streams, completion callbacks,
 *        groups, thread-safe communicators, a parameter-server request loop). Layouts of 1.0
 *        structs changed, hence the new major.
 *   2.1  sparse storage for kernels (operator.h): WEFT_STYPE_* codes; weft_kernel_def.storage_types
 *        and infer_storage let a kernel claim row_sparse / csr arrays; weft_kernel_state_args and
 *        weft_kernel_args carry each slot's storage type, weft_kernel_args the inputs' aux arrays
 *        and a host call that allocates a sparse output. Appended fields only: a 2.0 plugin's
 *        kernels stay dense and never see a sparse array.
 */
#ifndef WEFT_SDK_VERSION_H_
#define WEFT_SDK_VERSION_H_

#define WEFT_SDK_VERSION_MAJOR 2
#define WEFT_SDK_VERSION_MINOR 1
#define WEFT_SDK_VERSION_PATCH 0

/* Packs (major, minor) into one comparable integer: 2.1 -> 0x00020001. */
#define WEFT_SDK_MAKE_VERSION(major, minor) ((((unsigned)(major)) << 16) | ((unsigned)(minor)&0xffffu))
#define WEFT_SDK_VERSION_MAJOR_OF(v) (((unsigned)(v)) >> 16)
#define WEFT_SDK_VERSION_MINOR_OF(v) (((unsigned)(v)) & 0xffffu)
#define WEFT_SDK_VERSION WEFT_SDK_MAKE_VERSION(WEFT_SDK_VERSION_MAJOR, WEFT_SDK_VERSION_MINOR)

#endif /* WEFT_SDK_VERSION_H_ */
