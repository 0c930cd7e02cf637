/*
 * P-256 field and scalar multiplication for CPUs with BMI2 and ADX, compiled
 * with -mbmi2 -madx (p256_level.c calls it only when the CPU has both).
 *
 * The Montgomery schedule is p256_mont.h's. MULX takes its operand in RDX
 * and leaves the flags alone, so with it gcc interleaves each row's
 * multiplications with the carry chain of the previous ones. Written with
 * _mulx_u64 / _addcarryx_u64 intrinsics and two explicit chains (ADCX on the
 * low halves, ADOX on the high ones), gcc 12 did not keep the two chains: it
 * spilled the carries through SETC and ran at half the speed of the portable
 * code (sotls-bench-pk), so this level is the compiler's MULX code of the
 * same schedule. A hand-scheduled ADCX/ADOX multiplication (inline assembly)
 * is what would take it further.
 */
#include "p256_mont.h"

#define P256_LEVEL_NAME mulx
#include "p256_point_impl.h"
