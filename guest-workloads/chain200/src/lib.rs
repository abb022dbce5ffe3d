//! `count` ops, each a dependent chain of exactly 200 steps of
//! `x = (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9` on a state carried across ops
//! (seeded by `seed`, returned). `chain200` and `chain201` differ only in
//! `STEPS`: their work per op differs by exactly 0.5%. The code is in
//! `../../shared/chain.rs`.
#![no_std]

const STEPS: u32 = 200;

include!("../../shared/chain.rs");
