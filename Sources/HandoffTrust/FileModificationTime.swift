#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension stat {
    /// When the file's contents last changed, to the nanosecond: `st_mtim` in glibc and musl,
    /// `st_mtimespec` on Darwin. Read it here rather than by either name, so that the code that
    /// needs it (``FileResumeKey``, the download directory's sweep of old partial files) builds on
    /// both.
    public var modificationTime: timespec {
        #if canImport(Darwin)
        st_mtimespec
        #else
        st_mtim
        #endif
    }
}
