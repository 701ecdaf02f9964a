#include "textflag.h"

// func kern6x16(k int, a *float32, rs, cs int, b *float32, ldb int, c *float32, ldc int, acc int)
//
// C[0:6, 0:16] (+)= A[0:6, 0:k] B[0:k, 0:16] with A[i,p] at a[i*rs + p*cs],
// B[p, j] at b[p*ldb + j] and C[i, j] at c[i*ldc + j] (strides in
// elements). acc != 0 adds to C, acc == 0 overwrites it.
TEXT ·kern6x16(SB), NOSPLIT, $0-72
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rs+16(FP), R9
	SHLQ $2, R9
	MOVQ cs+24(FP), R11
	SHLQ $2, R11
	MOVQ b+32(FP), DI
	MOVQ ldb+40(FP), R12
	SHLQ $2, R12
	MOVQ c+48(FP), DX
	MOVQ ldc+56(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R9*2), R10
	ADDQ R9, R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	TESTQ CX, CX
	JE    store

loop:
	VMOVUPS      (DI), Y12
	VMOVUPS      32(DI), Y13
	VBROADCASTSS (SI), Y14
	VFMADD231PS  Y12, Y14, Y0
	VFMADD231PS  Y13, Y14, Y1
	VBROADCASTSS (SI)(R9*1), Y15
	VFMADD231PS  Y12, Y15, Y2
	VFMADD231PS  Y13, Y15, Y3
	VBROADCASTSS (SI)(R9*2), Y14
	VFMADD231PS  Y12, Y14, Y4
	VFMADD231PS  Y13, Y14, Y5
	VBROADCASTSS (R10), Y15
	VFMADD231PS  Y12, Y15, Y6
	VFMADD231PS  Y13, Y15, Y7
	VBROADCASTSS (R10)(R9*1), Y14
	VFMADD231PS  Y12, Y14, Y8
	VFMADD231PS  Y13, Y14, Y9
	VBROADCASTSS (R10)(R9*2), Y15
	VFMADD231PS  Y12, Y15, Y10
	VFMADD231PS  Y13, Y15, Y11
	ADDQ         R11, SI
	ADDQ         R11, R10
	ADDQ         R12, DI
	DECQ         CX
	JNZ          loop

store:
	MOVQ  acc+64(FP), AX
	TESTQ AX, AX
	JE    overwrite
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y2, Y2
	VADDPS  32(DX), Y3, Y3
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y4, Y4
	VADDPS  32(DX), Y5, Y5
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y6, Y6
	VADDPS  32(DX), Y7, Y7
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y8, Y8
	VADDPS  32(DX), Y9, Y9
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y10, Y10
	VADDPS  32(DX), Y11, Y11
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	VZEROUPPER
	RET

overwrite:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	VZEROUPPER
	RET

