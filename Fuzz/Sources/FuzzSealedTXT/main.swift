// libFuzzer's driver with this target's LLVMFuzzerTestOneInput (see FuzzSupport.runLibFuzzer).
import FuzzSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

exit(runLibFuzzer(fuzzSealedTXT))
