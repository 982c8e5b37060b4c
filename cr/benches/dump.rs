//! The dumper's costs as a function of resident memory: the application stall
//! (reading the mappings and the fork, `start_dump`) and a whole durable dump.
//! Run: cargo bench -p mpcrs-cr --bench dump

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use mpcrs_cr::start_dump;

fn resident(mib: usize) -> Vec<u64> {
    // Non-zero contents, so that every page is stored.
    (0..mib * 131_072).map(|i| i as u64 | 1).collect()
}

fn dump(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("mpcrs-bench-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let img = dir.join("bench.img");
    let mut g = c.benchmark_group("dump");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for mib in [64usize, 512] {
        let data = resident(mib);
        g.bench_with_input(BenchmarkId::new("stall", mib), &mib, |b, _| {
            b.iter_custom(|iters| {
                let mut stalled = Duration::ZERO;
                for _ in 0..iters {
                    let started = Instant::now();
                    let pending = start_dump(&img, Default::default())
                        .unwrap()
                        .into_pending()
                        .unwrap();
                    stalled += started.elapsed();
                    pending.wait().unwrap();
                }
                stalled
            })
        });
        g.bench_with_input(BenchmarkId::new("durable", mib), &mib, |b, _| {
            b.iter(|| {
                start_dump(&img, Default::default())
                    .unwrap()
                    .into_pending()
                    .unwrap()
                    .wait()
                    .unwrap()
            })
        });
        std::hint::black_box(&data);
    }
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, dump);
criterion_main!(benches);
