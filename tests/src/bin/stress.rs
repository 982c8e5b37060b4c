//! Stress: every rank sends its share of `total` messages of random sizes (0 B to
//! `max` bytes, log-uniform) and random tags to random ranks; receivers take them
//! with ANY_SOURCE/ANY_TAG and verify every byte and the order per (source, tag).
//! Usage: stress [total] [max_bytes] [seed]

use std::collections::HashMap;

use mpcrs::{Communicator, ANY_SOURCE, ANY_TAG};

const TAGS: i32 = 8;

/// xorshift64*: the same plan on every run for a seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn byte(src: i32, tag: i32, seq: u64, i: usize) -> u8 {
    let x = (src as u64) << 40 ^ (tag as u64) << 32 ^ seq.wrapping_mul(0x9e37_79b9) ^ i as u64;
    (x ^ (x >> 7) ^ (x >> 13)) as u8
}

fn payload(src: i32, tag: i32, seq: u64, len: usize) -> Vec<u8> {
    let mut v: Vec<u8> = (0..len).map(|i| byte(src, tag, seq, i)).collect();
    if len >= 8 {
        v[..8].copy_from_slice(&seq.to_le_bytes());
    }
    v
}

fn verify(src: i32, tag: i32, expect_seq: u64, data: &[u8]) -> Result<(), String> {
    if data.len() >= 8 {
        let seq = u64::from_le_bytes(data[..8].try_into().unwrap());
        if seq != expect_seq {
            return Err(format!(
                "from {src} tag {tag}: message {seq} arrived when {expect_seq} was due"
            ));
        }
    }
    let start = if data.len() >= 8 { 8 } else { 0 };
    for (i, &b) in data.iter().enumerate().skip(start) {
        if b != byte(src, tag, expect_seq, i) {
            return Err(format!(
                "from {src} tag {tag} message {expect_seq}: byte {i} corrupted"
            ));
        }
    }
    Ok(())
}

fn run(c: &Communicator, total: usize, max: usize, seed: u64) -> Result<usize, String> {
    let (me, n) = (c.rank(), c.size());
    let mine = total / n as usize + usize::from((me as usize) < total % n as usize);
    let mut rng = Rng(seed ^ (me as u64 + 1).wrapping_mul(0x1234_5678_9abc_def1));
    let max_log = (max.max(1) as f64).log2();
    let plan: Vec<(i32, i32, usize)> = (0..mine)
        .map(|_| {
            let dst = (rng.next() % n as u64) as i32;
            let tag = (rng.next() % TAGS as u64) as i32;
            let r = rng.next() % 1000;
            let len = if r < 20 {
                0
            } else {
                (2f64.powf((rng.next() % 10_000) as f64 / 10_000.0 * max_log)) as usize
            };
            (dst, tag, len.min(max))
        })
        .collect();
    // How many messages each rank will receive.
    let mut out_counts = vec![0u64; n as usize];
    for &(d, _, _) in &plan {
        out_counts[d as usize] += 1;
    }
    let mut in_counts = vec![0u64; n as usize];
    c.all_to_all(&out_counts, &mut in_counts)
        .map_err(|e| e.to_string())?;
    let mut to_receive: u64 = in_counts.iter().sum();
    let mut next_in: HashMap<(i32, i32), u64> = HashMap::new();
    let mut next_out: HashMap<(i32, i32), u64> = HashMap::new();
    let mut bytes = 0usize;

    let mut receive_one = |to_receive: &mut u64| -> Result<bool, String> {
        if *to_receive == 0 {
            return Ok(false);
        }
        let Some(st) = c.iprobe(ANY_SOURCE, ANY_TAG).map_err(|e| e.to_string())? else {
            return Ok(false);
        };
        let (data, st2) = c
            .recv_vec::<u8>(st.source, st.tag)
            .map_err(|e| e.to_string())?;
        let seq = next_in.entry((st2.source, st2.tag)).or_insert(0);
        verify(st2.source, st2.tag, *seq, &data)?;
        *seq += 1;
        *to_receive -= 1;
        bytes += data.len();
        Ok(true)
    };

    for batch in plan.chunks(8) {
        let payloads: Vec<Vec<u8>> = batch
            .iter()
            .map(|&(d, tag, len)| {
                let seq = next_out.entry((d, tag)).or_insert(0);
                let p = payload(me, tag, *seq, len);
                *seq += 1;
                p
            })
            .collect();
        mpcrs::scope(|s| -> Result<(), String> {
            let mut reqs = Vec::new();
            for (p, &(d, tag, _)) in payloads.iter().zip(batch) {
                reqs.push(c.isend(s, p, d, tag).map_err(|e| e.to_string())?);
            }
            // Keep receiving while our sends are in flight: nobody waits on a
            // receiver that is itself waiting.
            while !reqs.iter().all(|r| r.is_complete()) {
                if !receive_one(&mut to_receive)? {
                    mpcrs::yield_now();
                }
            }
            mpcrs::wait_all(reqs).map_err(|e| e.to_string())?;
            Ok(())
        })?;
    }
    while to_receive > 0 {
        if !receive_one(&mut to_receive)? {
            mpcrs::yield_now();
        }
    }
    c.barrier().map_err(|e| e.to_string())?;
    Ok(bytes)
}

fn main() -> std::process::ExitCode {
    let mut a = std::env::args().skip(1);
    let total: usize = a.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let max: usize = a.next().and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let seed: u64 = a.next().and_then(|s| s.parse().ok()).unwrap_or(42);
    mpcrs::run(|world| -> Result<(), String> {
        let t0 = mpcrs::wtime();
        let bytes = run(&world, total, max, seed)?;
        let mut sum = [0u64];
        world
            .reduce(
                &[bytes as u64],
                (world.rank() == 0).then_some(&mut sum[..]),
                &mpcrs::Op::Sum,
                0,
            )
            .map_err(|e| e.to_string())?;
        if world.rank() == 0 {
            println!(
                "stress ok: {total} messages, {} bytes verified, {:.2} s",
                sum[0],
                mpcrs::wtime() - t0
            );
        }
        Ok(())
    })
}