// Constants of expSum, eight copies each: clamps, log2(e), ln(2) split in
// two, the Cephes expf polynomial, 1 and the exponent bias 127.
DATA expc<>+0(SB)/4, $0xc2aeac4f
DATA expc<>+4(SB)/4, $0xc2aeac4f
DATA expc<>+8(SB)/4, $0xc2aeac4f
DATA expc<>+12(SB)/4, $0xc2aeac4f
DATA expc<>+16(SB)/4, $0xc2aeac4f
DATA expc<>+20(SB)/4, $0xc2aeac4f
DATA expc<>+24(SB)/4, $0xc2aeac4f
DATA expc<>+28(SB)/4, $0xc2aeac4f
DATA expc<>+32(SB)/4, $0x42b0999a
DATA expc<>+36(SB)/4, $0x42b0999a
DATA expc<>+40(SB)/4, $0x42b0999a
DATA expc<>+44(SB)/4, $0x42b0999a
DATA expc<>+48(SB)/4, $0x42b0999a
DATA expc<>+52(SB)/4, $0x42b0999a
DATA expc<>+56(SB)/4, $0x42b0999a
DATA expc<>+60(SB)/4, $0x42b0999a
DATA expc<>+64(SB)/4, $0x3fb8aa3b
DATA expc<>+68(SB)/4, $0x3fb8aa3b
DATA expc<>+72(SB)/4, $0x3fb8aa3b
DATA expc<>+76(SB)/4, $0x3fb8aa3b
DATA expc<>+80(SB)/4, $0x3fb8aa3b
DATA expc<>+84(SB)/4, $0x3fb8aa3b
DATA expc<>+88(SB)/4, $0x3fb8aa3b
DATA expc<>+92(SB)/4, $0x3fb8aa3b
DATA expc<>+96(SB)/4, $0x3f318000
DATA expc<>+100(SB)/4, $0x3f318000
DATA expc<>+104(SB)/4, $0x3f318000
DATA expc<>+108(SB)/4, $0x3f318000
DATA expc<>+112(SB)/4, $0x3f318000
DATA expc<>+116(SB)/4, $0x3f318000
DATA expc<>+120(SB)/4, $0x3f318000
DATA expc<>+124(SB)/4, $0x3f318000
DATA expc<>+128(SB)/4, $0xb95e8083
DATA expc<>+132(SB)/4, $0xb95e8083
DATA expc<>+136(SB)/4, $0xb95e8083
DATA expc<>+140(SB)/4, $0xb95e8083
DATA expc<>+144(SB)/4, $0xb95e8083
DATA expc<>+148(SB)/4, $0xb95e8083
DATA expc<>+152(SB)/4, $0xb95e8083
DATA expc<>+156(SB)/4, $0xb95e8083
DATA expc<>+160(SB)/4, $0x39506967
DATA expc<>+164(SB)/4, $0x39506967
DATA expc<>+168(SB)/4, $0x39506967
DATA expc<>+172(SB)/4, $0x39506967
DATA expc<>+176(SB)/4, $0x39506967
DATA expc<>+180(SB)/4, $0x39506967
DATA expc<>+184(SB)/4, $0x39506967
DATA expc<>+188(SB)/4, $0x39506967
DATA expc<>+192(SB)/4, $0x3ab743ce
DATA expc<>+196(SB)/4, $0x3ab743ce
DATA expc<>+200(SB)/4, $0x3ab743ce
DATA expc<>+204(SB)/4, $0x3ab743ce
DATA expc<>+208(SB)/4, $0x3ab743ce
DATA expc<>+212(SB)/4, $0x3ab743ce
DATA expc<>+216(SB)/4, $0x3ab743ce
DATA expc<>+220(SB)/4, $0x3ab743ce
DATA expc<>+224(SB)/4, $0x3c088908
DATA expc<>+228(SB)/4, $0x3c088908
DATA expc<>+232(SB)/4, $0x3c088908
DATA expc<>+236(SB)/4, $0x3c088908
DATA expc<>+240(SB)/4, $0x3c088908
DATA expc<>+244(SB)/4, $0x3c088908
DATA expc<>+248(SB)/4, $0x3c088908
DATA expc<>+252(SB)/4, $0x3c088908
DATA expc<>+256(SB)/4, $0x3d2aa9c1
DATA expc<>+260(SB)/4, $0x3d2aa9c1
DATA expc<>+264(SB)/4, $0x3d2aa9c1
DATA expc<>+268(SB)/4, $0x3d2aa9c1
DATA expc<>+272(SB)/4, $0x3d2aa9c1
DATA expc<>+276(SB)/4, $0x3d2aa9c1
DATA expc<>+280(SB)/4, $0x3d2aa9c1
DATA expc<>+284(SB)/4, $0x3d2aa9c1
DATA expc<>+288(SB)/4, $0x3e2aaaaa
DATA expc<>+292(SB)/4, $0x3e2aaaaa
DATA expc<>+296(SB)/4, $0x3e2aaaaa
DATA expc<>+300(SB)/4, $0x3e2aaaaa
DATA expc<>+304(SB)/4, $0x3e2aaaaa
DATA expc<>+308(SB)/4, $0x3e2aaaaa
DATA expc<>+312(SB)/4, $0x3e2aaaaa
DATA expc<>+316(SB)/4, $0x3e2aaaaa
DATA expc<>+320(SB)/4, $0x3f000000
DATA expc<>+324(SB)/4, $0x3f000000
DATA expc<>+328(SB)/4, $0x3f000000
DATA expc<>+332(SB)/4, $0x3f000000
DATA expc<>+336(SB)/4, $0x3f000000
DATA expc<>+340(SB)/4, $0x3f000000
DATA expc<>+344(SB)/4, $0x3f000000
DATA expc<>+348(SB)/4, $0x3f000000
DATA expc<>+352(SB)/4, $0x3f800000
DATA expc<>+356(SB)/4, $0x3f800000
DATA expc<>+360(SB)/4, $0x3f800000
DATA expc<>+364(SB)/4, $0x3f800000
DATA expc<>+368(SB)/4, $0x3f800000
DATA expc<>+372(SB)/4, $0x3f800000
DATA expc<>+376(SB)/4, $0x3f800000
DATA expc<>+380(SB)/4, $0x3f800000
DATA expc<>+384(SB)/4, $0x0000007f
DATA expc<>+388(SB)/4, $0x0000007f
DATA expc<>+392(SB)/4, $0x0000007f
DATA expc<>+396(SB)/4, $0x0000007f
DATA expc<>+400(SB)/4, $0x0000007f
DATA expc<>+404(SB)/4, $0x0000007f
DATA expc<>+408(SB)/4, $0x0000007f
DATA expc<>+412(SB)/4, $0x0000007f
GLOBL expc<>(SB), RODATA|NOPTR, $416

