//! L3 encoding: the two Reed-Solomon crates on a group of G images of 4 MiB
//! each (G data shards, G parity shards: any half of the group can be lost),
//! for G = 4 and 8. Throughput is in bytes of images encoded.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const SHARD: usize = 4 << 20;

fn images(g: usize) -> Vec<Vec<u8>> {
    (0..g)
        .map(|i| (0..SHARD).map(|b| (b * 131 + i * 7) as u8).collect())
        .collect()
}

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("l3-encode");
    for g in [4usize, 8] {
        let data = images(g);
        group.throughput(Throughput::Bytes((g * SHARD) as u64));
        group.bench_with_input(
            BenchmarkId::new("reed-solomon-simd", g),
            &data,
            |b, data| {
                let mut enc = reed_solomon_simd::ReedSolomonEncoder::new(g, g, SHARD).unwrap();
                b.iter(|| {
                    for d in data {
                        enc.add_original_shard(d).unwrap();
                    }
                    let r = enc.encode().unwrap();
                    r.recovery_iter().map(|s| s[0] as usize).sum::<usize>()
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("reed-solomon-erasure", g),
            &data,
            |b, data| {
                let rs = reed_solomon_erasure::galois_8::ReedSolomon::new(g, g).unwrap();
                let mut shards: Vec<Vec<u8>> = data.clone();
                shards.extend((0..g).map(|_| vec![0u8; SHARD]));
                b.iter(|| {
                    rs.encode(&mut shards).unwrap();
                    shards[g][0]
                })
            },
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = encode
}
criterion_main!(benches);
