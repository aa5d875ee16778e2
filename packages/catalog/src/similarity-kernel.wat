(module
  ;; The similarity pass of hybrid search (similarity-kernel.ts). Compile with
  ;; `node scripts/build-kernel.mjs` (wabt), which writes similarity-kernel-bytes.ts.
  (memory (export "memory") 1)
    ;; out[r] = sum over d of q[d] * m[r * dims + d]: q int16 at $q, m int8 rows at $m,
  ;; out int32 at $out; dims a multiple of 32. WebAssembly SIMD: 32 products a step.
  (func (export "dotRows") (param $q i32) (param $m i32) (param $rows i32) (param $dims i32) (param $out i32)
    (local $r i32) (local $d i32) (local $row i32) (local $a v128) (local $b v128) (local $v v128) (local $w v128) (local $qd i32)
    (local.set $row (local.get $m))
    (block $done (loop $rowsLoop
      (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
      (local.set $a (v128.const i32x4 0 0 0 0))
      (local.set $b (v128.const i32x4 0 0 0 0))
      (local.set $d (i32.const 0))
      (block $end (loop $inner
        (br_if $end (i32.ge_u (local.get $d) (local.get $dims)))
        (local.set $v (v128.load (i32.add (local.get $row) (local.get $d))))
        (local.set $w (v128.load offset=16 (i32.add (local.get $row) (local.get $d))))
        (local.set $qd (i32.add (local.get $q) (i32.shl (local.get $d) (i32.const 1))))
        (local.set $a (i32x4.add (local.get $a) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (v128.load (local.get $qd)))))
        (local.set $b (i32x4.add (local.get $b) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (v128.load offset=16 (local.get $qd)))))
        (local.set $a (i32x4.add (local.get $a) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $w)) (v128.load offset=32 (local.get $qd)))))
        (local.set $b (i32x4.add (local.get $b) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $w)) (v128.load offset=48 (local.get $qd)))))
        (local.set $d (i32.add (local.get $d) (i32.const 32)))
        (br $inner)))
      (local.set $a (i32x4.add (local.get $a) (local.get $b)))
      (i32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
        (i32.add (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
                 (i32.add (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a)))))
      (local.set $row (i32.add (local.get $row) (local.get $dims)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $rowsLoop))))
)
