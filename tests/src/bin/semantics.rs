//! Point-to-point and collective semantics checked against sequential references
//! computed by every rank for itself. Run through mpcrs-run at any rank count;
//! prints one line per group of checks on rank 0, and exits non-zero naming the
//! first check that failed.

use mpcrs::{Communicator, Op, ValueIndex, ANY_SOURCE, ANY_TAG, PROC_NULL, UNDEFINED};

type Check = Result<(), String>;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!("{}:{}: {}", file!(), line!(), format!($($fmt)+)));
        }
    };
}

fn mpi<T>(r: mpcrs::Result<T>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

/// Deterministic per-(rank, index) values whose sums are exact in f64.
fn val(rank: i32, i: usize) -> f64 {
    (rank as usize + i) as f64
}

/// Above this many ranks, the largest buffers shrink (still past the
/// eager/rendezvous boundary), so that memory per rank stays bounded: at 16,384
/// ranks the full sizes would hold over 10 GiB at once.
const LARGE_JOB: i32 = 4096;

/// Operations moving O(ranks^2) elements in all run up to this many.
const QUADRATIC_MAX: usize = 64_000_000;

fn p2p(c: &Communicator) -> Check {
    let (me, n) = (c.rank(), c.size());
    let next = (me + 1) % n;
    let prev = (me + n - 1) % n;
    let large = n > LARGE_JOB;

    // Ring shift with sendrecv; sizes across the eager/rendezvous boundary.
    for len in [
        0usize,
        1,
        100,
        mpcrs::EAGER_LIMIT / 8,
        mpcrs::EAGER_LIMIT / 8 + 1,
        if large {
            mpcrs::EAGER_LIMIT / 4
        } else {
            40_000
        },
    ] {
        let out: Vec<f64> = (0..len).map(|i| val(me, i)).collect();
        let mut inp = vec![0.0; len];
        let st = mpi(c.sendrecv(&out, next, 3, &mut inp, prev, 3))?;
        ensure!(
            st.source == prev && st.tag == 3 && st.count::<f64>() == len,
            "sendrecv status {st:?}"
        );
        ensure!(
            inp.iter().enumerate().all(|(i, &x)| x == val(prev, i)),
            "sendrecv data len {len}"
        );
    }

    // sendrecv_replace in the other direction.
    let mut buf = [me as i64, -(me as i64)];
    mpi(c.sendrecv_replace(&mut buf, prev, 4, next, 4))?;
    ensure!(
        buf == [next as i64, -(next as i64)],
        "sendrecv_replace got {buf:?}"
    );

    // Non-overtaking: K messages with one tag, alternating eager and rendezvous
    // sizes; the first half is received by receives posted before anything was
    // sent, the second half arrives unexpected and is received afterwards.
    let k_msgs: usize = if large { 6 } else { 24 };
    let big = if large {
        mpcrs::EAGER_LIMIT / 4 + 1
    } else {
        9000
    };
    let len_of = |k: usize| if k.is_multiple_of(3) { big } else { k };
    let msgs: Vec<Vec<u32>> = (0..k_msgs)
        .map(|k| (0..len_of(k)).map(|i| (k * 1_000_000 + i) as u32).collect())
        .collect();
    let mut early: Vec<Vec<u32>> = (0..k_msgs / 2).map(|k| vec![0u32; len_of(k)]).collect();
    mpcrs::scope(|s| -> Check {
        let mut posted = Vec::new();
        for buf in early.iter_mut() {
            posted.push(mpi(c.irecv(s, &mut buf[..], prev, 5))?);
        }
        mpi(c.barrier())?;
        let mut sends = Vec::new();
        for m in &msgs {
            sends.push(mpi(c.isend(s, &m[..], next, 5))?);
        }
        let statuses = mpi(mpcrs::wait_all(posted))?;
        for (k, st) in statuses.iter().enumerate() {
            ensure!(
                st.count::<u32>() == len_of(k),
                "early message {k}: {} elements",
                st.count::<u32>()
            );
        }
        for k in k_msgs / 2..k_msgs {
            let (got, st) = mpi(c.recv_vec::<u32>(prev, 5))?;
            ensure!(
                got.len() == len_of(k) && st.tag == 5,
                "late message {k}: {} elements",
                got.len()
            );
            ensure!(
                got.iter()
                    .enumerate()
                    .all(|(i, &x)| x as usize == k * 1_000_000 + i),
                "late message {k} data"
            );
        }
        mpi(mpcrs::wait_all(sends))?;
        Ok(())
    })?;
    for (k, buf) in early.iter().enumerate() {
        ensure!(
            buf[..len_of(k)]
                .iter()
                .enumerate()
                .all(|(i, &x)| x as usize == k * 1_000_000 + i),
            "early message {k} data"
        );
    }

    // ANY_SOURCE / ANY_TAG: everyone sends to rank 0 with tag = rank.
    if me == 0 {
        let mut seen = vec![false; n as usize];
        seen[0] = true;
        for _ in 1..n {
            let mut v = [0i32];
            let st = mpi(c.recv(&mut v, ANY_SOURCE, ANY_TAG))?;
            ensure!(
                st.source == v[0] && st.tag == v[0],
                "any-source status {st:?} value {}",
                v[0]
            );
            ensure!(!seen[v[0] as usize], "rank {} received twice", v[0]);
            seen[v[0] as usize] = true;
        }
        ensure!(seen.iter().all(|&s| s), "missing any-source senders");
    } else {
        mpi(c.send(&[me], 0, me))?;
    }
    // ANY_TAG above must not see the messages of the next checks.
    mpi(c.barrier())?;

    // Probe then receive a message of unknown size.
    if n > 1 {
        if me == 1 {
            mpi(c.send(&vec![7u16; 333], 0, 77))?;
        }
        if me == 0 {
            let st = mpi(c.probe(1, ANY_TAG))?;
            ensure!(st.tag == 77 && st.count::<u16>() == 333, "probe {st:?}");
            ensure!(mpi(c.iprobe(1, 77))?.is_some(), "iprobe after probe");
            let (v, _) = mpi(c.recv_vec::<u16>(1, 77))?;
            ensure!(v == vec![7u16; 333], "probed message data");
            ensure!(
                mpi(c.iprobe(ANY_SOURCE, 77))?.is_none(),
                "iprobe found a consumed message"
            );
        }
    }

    // PROC_NULL and zero-size messages.
    mpi(c.send::<u8>(&[1, 2, 3], PROC_NULL, 0))?;
    let mut z = [9u8; 4];
    let st = mpi(c.recv(&mut z, PROC_NULL, 0))?;
    ensure!(
        st.source == PROC_NULL && st.count::<u8>() == 0 && z == [9; 4],
        "PROC_NULL receive {st:?}"
    );
    let st = mpi(c.sendrecv::<u8, u8>(&[], next, 8, &mut [], prev, 8))?;
    ensure!(
        st.bytes == 0 && st.source == prev,
        "zero-size status {st:?}"
    );

    // Non-blocking: irecv from up to 16 ranks below, isend to as many above,
    // completed with wait_any / wait_some / wait_all.
    let peers = n.min(16);
    let payload: Vec<i32> = (0..n).map(|d| me * 10_000 + d).collect();
    let mut inbox = vec![[0i32; 1]; peers as usize];
    mpcrs::scope(|s| -> Check {
        let mut recvs = Vec::new();
        for (k, slot) in inbox.iter_mut().enumerate() {
            recvs.push(mpi(c.irecv(s, slot, (me + n - k as i32) % n, 9))?);
        }
        let mut sends = Vec::new();
        for k in 0..peers {
            let d = ((me + k) % n) as usize;
            sends.push(mpi(c.isend(s, &payload[d..d + 1], d as i32, 9))?);
        }
        let mut done = 0;
        if let Some(r) = mpcrs::wait_any(&mut recvs) {
            mpi(r)?;
            done += 1;
        }
        while !recvs.is_empty() {
            done += mpi(mpcrs::wait_some_of(&mut recvs))?.len();
        }
        ensure!(
            done == peers as usize,
            "wait_any/wait_some completed {done} of {peers}"
        );
        mpi(mpcrs::wait_all(sends))?;
        Ok(())
    })?;
    for (k, v) in inbox.iter().enumerate() {
        let src = (me + n - k as i32) % n;
        ensure!(
            v[0] == src * 10_000 + me,
            "isend/irecv from {src}: {}",
            v[0]
        );
    }

    // Synchronous send: completes only once the receive has matched. The receiver
    // posts late and tells the sender when; the sender's return must come after.
    if n > 1 && me < 2 {
        if me == 0 {
            mpi(c.ssend(&[0u8], 1, 10))?;
            let returned = mpcrs::wtime();
            let mut posted = [0f64];
            mpi(c.recv(&mut posted, 1, 12))?;
            ensure!(
                returned >= posted[0],
                "ssend returned before the receive was posted"
            );
        } else {
            mpcrs_sleep_ms(5);
            let posted = mpcrs::wtime();
            let mut v = [0u8];
            mpi(c.recv(&mut v, 0, 10))?;
            mpi(c.send(&[posted], 0, 12))?;
        }
    }

    // Truncation reported under ERRORS_RETURN.
    c.set_error_handler(mpcrs::ErrorHandler::Return);
    mpi(c.send(&[1u8, 2, 3, 4], me, 11))?;
    let mut small = [0u8; 2];
    let err = c.recv(&mut small, me, 11).unwrap_err();
    ensure!(
        err.class == mpcrs::ErrorClass::Truncate,
        "truncation gave {err}"
    );
    let err = c.send(&[0u8], n, 0).unwrap_err();
    ensure!(
        err.class == mpcrs::ErrorClass::Rank && err.call == "MPI_Send",
        "bad rank gave {err}"
    );
    let err = c.send(&[0u8], 0, -5).unwrap_err();
    ensure!(err.class == mpcrs::ErrorClass::Tag, "bad tag gave {err}");
    c.set_error_handler(mpcrs::ErrorHandler::Fatal);
    Ok(())
}

fn mpcrs_sleep_ms(ms: u64) {
    // Blocks this rank only: the scheduler runs the worker's other ranks meanwhile.
    mpcrs::sleep(std::time::Duration::from_millis(ms));
}

fn collectives(c: &Communicator) -> Check {
    let (me, n) = (c.rank(), c.size());
    let nu = n as usize;
    mpi(c.barrier())?;

    let bulk = if n > LARGE_JOB { 600 } else { 5000 };
    for count in [1usize, 3, bulk] {
        let send: Vec<f64> = (0..count).map(|i| val(me, i)).collect();
        // Closed forms of the sequential results: sum_r (r + i) and max_r (r + i).
        let nf = n as f64;
        let sum_ref: Vec<f64> = (0..count)
            .map(|i| nf * (nf - 1.0) / 2.0 + nf * i as f64)
            .collect();
        let max_ref: Vec<f64> = (0..count).map(|i| val(n - 1, i)).collect();

        // bcast from the last rank
        let mut b = if me == n - 1 {
            send.clone()
        } else {
            vec![0.0; count]
        };
        mpi(c.broadcast(&mut b, n - 1))?;
        ensure!(
            b.iter().enumerate().all(|(i, &x)| x == val(n - 1, i)),
            "bcast count {count}"
        );

        let mut out = vec![0.0; count];
        mpi(c.all_reduce(&send, &mut out, &Op::Sum))?;
        ensure!(out == sum_ref, "allreduce sum count {count}");
        let mut inplace = send.clone();
        mpi(c.all_reduce_in_place(&mut inplace, &Op::Max))?;
        ensure!(inplace == max_ref, "allreduce max in place count {count}");

        let root = n / 2;
        let mut r = vec![0.0; count];
        mpi(c.reduce(&send, (me == root).then_some(&mut r[..]), &Op::Sum, root))?;
        if me == root {
            ensure!(r == sum_ref, "reduce count {count}");
        }

        // scan / exscan with integer sums (exact)
        let isend: Vec<i64> = (0..count)
            .map(|i| (me as i64 + 1) * (i as i64 + 1))
            .collect();
        let mut sc = vec![0i64; count];
        mpi(c.scan(&isend, &mut sc, &Op::Sum))?;
        let tri = |r: i64| r * (r + 1) / 2;
        ensure!(
            sc.iter()
                .enumerate()
                .all(|(i, &x)| x == tri(me as i64 + 1) * (i as i64 + 1)),
            "scan count {count}"
        );
        let mut ex = vec![-1i64; count];
        mpi(c.exscan(&isend, &mut ex, &Op::Sum))?;
        if me == 0 {
            ensure!(ex.iter().all(|&x| x == -1), "exscan touched rank 0");
        } else {
            ensure!(
                ex.iter()
                    .enumerate()
                    .all(|(i, &x)| x == tri(me as i64) * (i as i64 + 1)),
                "exscan count {count}"
            );
        }

        // reduce_scatter_block: every rank contributes size*count, gets its block.
        // O(ranks^2) elements in all: bounded, as the data movement below.
        if nu * count <= 200_000 && nu * nu * count <= QUADRATIC_MAX {
            let big: Vec<i64> = (0..nu * count).map(|j| me as i64 + j as i64).collect();
            let mut mine = vec![0i64; count];
            mpi(c.reduce_scatter_block(&big, &mut mine, &Op::Sum))?;
            let base = n as i64 * (n as i64 - 1) / 2;
            ensure!(
                mine.iter()
                    .enumerate()
                    .all(|(i, &x)| x == base + n as i64 * (me as usize * count + i) as i64),
                "reduce_scatter_block count {count}: got {:?}",
                &mine[..mine.len().min(4)]
            );
        }
    }

    // Non-commutative user op: composition of affine maps v -> m*v + c keeps rank
    // order (odd ranks double, so any other order gives another map).
    let compose = |x: [i64; 2], y: [i64; 2]| {
        // x then y: y(x(v))
        [
            x[0].wrapping_mul(y[0]),
            y[0].wrapping_mul(x[1]).wrapping_add(y[1]),
        ]
    };
    let op = Op::user::<[i64; 2]>(false, move |a, b| {
        for (y, x) in b.iter_mut().zip(a) {
            *y = compose(*x, *y);
        }
    });
    let map_of = |r: i32| [1 + (r % 2) as i64, r as i64];
    let mine = [map_of(me)];
    let mut all = [[0i64; 2]];
    mpi(c.all_reduce(&mine, &mut all, &op))?;
    let in_order = (1..n).fold(map_of(0), |acc, r| compose(acc, map_of(r)));
    ensure!(
        all[0] == in_order,
        "user op result {:?}, rank order gives {in_order:?}",
        all[0]
    );
    let root = n / 2;
    let mut at_root = [[0i64; 2]];
    mpi(c.reduce(&mine, (me == root).then_some(&mut at_root[..]), &op, root))?;
    ensure!(
        me != root || at_root[0] == in_order,
        "user op reduce to {root}: {:?}, rank order gives {in_order:?}",
        at_root[0]
    );

    // MINLOC / MAXLOC
    let pair = [ValueIndex {
        value: ((me * 7) % n) as f64,
        index: me,
    }];
    let mut lo = [ValueIndex::default()];
    mpi(c.all_reduce(&pair, &mut lo, &Op::MinLoc))?;
    ensure!(lo[0].value == 0.0 && lo[0].index == 0, "minloc {:?}", lo[0]);
    let mut hi = [ValueIndex::default()];
    mpi(c.all_reduce(&pair, &mut hi, &Op::MaxLoc))?;
    let vmax = (0..n).map(|r| (r * 7) % n).max().unwrap();
    let imax = (0..n).find(|r| (r * 7) % n == vmax).unwrap();
    ensure!(
        hi[0].value == vmax as f64 && hi[0].index == imax,
        "maxloc {:?}",
        hi[0]
    );

    // Data movement: gather, scatter, allgather, alltoall and their v-variants.
    for block in [1usize, 3, 700] {
        if nu * nu * block > 8_000_000 {
            continue;
        }
        let mine: Vec<i32> = (0..block).map(|i| me * 1000 + i as i32).collect();
        let expect_all: Vec<i32> = (0..n)
            .flat_map(|r| (0..block).map(move |i| r * 1000 + i as i32))
            .collect();
        let root = n - 1;
        let mut g = vec![0i32; nu * block];
        mpi(c.gather(&mine, (me == root).then_some(&mut g[..]), root))?;
        if me == root {
            ensure!(g == expect_all, "gather block {block}");
        }
        let mut sc = vec![0i32; block];
        mpi(c.scatter((me == root).then_some(&expect_all[..]), &mut sc, root))?;
        ensure!(sc == mine, "scatter block {block}");
        let mut ag = vec![0i32; nu * block];
        mpi(c.all_gather(&mine, &mut ag))?;
        ensure!(ag == expect_all, "allgather block {block}");

        let a2a_send: Vec<i32> = (0..n)
            .flat_map(|d| (0..block).map(move |i| me * 100_000 + d * 100 + i as i32))
            .collect();
        let mut a2a = vec![0i32; nu * block];
        mpi(c.all_to_all(&a2a_send, &mut a2a))?;
        let a2a_ref: Vec<i32> = (0..n)
            .flat_map(|s| (0..block).map(move |i| s * 100_000 + me * 100 + i as i32))
            .collect();
        ensure!(a2a == a2a_ref, "alltoall block {block}");

        // v-variants: rank r contributes r % 3 + block elements; displacements reversed.
        let cnt = |r: i32| (r % 3) as usize + block;
        let counts: Vec<usize> = (0..n).map(cnt).collect();
        let total: usize = counts.iter().sum();
        let mut displs = vec![0usize; nu];
        let mut off = 0;
        for r in (0..nu).rev() {
            displs[r] = off;
            off += counts[r];
        }
        let vmine: Vec<i32> = (0..cnt(me)).map(|i| me * 1000 + i as i32).collect();
        let mut vref = vec![0i32; total];
        for r in 0..n {
            for i in 0..cnt(r) {
                vref[displs[r as usize] + i] = r * 1000 + i as i32;
            }
        }
        let mut gv = vec![0i32; total];
        mpi(c.gather_varcount(
            &vmine,
            (me == 0).then_some((&mut gv[..], &counts[..], &displs[..])),
            0,
        ))?;
        if me == 0 {
            ensure!(gv == vref, "gatherv block {block}");
        }
        let mut sv = vec![0i32; cnt(me)];
        mpi(c.scatter_varcount(
            (me == 0).then_some((&vref[..], &counts[..], &displs[..])),
            &mut sv,
            0,
        ))?;
        ensure!(sv == vmine, "scatterv block {block}");
        let mut agv = vec![0i32; total];
        mpi(c.all_gather_varcount(&vmine, &mut agv, &counts, &displs))?;
        ensure!(agv == vref, "allgatherv block {block}");

        // alltoallv: rank s sends (s + d) % 2 + 1 elements to d.
        let sc_of = |s: i32, d: i32| ((s + d) % 2 + 1) as usize;
        let scounts: Vec<usize> = (0..n).map(|d| sc_of(me, d)).collect();
        let sdispls: Vec<usize> = scounts
            .iter()
            .scan(0, |a, &x| {
                let d = *a;
                *a += x;
                Some(d)
            })
            .collect();
        let sendv: Vec<i32> = (0..n)
            .flat_map(|d| (0..sc_of(me, d)).map(move |i| me * 1000 + d * 10 + i as i32))
            .collect();
        let rcounts: Vec<usize> = (0..n).map(|s| sc_of(s, me)).collect();
        let rdispls: Vec<usize> = rcounts
            .iter()
            .scan(0, |a, &x| {
                let d = *a;
                *a += x;
                Some(d)
            })
            .collect();
        let mut recvv = vec![0i32; rcounts.iter().sum()];
        mpi(c.all_to_all_varcount(&sendv, &scounts, &sdispls, &mut recvv, &rcounts, &rdispls))?;
        let refv: Vec<i32> = (0..n)
            .flat_map(|s| (0..sc_of(s, me)).map(move |i| s * 1000 + me * 10 + i as i32))
            .collect();
        ensure!(recvv == refv, "alltoallv block {block}");
    }

    // reduce_scatter with uneven counts (1.5 x ranks elements per rank)
    if nu * nu * 3 / 2 > QUADRATIC_MAX {
        return Ok(());
    }
    let counts: Vec<usize> = (0..nu).map(|r| r % 2 + 1).collect();
    let total: usize = counts.iter().sum();
    let send: Vec<i32> = (0..total).map(|j| j as i32 + me).collect();
    let mut mine = vec![0i32; counts[me as usize]];
    mpi(c.reduce_scatter(&send, &mut mine, &counts, &Op::Sum))?;
    let off: usize = counts[..me as usize].iter().sum();
    let base = n * (n - 1) / 2;
    ensure!(
        mine.iter()
            .enumerate()
            .all(|(i, &x)| x == (off + i) as i32 * n + base),
        "reduce_scatter uneven"
    );
    Ok(())
}

fn communicators(world: &Communicator) -> Check {
    let (me, n) = (world.rank(), world.size());
    let dup = mpi(world.dup())?;
    ensure!(dup.rank() == me && dup.size() == n, "dup shape");
    ensure!(
        dup.compare(world) == mpcrs::Comparison::Congruent,
        "dup compare"
    );
    ensure!(
        world.compare(world) == mpcrs::Comparison::Identical,
        "self compare"
    );
    // Traffic on the dup does not match traffic on world.
    let next = (me + 1) % n;
    let prev = (me + n - 1) % n;
    mpcrs::scope(|s| -> Check {
        let a = mpi(world.isend(s, &[1i32], next, 0))?;
        let b = mpi(dup.isend(s, &[2i32], next, 0))?;
        let mut x = [0i32];
        mpi(dup.recv(&mut x, prev, 0))?;
        ensure!(x[0] == 2, "dup received world's message");
        mpi(world.recv(&mut x, prev, 0))?;
        ensure!(x[0] == 1, "world received dup's message");
        mpi(a.wait())?;
        mpi(b.wait())?;
        Ok(())
    })?;

    // split: parity colours, reversed key order; every third rank opts out.
    let color = if me % 3 == 2 { None } else { Some(me % 2) };
    let sub = mpi(world.split(color, -me))?;
    match (color, sub) {
        (None, None) => {}
        (Some(col), Some(sub)) => {
            let members: Vec<i32> = (0..n)
                .filter(|r| r % 3 != 2 && r % 2 == col)
                .rev()
                .collect();
            ensure!(sub.size() as usize == members.len(), "split size");
            ensure!(members[sub.rank() as usize] == me, "split order");
            ensure!(sub.group().members() == &members[..], "split group");
            // Collectives on the sub-communicator.
            let mut s = [0i64];
            mpi(sub.all_reduce(&[me as i64], &mut s, &Op::Sum))?;
            ensure!(
                s[0] == members.iter().map(|&m| m as i64).sum::<i64>(),
                "allreduce on split"
            );
            collectives(&sub)?;
            // split of split
            let halves = mpi(sub.split(Some(sub.rank() % 2), 0))?.expect("member");
            mpi(halves.barrier())?;
        }
        (c, s) => ensure!(
            false,
            "split colour {c:?} got communicator: {}",
            s.is_some()
        ),
    }

    // Evens then odds: members of one process are not consecutive ranks here
    // when processes hold blocks of world ranks.
    let mixed = mpi(world.split(Some(0), (me % 2) * n + me))?.expect("member");
    ensure!(
        mixed.rank()
            == if me % 2 == 0 {
                me / 2
            } else {
                (n + 1) / 2 + me / 2
            },
        "evens-then-odds order"
    );
    collectives(&mixed)?;

    // create from a group: the even world ranks, in reverse order.
    let g = world.group();
    let evens: Vec<i32> = (0..n).filter(|r| r % 2 == 0).rev().collect();
    let eg = g.incl(&evens).expect("valid ranks");
    let ec = mpi(world.create(&eg))?;
    ensure!(ec.is_some() == (me % 2 == 0), "create membership");
    if let Some(ec) = ec {
        ensure!(ec.group() == eg, "create group order");
        mpi(ec.barrier())?;
    }
    let selfc = world.self_comm();
    ensure!(selfc.size() == 1 && selfc.rank() == 0, "self comm");
    let mut v = [me];
    mpi(selfc.broadcast(&mut v, 0))?;
    let _ = UNDEFINED;
    Ok(())
}

fn main() -> std::process::ExitCode {
    mpcrs::run(|world| -> Result<(), String> {
        let t0 = std::cell::Cell::new(mpcrs::wtime());
        let report = |what: &str| {
            if world.rank() == 0 {
                let now = mpcrs::wtime();
                let rss = std::fs::read_to_string("/proc/self/status")
                    .ok()
                    .and_then(|st| {
                        st.lines()
                            .find(|l| l.starts_with("VmHWM:"))
                            .map(|l| l[6..].trim().to_string())
                    })
                    .unwrap_or_default();
                println!(
                    "ok {what} (ranks {}, {:.2} s, peak rss {rss})",
                    world.size(),
                    now - t0.get()
                );
                t0.set(now);
            }
        };
        if std::env::var("SKIP_P2P").is_err() {
            p2p(&world)?;
        }
        report("point-to-point");
        collectives(&world)?;
        report("collectives");
        communicators(&world)?;
        report("communicators");
        mpi(world.barrier())?;
        Ok(())
    })
}
