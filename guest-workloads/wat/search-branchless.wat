;; Binary search without a branch on the keys: the other half of a pair
;; with `search-branchy`, over the same table, the same keys and the same
;; positions (so both return the same result for the same seed).
;;
;; `setup(size)` fills a sorted table of `size` i32 keys (2^20 when size is
;; 0; at most 2^26), key i = 2i + 1. Each of the `count` operations of
;; `run(count, seed)` draws a key in [0, 2·size) from an xorshift64 stream
;; seeded by `seed` and finds its lower bound by halving a window whose base
;; moves with `select` (a conditional move): the loop runs ceil(log2 size)
;; steps for every key, so its only branch is the loop's own, and the time
;; goes to the dependent loads.
(module
  (memory (export "memory") 1)
  ;; Keys in the table (0 until `setup`).
  (global $n (mut i32) (i32.const 0))

  (func (export "setup") (param $size i64)
    (local $len i32) (local $i i32) (local $pages i32)
    (if (i64.eqz (local.get $size)) (then (local.set $size (i64.const 1048576))))
    (if (i64.gt_u (local.get $size) (i64.const 67108864)) (then unreachable))
    (local.set $len (i32.wrap_i64 (local.get $size)))
    (local.set $pages
      (i32.shr_u (i32.add (i32.shl (local.get $len) (i32.const 2)) (i32.const 65535))
                 (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
          (then unreachable))))
    (local.set $i (i32.const 0))
    (block $done
      (loop $fill
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (i32.store (i32.shl (local.get $i) (i32.const 2))
                   (i32.add (i32.shl (local.get $i) (i32.const 1)) (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $fill)))
    (global.set $n (local.get $len)))

  ;; SplitMix64's finaliser: a well-mixed, non-zero xorshift state from `seed`.
  (func $mix (param $z i64) (result i64)
    (local.set $z (i64.add (local.get $z) (i64.const 0x9E3779B97F4A7C15)))
    (local.set $z (i64.mul (i64.xor (local.get $z) (i64.shr_u (local.get $z) (i64.const 30)))
                           (i64.const 0xBF58476D1CE4E5B9)))
    (local.set $z (i64.mul (i64.xor (local.get $z) (i64.shr_u (local.get $z) (i64.const 27)))
                           (i64.const 0x94D049BB133111EB)))
    (i64.or (i64.xor (local.get $z) (i64.shr_u (local.get $z) (i64.const 31))) (i64.const 1)))

  (func (export "run") (param $count i64) (param $seed i64) (result i64)
    (local $x i64) (local $sum i64) (local $key i32) (local $base i32) (local $len i32) (local $half i32)
    (if (i32.eqz (global.get $n)) (then (return (local.get $seed))))
    (local.set $x (call $mix (local.get $seed)))
    (block $done
      (loop $op
        (br_if $done (i64.le_s (local.get $count) (i64.const 0)))
        ;; xorshift64, then a key uniform in [0, 2n).
        (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 13))))
        (local.set $x (i64.xor (local.get $x) (i64.shr_u (local.get $x) (i64.const 7))))
        (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 17))))
        (local.set $key
          (i32.wrap_i64
            (i64.shr_u
              (i64.mul (i64.shr_u (local.get $x) (i64.const 32))
                       (i64.extend_i32_u (i32.shl (global.get $n) (i32.const 1))))
              (i64.const 32))))
        ;; The window [base, base + len) holds the lower bound (len at least 1).
        (local.set $base (i32.const 0))
        (local.set $len (global.get $n))
        (block $narrowed
          (loop $step
            (br_if $narrowed (i32.le_u (local.get $len) (i32.const 1)))
            (local.set $half (i32.shr_u (local.get $len) (i32.const 1)))
            (local.set $base
              (select
                (i32.add (local.get $base) (local.get $half))
                (local.get $base)
                (i32.lt_u
                  (i32.load (i32.shl (i32.add (local.get $base) (local.get $half)) (i32.const 2)))
                  (local.get $key))))
            (local.set $len (i32.sub (local.get $len) (local.get $half)))
            (br $step)))
        ;; The last key left decides between base and base + 1.
        (local.set $base
          (i32.add (local.get $base)
                   (i32.lt_u (i32.load (i32.shl (local.get $base) (i32.const 2))) (local.get $key))))
        (local.set $sum (i64.add (local.get $sum) (i64.extend_i32_u (local.get $base))))
        (local.set $count (i64.sub (local.get $count) (i64.const 1)))
        (br $op)))
    (i64.xor (local.get $sum) (local.get $x))))
