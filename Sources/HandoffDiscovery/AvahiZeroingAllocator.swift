#if os(Linux)
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Makes every allocation of the Avahi libraries zero-filled, working around a crash in Avahi's
/// dns_sd compatibility library before 0.9.
///
/// Avahi 0.8's `sdref_new` allocates the `DNSServiceRef` with `malloc` and sets only the callback
/// of the call that created it. When the avahi-daemon goes away, its `generic_client_callback`
/// calls the first non-NULL callback field, so for a `DNSServiceResolve` or
/// `DNSServiceQueryRecord` ref it can call an uninitialized one and crash the process
/// (observed here as SIGSEGV in `DNSServiceProcessResult` on an avahi-daemon restart; fixed
/// upstream by avahi/avahi pull request 569, which zeroes that memory).
///
/// The fix here is the same: `avahi_set_allocator` (libavahi-common, loaded with libdns_sd) is
/// given libc's allocator with `malloc` replaced by `calloc`. Memory allocated before the switch
/// is still freed by libc's `free`, so installing it late is harmless, and nothing changes where
/// the symbol does not exist (macOS, or an mDNSResponder-based libdns_sd on Linux).
enum AvahiZeroingAllocator {
    private typealias Malloc = @convention(c) (Int) -> UnsafeMutableRawPointer?
    private typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void
    private typealias Realloc = @convention(c) (UnsafeMutableRawPointer?, Int) -> UnsafeMutableRawPointer?
    private typealias Calloc = @convention(c) (Int, Int) -> UnsafeMutableRawPointer?
    private typealias SetAllocator = @convention(c) (UnsafeRawPointer?) -> Void

    /// Whether the allocator was installed; evaluated once, thread-safely, on first use.
    private static let isInstalled: Bool = install()

    /// Installs the allocator if that has not happened yet. Call before creating a ref.
    static func installIfNeeded() {
        _ = isInstalled
    }

    private static func install() -> Bool {
        // RTLD_DEFAULT (a null handle): search the libraries already loaded into the process.
        guard let symbol = dlsym(nil, "avahi_set_allocator") else { return false }
        let setAllocator = unsafeBitCast(symbol, to: SetAllocator.self)
        // An AvahiAllocator: { malloc, free, realloc, calloc }. Avahi keeps the pointer, so the
        // table is never freed.
        let slot = MemoryLayout<UnsafeRawPointer>.stride
        let table = UnsafeMutableRawPointer.allocate(byteCount: 4 * slot, alignment: slot)
        let zeroingMalloc: Malloc = { size in calloc(1, size) }
        let libcFree: Free = { pointer in free(pointer) }
        let libcRealloc: Realloc = { pointer, size in realloc(pointer, size) }
        let libcCalloc: Calloc = { count, size in calloc(count, size) }
        table.storeBytes(of: zeroingMalloc, toByteOffset: 0, as: Malloc.self)
        table.storeBytes(of: libcFree, toByteOffset: slot, as: Free.self)
        table.storeBytes(of: libcRealloc, toByteOffset: 2 * slot, as: Realloc.self)
        table.storeBytes(of: libcCalloc, toByteOffset: 3 * slot, as: Calloc.self)
        setAllocator(UnsafeRawPointer(table))
        return true
    }
}
#endif
