/* A harness fix for running analyst.exe under Debian 12's Wine 8.0, never
   shipped: Rust's standard library (1.78 and later) asks Windows for random
   bytes through ProcessPrng in bcryptprimitives.dll, which Windows 10 and
   later have and that Wine 8.0 lacks. This DLL, put beside analyst.exe by
   tests/dist/windows.rs, answers it through RtlGenRandom (SystemFunction036
   in advapi32), which Wine has.
   Built with: x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll
   bcryptprimitives.c -ladvapi32 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
