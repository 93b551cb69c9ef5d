/* A stand-in for Windows' bcryptprimitives.dll, which Wine 8 (Debian 12's)
 * lacks: Rust's std imports ProcessPrng from it for its hash maps' keys.
 * It forwards to RtlGenRandom (advapi32's SystemFunction036), which Wine
 * has. Built with mingw and placed next to the test binaries by run.sh;
 * used only to run the tests under Wine, never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
