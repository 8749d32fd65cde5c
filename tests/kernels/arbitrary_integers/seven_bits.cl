// Integers of a width that is no byte multiple (SPIR-V's ArbitraryPrecisionIntegersINTEL):
// seven-bit arithmetic wraps at 128.
kernel void wrap_seven_bits(global uchar* out, uint count) {
    unsigned _BitInt(7) v = 0;
    for (uint i = 0; i < count; ++i) {
        out[i] = (uchar)v;
        v += (unsigned _BitInt(7))37;
    }
}