// func expSum(x *float32, n int, scale, shift float32) float32
//
// x[i] = exp(x[i]*scale - shift) for i < n (a multiple of 8); returns the
// sum of the results.
TEXT ·expSum(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y10
	VBROADCASTSS shift+20(FP), Y11
	VXORPS       Y9, Y9, Y9
	SHRQ         $3, CX
	JZ           done

eloop:
	VMOVUPS      (SI), Y0
	VFMSUB213PS  Y11, Y10, Y0
	VMAXPS       expc<>+0(SB), Y0, Y0
	VMINPS       expc<>+32(SB), Y0, Y0
	VMULPS       expc<>+64(SB), Y0, Y1
	VROUNDPS     $0, Y1, Y1
	VFNMADD231PS expc<>+96(SB), Y1, Y0
	VFNMADD231PS expc<>+128(SB), Y1, Y0
	VMOVUPS      expc<>+160(SB), Y3
	VFMADD213PS  expc<>+192(SB), Y0, Y3
	VFMADD213PS  expc<>+224(SB), Y0, Y3
	VFMADD213PS  expc<>+256(SB), Y0, Y3
	VFMADD213PS  expc<>+288(SB), Y0, Y3
	VFMADD213PS  expc<>+320(SB), Y0, Y3
	VMULPS       Y0, Y0, Y4
	VFMADD213PS  Y0, Y4, Y3
	VADDPS       expc<>+352(SB), Y3, Y3
	VCVTPS2DQ    Y1, Y5
	VPADDD       expc<>+384(SB), Y5, Y5
	VPSLLD       $23, Y5, Y5
	VMULPS       Y5, Y3, Y3
	VMOVUPS      Y3, (SI)
	VADDPS       Y3, Y9, Y9
	ADDQ         $32, SI
	DECQ         CX
	JNZ          eloop

done:
	VEXTRACTF128 $1, Y9, X1
	VADDPS       X1, X9, X9
	VHADDPS      X9, X9, X9
	VHADDPS      X9, X9, X9
	VMOVSS       X9, ret+24(FP)
	VZEROUPPER
	RET

// func maxOf(x *float32, n int) float32
//
// Returns the largest of x[0:n], n a positive multiple of 8.
TEXT ·maxOf(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	ADDQ    $32, SI
	SHRQ    $3, CX
	DECQ    CX
	JZ      mdone

mloop:
	VMAXPS (SI), Y0, Y0
	ADDQ   $32, SI
	DECQ   CX
	JNZ    mloop

mdone:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET

// func scale(x *float32, n int, a float32)
//
// x[i] *= a for i < n, a multiple of 8.
TEXT ·scale(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS a+16(FP), Y1
	SHRQ         $3, CX
	JZ           sdone

sloop:
	VMULPS  (SI), Y1, Y0
	VMOVUPS Y0, (SI)
	ADDQ    $32, SI
	DECQ    CX
	JNZ     sloop

sdone:
	VZEROUPPER
	RET

// func maxSlot(a, z *float32, w *int32, n int, slot int32)
//
// For i < n (a multiple of 8): if z[i] > a[i] { a[i] = z[i]; w[i] = slot }.
TEXT ·maxSlot(SB), NOSPLIT, $0-36
	MOVQ         a+0(FP), DI
	MOVQ         z+8(FP), SI
	MOVQ         w+16(FP), DX
	MOVQ         n+24(FP), CX
	MOVL         slot+32(FP), AX
	VMOVD        AX, X3
	VPBROADCASTD X3, Y3
	SHRQ         $3, CX
	JZ           xdone

xloop:
	VMOVUPS   (DI), Y0
	VMOVUPS   (SI), Y1
	VCMPPS    $0x1e, Y0, Y1, Y2
	VBLENDVPS Y2, Y1, Y0, Y0
	VMOVUPS   Y0, (DI)
	VMOVUPS   (DX), Y4
	VBLENDVPS Y2, Y3, Y4, Y4
	VMOVUPS   Y4, (DX)
	ADDQ      $32, DI
	ADDQ      $32, SI
	ADDQ      $32, DX
	DECQ      CX
	JNZ       xloop

xdone:
	VZEROUPPER
	RET

// func addWhere(d, src *float32, w *int32, n int, slot int32)
//
// For i < n (a multiple of 8): if w[i] == slot { d[i] += src[i] }.
TEXT ·addWhere(SB), NOSPLIT, $0-36
	MOVQ         d+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         w+16(FP), DX
	MOVQ         n+24(FP), CX
	MOVL         slot+32(FP), AX
	VMOVD        AX, X3
	VPBROADCASTD X3, Y3
	SHRQ         $3, CX
	JZ           adone

aloop:
	VPCMPEQD (DX), Y3, Y2
	VANDPS   (SI), Y2, Y1
	VADDPS   (DI), Y1, Y1
	VMOVUPS  Y1, (DI)
	ADDQ     $32, DI
	ADDQ     $32, SI
	ADDQ     $32, DX
	DECQ     CX
	JNZ      aloop

adone:
	VZEROUPPER
	RET
